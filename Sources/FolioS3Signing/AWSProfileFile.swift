import FolioSupport
import Foundation

/// An AWS shared credentials or config file: sections of `key = value` lines.
///
/// `[name]` and `[profile name]` both name profile `name` (the config file's form, and the
/// credentials file's); lines starting with `#` or `;` are comments, and so is the rest of a
/// line from a `#` or `;` that follows a space; a value in matching double or single quotes
/// loses them; an indented line under `key =` is a sub-property, read as `key.sub`
/// (`s3 =` / `  addressing_style = path` is `s3.addressing_style`).
package struct AWSProfileFile: Sendable, Equatable {
    /// Properties by profile name.
    package var profiles: [String: [String: String]] = [:]

    package init(profiles: [String: [String: String]] = [:]) { self.profiles = profiles }

    /// Parses the text of a file.
    package init(text: String) {
        var section: String?
        var parent: String?
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = Self.stripComment(String(raw))
            let content = line.trimmingCharacters(in: .whitespaces)
            if content.isEmpty { continue }
            if content.hasPrefix("[") {
                section = Self.sectionName(content)
                parent = nil
                if let section, profiles[section] == nil { profiles[section] = [:] }
                continue
            }
            guard let section, let eq = content.firstIndex(of: "=") else { continue }
            let key = content[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
            let value = Self.unquoted(content[content.index(after: eq)...].trimmingCharacters(in: .whitespaces))
            let indented = raw.first == " " || raw.first == "\t"
            if indented, let parent {
                profiles[section]![parent + "." + key] = value
            } else {
                profiles[section]![key] = value
                parent = value.isEmpty ? key : nil
            }
        }
    }

    /// The profile name a section header stands for: `[profile dev]` and `[dev]` → `dev`.
    private static func sectionName(_ header: String) -> String? {
        guard let close = header.firstIndex(of: "]") else { return nil }
        let inner = header[header.index(after: header.startIndex)..<close].trimmingCharacters(in: .whitespaces)
        if inner.hasPrefix("profile ") || inner.hasPrefix("profile\t") {
            return String(inner.dropFirst(8)).trimmingCharacters(in: .whitespaces)
        }
        return inner.isEmpty ? nil : inner
    }

    /// The line without a full-line comment or a comment after whitespace.
    private static func stripComment(_ line: String) -> String {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        if trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { return "" }
        var previous: Character = "x"
        for (offset, c) in line.enumerated() {
            if (c == "#" || c == ";") && (previous == " " || previous == "\t") { return String(line.prefix(offset)) }
            previous = c
        }
        return line
    }

    private static func unquoted(_ v: String) -> String {
        guard v.count >= 2, let first = v.first, first == "\"" || first == "'", v.last == first else { return v }
        return String(v.dropFirst().dropLast())
    }
}

/// One profile of the AWS CLI's shared files, as the environment names them
/// (`AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`, `AWS_PROFILE`, else `~/.aws/…` and
/// `default`): a setting from the credentials file first, then from the config file. Read when
/// made, so a later load sees the files as they are then (rotated credentials included).
struct AWSSharedFiles {
    let profile: String
    let credentialsPath: String
    let configPath: String
    private let fromCredentials: [String: String]
    private let fromConfig: [String: String]

    init(environment env: [String: String]) {
        let home = env["HOME"] ?? NSHomeDirectory()
        credentialsPath = env["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"
        configPath = env["AWS_CONFIG_FILE"] ?? home + "/.aws/config"
        profile = env["AWS_PROFILE"] ?? env["AWS_DEFAULT_PROFILE"] ?? "default"
        fromCredentials = Self.read(credentialsPath, profile)
        fromConfig = Self.read(configPath, profile)
    }

    /// The profile's value for `key`, the credentials file's first; nil when empty or absent.
    func value(_ key: String) -> String? { Self.nonEmpty(fromCredentials[key]) ?? Self.nonEmpty(fromConfig[key]) }

    /// Which file `value(key)` comes from, in words: "profile 'ci' of /home/u/.aws/credentials".
    func source(of key: String) -> String? {
        if Self.nonEmpty(fromCredentials[key]) != nil { return "profile '\(profile)' of \(credentialsPath)" }
        if Self.nonEmpty(fromConfig[key]) != nil { return "profile '\(profile)' of \(configPath)" }
        return nil
    }

    private static func read(_ path: String, _ name: String) -> [String: String] {
        guard let bytes = try? FileIO.read(path) else { return [:] }
        return AWSProfileFile(text: String(decoding: bytes, as: UTF8.self)).profiles[name] ?? [:]
    }

    private static func nonEmpty(_ s: String?) -> String? { s?.isEmpty == false ? s : nil }
}
