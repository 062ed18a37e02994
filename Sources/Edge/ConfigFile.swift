import ArgumentParser
import FolioBuilder
import FolioPlist
import FolioSupport
import Foundation

/// `--config FILE`: a TOML file whose keys are folio-edge's long options, with the same values
/// (`port = 443`, `root = "/srv/folio"`, `tls-cert = ["a.pem"]` for a repeatable option,
/// `access-log = false` for a flag). The file becomes arguments placed before the command
/// line's, and a key the command line also gives is left out: the command line overrides it.
struct ConfigFile {
    /// What a key takes: the option's value type.
    enum Kind: Equatable {
        case string, integer, number, list
        case flag(invertible: Bool)
    }

    /// A problem with the file, at `path:line:column`.
    struct Problem: Error, CustomStringConvertible {
        var path: String
        var line: Int
        var column: Int
        var message: String
        var description: String { "\(path):\(line):\(column): \(message)" }
    }

    /// Problems found reading the file, all of them.
    struct Problems: Error, CustomStringConvertible {
        var all: [Problem]
        var description: String { all.map(\.description).joined(separator: "\n") }
    }

    let path: String
    let bytes: [UInt8]
    /// Each key the file sets, in the order of the file, with its arguments.
    private(set) var entries: [(key: String, arguments: [String])] = []

    /// Reads and checks the whole file; every problem is in the error.
    init(path: String) throws {
        self.path = path
        do { bytes = try FileIO.read(path) } catch {
            throw Problems(all: [Problem(path: path, line: 1, column: 1, message: "cannot read the config file: \(error)")])
        }
        let value: PlistValue
        do { value = try StructuredReader.read(bytes, format: .toml) } catch {
            throw Problems(all: [Problem(path: path, line: error.line, column: error.column, message: error.message)])
        }
        guard case .dict(let table) = value else { throw Problems(all: [problem("", "the file must be a TOML table of KEY = VALUE lines")]) }
        var problems: [Problem] = []
        for (key, value) in table.sorted(by: { position($0.key) < position($1.key) }) {
            do { entries.append((key, try Self.arguments(key, value))) } catch { problems.append(problem(key, error.text)) }
        }
        if !problems.isEmpty { throw Problems(all: problems) }
    }

    private struct Message: Error { var text: String }

    /// The key's position in the file: (line, column).
    func position(_ key: String) -> (Int, Int) {
        let at = StructuredReader.locate(StructuredReader.pointer([key]), in: bytes, format: .toml)
        return (at?.line ?? 1, at?.column ?? 1)
    }

    func problem(_ key: String, _ message: String) -> Problem {
        let (line, column) = position(key)
        return Problem(path: path, line: line, column: column, message: message)
    }

    /// The arguments `key = value` stands for; an error naming the key otherwise.
    private static func arguments(_ key: String, _ value: PlistValue) throws(Message) -> [String] {
        guard let kind = keys[key] else {
            if key == "config" { throw Message(text: "'config' cannot be set in a config file; give --config FILE on the command line") }
            if case .dict = value { throw Message(text: "[\(key)] tables are not options: write each option as KEY = VALUE at the top of the file") }
            let near = keys.keys.filter { $0.hasPrefix(String(key.prefix(3))) }.sorted().prefix(3)
            throw Message(text: "unknown key '\(key)'\(near.isEmpty ? "" : " (did you mean \(near.joined(separator: ", "))?)"); the keys are folio-edge's long options, see folio-edge run --help")
        }
        // `access-log = false` for `--no-access-log`: an option turned off by a flag of its own.
        if case .bool(false) = value, case .flag = keys["no-" + key] { return ["--no-\(key)"] }
        switch (kind, value) {
        case (.string, .string(let s)): return ["--\(key)", s]
        case (.integer, .int(let i)), (.number, .int(let i)): return ["--\(key)", String(i)]
        case (.number, .real(let d)): return ["--\(key)", String(d)]
        case (.flag, .bool(true)): return ["--\(key)"]
        case (.flag(let invertible), .bool(false)): return invertible ? ["--no-\(key)"] : []
        case (.list, .string(let s)): return ["--\(key)", s]
        case (.list, .array(let items)):
            var arguments: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw Message(text: "'\(key)' takes a list of strings, like \(key) = [\"a\", \"b\"]") }
                arguments += ["--\(key)", s]
            }
            return arguments
        default: throw Message(text: "'\(key)' takes \(describe(kind)), got \(describe(value))")
        }
    }

    static func describe(_ kind: Kind) -> String {
        switch kind {
        case .string: "a string, like \"…\""
        case .integer: "an integer"
        case .number: "a number"
        case .list: "a string or a list of strings"
        case .flag: "true or false"
        }
    }

    static func describe(_ value: PlistValue) -> String {
        switch value {
        case .string(let s): "the string \"\(s)\""
        case .int(let i): "the integer \(i)"
        case .real(let d): "the number \(d)"
        case .bool(let b): "\(b)"
        case .array: "a list"
        case .dict: "a table"
        default: "a date"
        }
    }
}
