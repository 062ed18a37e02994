import FolioTestSupport
import Foundation
import Testing

/// Every `--help` of the three programs says each option's default once (issue #29): an option
/// whose help describes its default must not get ArgumentParser's "(default: …)" appended too.
@Suite("help texts")
struct HelpTextTests {
    /// `program sub… --help` at a fixed width.
    static func help(_ program: String, _ path: [String]) throws -> String {
        let out = try Harness.run(Harness.binary(program), path + ["--help"], env: ["COLUMNS": "100"])
        guard out.status == 0 else { throw HarnessError("\(program) \(path) --help: \(out.status) \(out.stderr)") }
        return out.stdout
    }

    /// The subcommands a help text lists (the names under SUBCOMMANDS:).
    static func subcommands(_ help: String) -> [String] {
        var names: [String] = []
        var inSection = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("SUBCOMMANDS:") { inSection = true; continue }
            if inSection, line.isEmpty || !line.hasPrefix(" ") { break }
            // A subcommand's line: two spaces, then its name; its abstract follows after spaces.
            guard inSection, line.hasPrefix("  "), !line.hasPrefix("   ") else { continue }
            if let name = line.split(separator: " ").first, name != "help" { names.append(String(name)) }
        }
        return names
    }

    /// Each option's help text (its first line and the continuation lines), joined into one line.
    static func optionTexts(_ help: String) -> [String] {
        var blocks: [String] = []
        for line in help.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            let indent = line.count - trimmed.count
            if indent == 2, trimmed.hasPrefix("-") || trimmed.hasPrefix("<") {
                blocks.append(String(trimmed))
            } else if indent > 2, !blocks.isEmpty {
                blocks[blocks.count - 1] += " " + trimmed
            }
        }
        return blocks
    }

    /// Every help text of `program`, by its command path.
    static func allHelp(_ program: String) throws -> [(String, String)] {
        var out: [(String, String)] = []
        var queue: [[String]] = [[]]
        while let path = queue.first {
            queue.removeFirst()
            let text = try help(program, path)
            out.append(((["\(program)"] + path).joined(separator: " "), text))
            queue += subcommands(text).map { path + [$0] }
        }
        return out
    }

    /// The problems of one option's text: its default said twice, or appended after a parenthesis.
    static func problems(_ text: String) -> [String] {
        var found: [String] = []
        if text.components(separatedBy: "(default:").count > 2 { found.append("two '(default:'") }
        for pattern in ["). (default", ") (default", ".) (default"] where text.contains(pattern) { found.append("'\(pattern)'") }
        return found
    }

    @Test("the rules find what they look for")
    func rulesWork() {
        #expect(Self.problems("--threads <threads>  Event loop threads (default: one per core). (default: 2)").count == 2)
        #expect(Self.problems("--origin-timeout <t>  Seconds (with several: the next) (default: 30)") == ["') (default'"])
        #expect(Self.problems("--edge <edge>  The edge's base URL (default: FOLIO_EDGE).").isEmpty)
        #expect(Self.subcommands("SUBCOMMANDS:\n  sync  Bring it\n  keys  Keys\n    more text\n  help  Show help\n\n  See more") == ["sync", "keys"])
    }

    @Test("no option of folio, folio-build or folio-edge says its default twice")
    func defaultsSaidOnce() throws {
        var seen = 0
        for program in ["folio", "folio-build", "folio-edge"] {
            for (command, text) in try Self.allHelp(program) {
                seen += 1
                for option in Self.optionTexts(text) {
                    let problems = Self.problems(option)
                    #expect(problems.isEmpty, "\(command): \(problems.joined(separator: ", ")) in: \(option)")
                }
            }
        }
        #expect(seen > 15, "only \(seen) help texts found")
    }
}
