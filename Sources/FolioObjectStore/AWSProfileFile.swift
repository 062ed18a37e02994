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
