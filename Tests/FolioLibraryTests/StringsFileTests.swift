import FolioTestSupport
import Testing

@testable import FolioCatalogs
@testable import FolioLocalization

@Suite struct StringsFileTests {
    func parse(_ text: String) -> (entries: [StringsEntry], diagnostics: [CatalogDiagnostic]) {
        StringsFile.parse(Array(text.utf8))
    }

    func utf16(_ text: String, littleEndian: Bool) -> [UInt8] {
        var out: [UInt8] = littleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]
        for u in text.utf16 {
            let lo = UInt8(u & 0xFF), hi = UInt8(u >> 8)
            out += littleEndian ? [lo, hi] : [hi, lo]
        }
        return out
    }

    static let sample = """
        /* Title of the main window */
        "title" = "Sonnets";
        // Greeting shown on launch
        "greeting" = "Hello, \\"world\\"\\n";
        "emoji" = "😀 Ünïcödé";
        "shorthand";
        bare.key_1-x = bare_value;
        """

    @Test func basicEntriesAndComments() {
        let (entries, diagnostics) = parse(Self.sample)
        #expect(diagnostics.isEmpty)
        #expect(entries == [
            StringsEntry(key: "title", value: "Sonnets", comment: "Title of the main window", line: 2, column: 1),
            StringsEntry(key: "greeting", value: "Hello, \"world\"\n", comment: "Greeting shown on launch", line: 4, column: 1),
            StringsEntry(key: "emoji", value: "😀 Ünïcödé", comment: nil, line: 5, column: 1),
            StringsEntry(key: "shorthand", value: "shorthand", comment: nil, line: 6, column: 1),
            StringsEntry(key: "bare.key_1-x", value: "bare_value", comment: nil, line: 7, column: 1),
        ])
    }

    @Test func lastCommentWinsAndCommentsBetweenTokens() {
        let (entries, diagnostics) = parse("/* one */ // two\n/* three */ \"k\" /* x */ = /* y */ \"v\" /* z */ ;")
        #expect(diagnostics.isEmpty)
        #expect(entries.count == 1)
        #expect(entries.first?.comment == "three")
        #expect(entries.first?.value == "v")
        #expect(entries.first?.column == 13)
    }

    @Test func whitespaceIsFree() {
        let (entries, diagnostics) = parse("\n\n   \"a\"\n=\n\t\"b\"\n;\"c\"=\"d\";")
        #expect(diagnostics.isEmpty)
        #expect(entries.map(\.key) == ["a", "c"])
        #expect(entries.map(\.value) == ["b", "d"])
        #expect(entries.first?.line == 3)
        #expect(entries.first?.column == 4)
    }

    @Test func utf8BOMAndUTF16BothEndiannessGiveSameEntries() {
        let utf8 = parse(Self.sample)
        let bom = StringsFile.parse([0xEF, 0xBB, 0xBF] + Array(Self.sample.utf8))
        let le = StringsFile.parse(utf16(Self.sample, littleEndian: true))
        let be = StringsFile.parse(utf16(Self.sample, littleEndian: false))
        #expect(utf8.entries.count == 5)
        #expect(bom.entries == utf8.entries)
        #expect(le.entries == utf8.entries)
        #expect(be.entries == utf8.entries)
        #expect(le.diagnostics.isEmpty && be.diagnostics.isEmpty && bom.diagnostics.isEmpty)
    }

    @Test func escapes() {
        let (entries, diagnostics) = parse(#"""
            "a" = "\U41";
            "b" = "\U0041";
            "c" = "\UD83D\UDE00";
            "d" = "\101";
            "e" = "\t\r\n\"\\\'";
            "f" = "x\0y";
            "g" = "\u00e9";
            """#)
        #expect(diagnostics.isEmpty)
        #expect(entries.map(\.value) == ["A", "A", "😀", "A", "\t\r\n\"\\'", "x\u{0}y", "é"])
    }

    @Test func invalidUTF8IsReportedWithPosition() {
        let bytes = Array("\"k\" = \"v\";\n\"x\" = \"".utf8) + [0xC3, 0x28] + Array("\";".utf8)
        let (entries, diagnostics) = StringsFile.parse(bytes)
        #expect(entries.isEmpty)
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.line == 2)
        #expect(diagnostics.first?.column == 8)
        #expect(diagnostics.first?.message.contains("UTF-8") == true)
    }

    @Test func unpairedUTF16SurrogateIsReportedWithPosition() {
        var bytes = utf16("\"k\" = \"v\";\n\"x\" = \"", littleEndian: true)
        bytes += [0x3D, 0xD8]  // high surrogate, then a quote
        bytes += [0x22, 0x00, 0x3B, 0x00]
        let (entries, diagnostics) = StringsFile.parse(bytes)
        #expect(entries.isEmpty)
        #expect(diagnostics.map { [$0.line, $0.column] } == [[2, 8]])
        #expect(diagnostics.first?.message.contains("surrogate") == true)
    }

    @Test func unpairedSurrogateEscapeIsAnError() {
        let (entries, diagnostics) = parse(#""a" = "\UD83D x";"#)
        #expect(entries.isEmpty)
        #expect(diagnostics.map { [$0.line, $0.column] } == [[1, 8]])
    }

    @Test func unterminatedString() {
        let (entries, diagnostics) = parse("\"ok\" = \"fine\";\n\"k\" = \"never closed;\n")
        #expect(entries.map(\.key) == ["ok"])
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.line == 2)
        #expect(diagnostics.first?.column == 7)
        #expect(diagnostics.first?.message.contains("unterminated string") == true)
    }

    @Test func unterminatedComment() {
        let (entries, diagnostics) = parse("\"ok\" = \"fine\";\n  /* open\n\"k\" = \"v\";")
        #expect(entries.map(\.key) == ["ok"])
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first.map { [$0.line, $0.column] } == [2, 3])
        #expect(diagnostics.first?.message.contains("unterminated comment") == true)
    }

    @Test func missingEquals() {
        let (entries, diagnostics) = parse("\"k\" \"v\";\n\"ok\" = \"fine\";")
        #expect(entries.map(\.key) == ["ok"])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[1, 5]])
        #expect(diagnostics.first?.message.contains("missing '='") == true)
    }

    @Test func missingSemicolon() {
        let (entries, diagnostics) = parse("\"a\" = \"1\"\n\"b\" = \"2\";")
        #expect(entries.map(\.key) == ["b"])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[2, 1]])
        #expect(diagnostics.first?.message.contains("missing ';'") == true)
        #expect(diagnostics.first?.message.contains("line 1:7") == true)
        let atEOF = parse("\"a\" = \"1\"")
        #expect(atEOF.diagnostics.map { [$0.line, $0.column] } == [[1, 10]])
    }

    @Test func unknownEscape() {
        let (entries, diagnostics) = parse(#""a" = "x\qy";"b" = "ok";"#)
        #expect(entries.map(\.key) == ["b"])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[1, 9]])
        #expect(diagnostics.first?.message.contains("unknown escape \\q") == true)
    }

    @Test func duplicateKeyNamesBothLines() {
        let (entries, diagnostics) = parse("\"x\" = \"0\";\n\n\"k\" = \"1\";\n\"y\" = \"2\";\n\n  \"k\" = \"3\";")
        #expect(entries.map(\.value) == ["0", "1", "2"])
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first.map { [$0.line, $0.column] } == [6, 3])
        #expect(diagnostics.first?.message.hasPrefix("duplicate key \"k\": first defined at line 3") == true)
    }

    @Test func severalErrorsInOneRunWithRecovery() {
        let text = """
            "a" = "1";
            "b" "2";
            "c" = "x\\z";
            "d" = ;
            "e" = "5";
            "a" = "6";
            = "7";
            "f" = "8"
            """
        let (entries, diagnostics) = parse(text)
        #expect(entries.map(\.key) == ["a", "e"])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[2, 5], [3, 9], [4, 7], [6, 1], [7, 1], [8, 10]])
        #expect(diagnostics[0].message.contains("missing '='"))
        #expect(diagnostics[1].message.contains("unknown escape"))
        #expect(diagnostics[2].message.contains("expected a quoted value"))
        #expect(diagnostics[3].message.contains("first defined at line 1"))
        #expect(diagnostics[4].message.contains("expected a quoted key"))
        #expect(diagnostics[5].message.contains("missing ';'"))
    }

    @Test func emptyAndCommentOnlyInputs() {
        #expect(parse("").entries.isEmpty)
        #expect(parse("").diagnostics.isEmpty)
        #expect(parse("/* nothing */ // here").diagnostics.isEmpty)
        #expect(StringsFile.parse([0xFF, 0xFE]).diagnostics.isEmpty)
        #expect(StringsFile.parse([0xFF, 0xFE, 0x41]).diagnostics.count == 1)
    }

    @Test func randomMutationsNeverCrash() {
        var rng = SplitMix64(seed: 0x57_52_49_4E_47_53)
        let base = Array(Self.sample.utf8) + Array(#"  "esc" = "\U41\UD83D\UDE00\101\n";"#.utf8)
        let specials: [UInt8] = Array("\"\\;=/*\n U0123456789DEabc{}".utf8) + [0x00, 0xC3, 0xFF, 0xFE, 0xD8]
        for round in 0..<1000 {
            var bytes = round % 10 == 0 ? utf16(Self.sample, littleEndian: round % 20 == 0) : base
            for _ in 0..<rng.int(1...6) {
                let op = rng.int(0...2)
                if bytes.isEmpty { bytes.append(rng.pick(specials)); continue }
                let at = rng.int(0...(bytes.count - 1))
                switch op {
                case 0: bytes[at] = rng.chance(0.7) ? rng.pick(specials) : UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.insert(rng.pick(specials), at: at)
                default: bytes.remove(at: at)
                }
            }
            let (entries, diagnostics) = StringsFile.parse(bytes)
            for d in diagnostics {
                #expect(d.line >= 1 && d.column >= 1 && !d.message.isEmpty)
            }
            #expect(Set(entries.map(\.key)).count == entries.count)
        }
    }
}
