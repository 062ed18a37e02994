import FolioTestSupport
import Testing

@testable import FolioCatalogs
@testable import FolioLocalization

@Suite struct PluralFormsTests {
    static let counts: [UInt64] = [0, 1, 2, 5, 11, 21, 22, 25, 101, 111]

    @Test(arguments: [
        ("nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);", 3,
         [2, 0, 1, 2, 2, 0, 1, 2, 0, 2]),
        ("nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);", 3,
         [2, 0, 1, 2, 2, 2, 1, 2, 2, 2]),
        ("nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5);", 6,
         [0, 1, 2, 3, 4, 4, 4, 4, 5, 4]),
        ("nplurals=2; plural=(n != 1);", 2, [1, 0, 1, 1, 1, 1, 1, 1, 1, 1]),
        ("  nplurals = 1 ;  plural = 0  ", 1, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    ])
    func languages(header: String, nplurals: Int, expected: [Int]) throws {
        let rule = try PluralFormsExpression(header)
        #expect(rule.nplurals == nplurals)
        #expect(Self.counts.map { rule.index(for: $0) } == expected)
    }

    @Test func precedenceAndAssociativity() throws {
        func eval(_ e: String, _ n: UInt64 = 0) throws -> Int {
            try PluralFormsExpression("nplurals=100; plural=\(e);").index(for: n)
        }
        #expect(try eval("2+3*4") == 14)
        #expect(try eval("(2+3)*4") == 20)
        #expect(try eval("20-5-3") == 12)
        #expect(try eval("64/4/2") == 8)
        #expect(try eval("17%5*3") == 6)
        #expect(try eval("1 ? 2 : 3 ? 4 : 5") == 2)
        #expect(try eval("0 ? 2 : 0 ? 4 : 5") == 5)
        #expect(try eval("!n", 0) == 1)
        #expect(try eval("!!n", 7) == 1)
        #expect(try eval("!n+1", 3) == 1)
        #expect(try eval("1 || 0 && 0") == 1)
        #expect(try eval("1 < 2 == 1") == 1)
        #expect(try eval("3 >= 3 != 0") == 1)
        #expect(try eval("n <= 5", 6) == 0)
        #expect(try eval("n > 5", 6) == 1)
        // Unsigned wrap-around like C's unsigned long; then clamped to nplurals - 1.
        #expect(try eval("n-1", 0) == 99)
    }

    @Test func resultsAreClamped() throws {
        let rule = try PluralFormsExpression("nplurals=2; plural=n;")
        #expect(rule.index(for: 0) == 0)
        #expect(rule.index(for: 1) == 1)
        #expect(rule.index(for: 1000) == 1)
        #expect(rule.index(for: .max) == 1)
    }

    @Test func divisionByZeroYieldsZero() throws {
        let div = try PluralFormsExpression("nplurals=3; plural=n/0;")
        #expect(div.index(for: 5) == 0)
        let mod = try PluralFormsExpression("nplurals=3; plural=n%(n-n) + 2;")
        #expect(mod.index(for: 5) == 2)
    }

    @Test(arguments: [
        ("nplurals=2; plural=n%;", 22),
        ("nplurals=x; plural=n;", 10),
        ("nplurals=2; plural=(n != 1;", 27),
        ("nplurals=2; plural=n != 1);", 26),
        ("nplurals=2; plural=n ? 1;", 25),
        ("nplurals=0; plural=0;", 10),
        ("nplurals=2 plural=n;", 12),
        ("nplurals=2; plural=n = 1;", 22),
        ("nplurals=2; plural=;", 20),
        ("nplurals=2; plural=n & 1;", 22),
        ("nplurals=2; plural=99999999999999999999999;", 20),
        ("", 1),
        ("plural=n;", 1),
    ])
    func malformedThrowsWithColumn(header: String, column: Int) {
        let error = Self.failure(header)
        #expect(error?.line == 1)
        #expect(error?.column == column, "\(header): \(error?.message ?? "did not throw")")
    }

    static func failure(_ header: String) -> CatalogDiagnostic? {
        let result = Result<PluralFormsExpression, CatalogDiagnostic>(catching: { () throws(CatalogDiagnostic) in try PluralFormsExpression(header) })
        if case .failure(let error) = result { return error }
        return nil
    }

    @Test func deepNestingThrowsInsteadOfOverflowing() throws {
        let deep = "nplurals=2; plural=" + String(repeating: "(", count: 10_000) + "n" + String(repeating: ")", count: 10_000) + ";"
        #expect(throws: CatalogDiagnostic.self) { try PluralFormsExpression(deep) }
        let nested = "nplurals=2; plural=" + String(repeating: "(", count: 100) + "n" + String(repeating: ")", count: 100) + ";"
        #expect(Self.failure(nested)?.message.contains("nested") == true)
        let nots = "nplurals=2; plural=" + String(repeating: "!", count: 1000) + "n;"
        #expect(throws: CatalogDiagnostic.self) { try PluralFormsExpression(nots) }
        let ok = "nplurals=2; plural=" + String(repeating: "(", count: 20) + "n" + String(repeating: ")", count: 20) + ";"
        #expect(try PluralFormsExpression(ok).index(for: 1) == 1)
    }

    @Test func randomGarbageNeverCrashes() {
        var rng = SplitMix64(seed: 42)
        let alphabet = Array("n0123456789 ()!?:*/%+-<>=&|;pluralsn".utf8)
        for _ in 0..<2000 {
            let len = rng.int(0...60)
            let body = String(decoding: (0..<len).map { _ in rng.pick(alphabet) }, as: UTF8.self)
            if let rule = try? PluralFormsExpression("nplurals=4; plural=" + body) {
                for n: UInt64 in [0, 1, 2, 7, .max] {
                    #expect((0..<4).contains(rule.index(for: n)))
                }
            }
        }
    }
}

@Suite struct POFileTests {
    func parse(_ text: String) -> (POFile, [CatalogDiagnostic]) { POFile.parse(Array(text.utf8)) }

