import FolioBuilder
import FolioPlist
import FolioTestSupport
import Foundation
import Testing

/// The fast reader of flat YAML (``SimpleYAML``) against Yams, the general reader: what the fast
/// one reads must equal what Yams reads, and it must read the common front-matter shapes (else it
/// is not worth having).
@Suite("Flat YAML fast path")
struct SimpleYAMLTests {
    static func simple(_ text: String) -> [String: PlistValue]? { SimpleYAML.mapping(Array(text.utf8)) }

    static func yams(_ text: String) -> PlistValue? { try? ContentYAML.readWithYams(Array(text.utf8)) }

    /// Checks the fast path against Yams on `text`; true when the fast path read it.
    @discardableResult
    static func agrees(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> Bool {
        guard let fast = simple(text) else { return false }
        let general = yams(text)
        #expect(general.map { same(.dict(fast), $0) } == true, "fast \(fast) vs Yams \(String(describing: general)) for:\n\(text)",
                sourceLocation: sourceLocation)
        return true
    }

    /// Equality where NaN equals NaN.
    static func same(_ a: PlistValue, _ b: PlistValue) -> Bool {
        switch (a, b) {
        case (.real(let x), .real(let y)): return x == y || (x.isNaN && y.isNaN)
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.dict(let x), .dict(let y)): return x.count == y.count && x.allSatisfy { k, v in y[k].map { same(v, $0) } ?? false }
        default: return a == b
        }
    }

    @Test func readsTheCommonShapes() throws {
        let text = """
            # a post
            title: "Shall I compare thee: a summer's day"
            subtitle: 'Sonnet #18'
            date: 2024-03-01T09:30:00Z
            day: 2024-03-01
            draft: false
            weight: -3
            ratio: 0.75
            big: 18446744073709551615
            tags: [poetry, "sonnets, all", 'love', 18]
            empty: []
            authors:
              - William Shakespeare
              - "Anon"
            url: https://example.org/a#b   # a comment
            note: It's a plain, simple [value]
            """
        let fast = try #require(Self.simple(text))
        #expect(fast["title"] == .string("Shall I compare thee: a summer's day"))
        #expect(fast["subtitle"] == .string("Sonnet #18"))
        #expect(fast["date"] == .date(Date(timeIntervalSince1970: 1_709_285_400)))
        #expect(fast["day"] == .date(Date(timeIntervalSince1970: 1_709_251_200)))
        #expect(fast["draft"] == .bool(false))
        #expect(fast["weight"] == .int(-3))
        #expect(fast["ratio"] == .real(0.75))
        #expect(fast["big"] == .integer(UInt64.max))
        #expect(fast["tags"] == .array([.string("poetry"), .string("sonnets, all"), .string("love"), .int(18)]))
        #expect(fast["empty"] == .array([]))
        #expect(fast["authors"] == .array([.string("William Shakespeare"), .string("Anon")]))
        #expect(fast["url"] == .string("https://example.org/a#b"))
        #expect(fast["note"] == .string("It's a plain, simple [value]"))
        #expect(Self.agrees(text))
        #expect(Self.agrees("---\na: 1\r\nb: [x, y]\r\n"))
        #expect(Self.agrees("list:\n- a\n- b\nnext: c\n"))
    }

    /// Shapes left to Yams: each is either an error there (reported with its position) or needs
    /// YAML's full rules.
    @Test(arguments: [
        "", "# only a comment\n", "a:\n", "a: ~\n", "a: null\n", "a: 1\na: 2\n", "a:\n  b: 1\n", "a: b: c\n", "a: [1, [2]]\n",
        "a: [1, 2,]\n", "a: {b: 1}\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  text\n", "a: >\n  text\n",
        "a: long\n  continued\n", "a: \"esc\\\"aped\"\n", "a: 'it''s'\n", "a:\t1\n", "a: 1\n---\nb: 2\n", "a: 1\n...\n",
        "%YAML 1.2\n---\na: 1\n", "\u{FEFF}a: 1\n", "a: 1\u{85}b: 2\n", "a: 1\u{2028}b: 2\n", "\"quoted key\": 1\n",
        "key with space: 1\n", "a: 18446744073709551616\n", "a:\n  - 1\n   - 2\n", "a:\n  - - 1\n", "a:\n  -\n", "<<: {b: 1}\n",
        "a: \"unclosed\n", "a: [1, 2\n", "a: 'x' y\n", "a: \"x\"#c\n", "a: - 1\n", "a: @x\n", "a: `x`\n", "a: x\r\rb: y\n",
        "? a\n: 1\n", "a: [x: 1]\n", "  a: 1\n",
    ])
    func leavesTheRestToYams(_ text: String) {
        #expect(Self.simple(text) == nil, "the fast path read \(String(reflecting: text)) as \(String(describing: Self.simple(text)))")
    }

    /// Documents built from fragments chosen to sit on the edges of YAML's rules (indicators,
    /// colons, hashes, quotes, spaces, numbers, dates, sequences): the fast path must read the
    /// same as Yams whenever it reads at all, and must read most of the well-formed ones.
    @Test func agreesWithYamsOnGeneratedDocuments() {
        var rng = SplitMix64(seed: 0x5EED_F00D)
        let keys = ["title", "date", "tags", "a", "b_c", "x-y", "v1.2", "2024", "true", "null", "on"]
        let scalars = [
            "plain", "two words", "it's", "a:b", "a: b", "a #c", "a#c", "#c", "-1", "- 1", "-x", "+5", "0x1F", "0o17", "1e3", ".5",
            "1.", "-.inf", ".NaN", "1_000", "007", "true", "False", "yes", "~", "null", "2024-02-30", "2024-03-01 10:00:00 -5",
            "2024-03-01T09:30:00.25Z", "\"q\"", "'q'", "\"a: b # c\"", "'#'", "\"\"", "''", "\"x\" y", "[a, b]", "[a,b]", "[ ]", "[]",
            "[\"a, b\", 'c']", "[1, 2.5, true, 2024-01-01]", "[a b, c]", "[a: b]", "[#]", "[a]x", "é ü 中文", "🎉", "a  b  ", "?x", ":x",
            "x:", "&a b", "*a", "!x y", "|", ">-", "%x", "@x", "`x`", "{a: 1}", "a, b", "a]", "a}", "\\n", "[-1, -x]",
        ]
        var read = 0, total = 0
        for _ in 0..<6_000 {
            var lines: [String] = []
            if rng.chance(0.1) { lines.append("---") }
            for _ in 0..<rng.int(1...5) {
                let key = rng.chance(0.05) ? rng.pick(keys) + ":x" : rng.pick(keys)
                if rng.chance(0.1) { lines.append(rng.chance(0.5) ? "# note" : "") }
                if rng.chance(0.15) {
                    let indent = String(repeating: " ", count: rng.int(0...2))
                    lines.append("\(key):")
                    for _ in 0..<rng.int(0...3) { lines.append("\(indent)- \(rng.pick(scalars))") }
                } else {
                    let space = rng.chance(0.9) ? " " : rng.pick(["", "  ", "\t"])
                    let comment = rng.chance(0.1) ? rng.pick([" # c", "#c", "  #"]) : ""
                    lines.append("\(key):\(space)\(rng.pick(scalars))\(comment)")
                }
                if rng.chance(0.03) { lines.append("  " + rng.pick(scalars)) }
            }
            let text = lines.joined(separator: rng.chance(0.1) ? "\r\n" : "\n") + (rng.chance(0.8) ? "\n" : "")
            total += 1
            if Self.agrees(text) { read += 1 }
        }
        // Most generated documents hold at least one fragment the fast path leaves to Yams; a
        // fair share must still be read, or the comparison above tests nothing.
        #expect(read > total / 20, "the fast path read \(read) of \(total) generated documents")
    }

    /// Every YAML document and front matter among the real content and the fuzz seeds.
    @Test func agreesWithYamsOnRealFiles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var read = 0
        for dir in ["Tests/IntegrationTests/RealContent", "Fuzz/Corpus/content-yaml", "Fuzz/Corpus/front-matter", "content"] {
            let base = root.appendingPathComponent(dir)
            guard let walker = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let name as String in walker {
                let ext = (name as NSString).pathExtension
                guard ["yml", "yaml", "md"].contains(ext) else { continue }
                let bytes = try [UInt8](Data(contentsOf: base.appendingPathComponent(name)))
                var text = String(decoding: bytes, as: UTF8.self)
                if ext == "md" {
                    let open = text.index(text.startIndex, offsetBy: 4, limitedBy: text.endIndex) ?? text.endIndex
                    guard text.hasPrefix("---\n"), let close = text.range(of: "\n---\n", range: text.index(before: open)..<text.endIndex),
                        close.lowerBound > open
                    else { continue }
                    text = String(text[open..<close.lowerBound]) + "\n"
                }
                if Self.agrees(text) { read += 1 }
            }
        }
        #expect(read >= 10, "the fast path read only \(read) of the real files' YAML")
    }
}