    static let sample = #"""
        # Translation of Folio.
        msgid ""
        msgstr ""
        "Project-Id-Version: Folio 1.0\n"
        "Language: ru\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\n"

        # Translator note
        #. Extracted note
        #: Sources/App.swift:12 Sources/Other.swift:40
        msgid "Hello"
        msgstr "Привет"

        #, fuzzy, c-format
        msgid "Old %d"
        msgstr "Старый %d"

        msgctxt "menu"
        msgid "Open"
        msgstr "Открыть"

        msgctxt "verb"
        msgid "Open"
        msgstr "Открывать"

        msgid ""
        "multi-"
        "line"
        msgstr "много" "строк"
        "!"

        msgid "%d sonnet"
        msgid_plural "%d sonnets"
        msgstr[0] "%d сонет"
        msgstr[1] "%d сонета"
        msgstr[2] "%d сонетов"

        msgid "esc"
        msgstr "a\tb\n\"q\"\\ \a\b\f\v\r \101\x42\x4a"

        #, fuzzy
        #~ msgid "Gone"
        #~ msgstr "Ушло"
        """#

    @Test func parsesSample() throws {
        let (file, diagnostics) = parse(Self.sample)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(file.header["Language"] == "ru")
        #expect(file.header["Project-Id-Version"] == "Folio 1.0")
        #expect(file.header["Content-Type"] == "text/plain; charset=UTF-8")
        let rule = try #require(file.pluralForms)
        #expect(rule.nplurals == 3)
        #expect([1, 2, 5, 21].map { rule.index(for: $0) } == [0, 1, 2, 0])
        #expect(file.entries.count == 7)
        #expect(file.entries[0] == POEntry(
            id: "Hello", translations: ["Привет"], comments: ["Translator note", "Extracted note"], line: 12))
        #expect(file.entries[1].fuzzy)
        #expect(file.entries[1].translations == ["Старый %d"])
        #expect(!file.entries[0].fuzzy)
        #expect(file.entries[2].context == "menu")
        #expect(file.entries[3].context == "verb")
        #expect(file.entries[3].translations == ["Открывать"])
        #expect(file.entries[2].line == 19)
        #expect(file.entries[4].id == "multi-line")
        #expect(file.entries[4].translations == ["многострок!"])
        #expect(file.entries[5].idPlural == "%d sonnets")
        #expect(file.entries[5].translations == ["%d сонет", "%d сонета", "%d сонетов"])
        #expect(file.entries[6].translations == ["a\tb\n\"q\"\\ \u{07}\u{08}\u{0C}\u{0B}\r ABJ"])
        #expect(!file.entries.contains { $0.id == "Gone" })
    }

    @Test func fuzzyFlagAmongOthers() {
        for (flags, fuzzy) in [
            ("fuzzy", true), (" c-format, fuzzy", true), ("fuzzy,c-format", true), ("c-format ,  fuzzy  ", true),
            ("c-format", false), ("fuzzy-ish", false), ("no-fuzzy", false), ("", false), (",", false),
        ] {
            let (file, diagnostics) = parse("#,\(flags)\nmsgid \"a\"\nmsgstr \"1\"\n")
            #expect(diagnostics.isEmpty)
            #expect(file.entries.first?.fuzzy == fuzzy, "#,\(flags)")
        }
    }

    @Test func obsoleteEntriesAreSkippedEvenWhenDuplicated() {
        let (file, diagnostics) = parse("msgid \"a\"\nmsgstr \"1\"\n\n#~ msgid \"a\"\n#~ msgstr \"2\"\n#~ msgid \"b\"\n")
        #expect(diagnostics.isEmpty)
        #expect(file.entries.map(\.id) == ["a"])
    }

    @Test func msgstrBeforeMsgidIsOutOfOrder() {
        let (file, diagnostics) = parse("msgstr \"x\"\nmsgid \"a\"\nmsgstr \"1\"\n")
        #expect(file.entries.map(\.id) == ["a"])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[1, 1]])
        #expect(diagnostics.first?.message.contains("out of order") == true)
    }

    @Test func otherOrderingErrors() {
        let (_, d1) = parse("msgid \"a\"\nmsgctxt \"c\"\nmsgstr \"1\"\n")
        #expect(d1.map { [$0.line, $0.column] } == [[2, 1]])
        let (_, d2) = parse("msgid \"a\"\nmsgstr \"1\"\n  msgstr \"2\"\n")
        #expect(d2.map { [$0.line, $0.column] } == [[3, 3]])
        let (_, d3) = parse("msgid \"a\"\nmsgstr[0] \"1\"\n")
        #expect(d3.map { [$0.line, $0.column] } == [[2, 1]])
        let (_, d4) = parse("msgid \"a\"\nmsgid_plural \"as\"\nmsgstr \"1\"\n")
        #expect(d4.map { [$0.line, $0.column] } == [[3, 1]])
    }

    @Test func missingMsgstr() {
        let (file, diagnostics) = parse("msgid \"a\"\n\nmsgid \"b\"\nmsgstr \"2\"\n\nmsgctxt \"c\"\nmsgid \"d\"\n")
        #expect(file.entries.map(\.id) == ["b"])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[1, 1], [6, 1]])
        #expect(diagnostics.allSatisfy { $0.message.contains("missing msgstr") })
    }

    @Test func malformedStrings() {
        let text = """
            msgid "open
            msgstr "x"

            msgid "b"
            msgstr "bad \\q escape"

            msgid "c"
            msgstr "c" junk

            msgid d
            msgstr "d"

            msgid "ok"
            msgstr "fine"
            """
        let (file, diagnostics) = parse(text)
        #expect(file.entries.map(\.id) == ["ok"])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[1, 7], [5, 13], [8, 12], [10, 7]])
        #expect(diagnostics[0].message.contains("never closed"))
        #expect(diagnostics[1].message.contains("unknown escape \\q"))
    }

    @Test func duplicateMsgidWithinSameContext() {
        let text = """
            msgid "a"
            msgstr "1"

            msgctxt "x"
            msgid "a"
            msgstr "2"

            msgid "a"
            msgstr "3"
            """
        let (file, diagnostics) = parse(text)
        #expect(file.entries.map(\.translations) == [["1"], ["2"]])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[8, 1]])
        #expect(diagnostics.first?.message.contains("first defined at line 1") == true)
    }

    @Test func pluralIndexGapsAreErrors() {
        let text = """
            msgid "x"
            msgid_plural "xs"
            msgstr[0] "a"
            msgstr[2] "c"
            msgstr[3] "d"

            msgid "y"
            msgid_plural "ys"
            msgstr[1] "b"

            msgid "z"
            msgid_plural "zs"
            msgstr[0] "a"
            msgstr[1] "b"
            """
        let (file, diagnostics) = parse(text)
        #expect(file.entries.map(\.id) == ["z"])
        #expect(diagnostics.map { [$0.line, $0.column] } == [[4, 1], [9, 1]])
        #expect(diagnostics[0].message.contains("expected msgstr[1]"))
    }

    @Test func badPluralFormsHeaderIsReported() {
        let text = "msgid \"\"\nmsgstr \"Plural-Forms: nplurals=2; plural=n%;\\n\"\n"
        let (file, diagnostics) = parse(text)
        #expect(file.pluralForms == nil)
        #expect(file.header["Plural-Forms"] == "nplurals=2; plural=n%;")
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.message.contains("Plural-Forms") == true)
    }

    @Test func invalidUTF8AndUnknownKeywords() {
        let (_, d1) = POFile.parse(Array("msgid \"a\"\nmsgstr \"".utf8) + [0xFF] + Array("\"\n".utf8))
        #expect(d1.map { [$0.line, $0.column] } == [[2, 9]])
        let (_, d2) = parse("msgid \"a\"\nmsgstr \"1\"\nmsgfoo \"x\"\n")
        #expect(d2.map { [$0.line, $0.column] } == [[3, 1]])
        let (f3, d3) = parse("\"dangling\"\nmsgid \"a\"\nmsgstr \"1\"\n")
        #expect(d3.map { [$0.line, $0.column] } == [[1, 1]])
        #expect(f3.entries.map(\.id) == ["a"])
        let (f4, d4) = parse("garbage here\n\nmsgid \"b\"\nmsgstr \"2\"\n")
        #expect(d4.map { [$0.line, $0.column] } == [[1, 1]])
        #expect(f4.entries.map(\.id) == ["b"])
    }

    @Test func randomMutationsNeverCrash() {
        var rng = SplitMix64(seed: 0x504F)
        let base = Array(Self.sample.utf8)
        let specials: [UInt8] = Array("\"\\#~,:.[]0123\n msgidstrctxt_plural".utf8) + [0x00, 0xC3, 0xFF]
        for _ in 0..<1000 {
            var bytes = base
            for _ in 0..<rng.int(1...6) {
                let at = rng.int(0...(bytes.count - 1))
                switch rng.int(0...2) {
                case 0: bytes[at] = rng.chance(0.7) ? rng.pick(specials) : UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.insert(rng.pick(specials), at: at)
                default: bytes.remove(at: at)
                }
                if bytes.isEmpty { bytes = [0x23] }
            }
            let (file, diagnostics) = POFile.parse(bytes)
            for d in diagnostics {
                #expect(d.line >= 1 && d.column >= 1 && !d.message.isEmpty)
            }
            for e in file.entries where e.idPlural != nil {
                #expect(!e.translations.isEmpty)
            }
        }
    }
}
