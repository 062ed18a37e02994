import FolioTestSupport
import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Testing

/// folio-build on string catalogs: the real content, each validation rule, and a broken catalog
/// leaving the published directory as it was.
@Suite("folio-build catalogs", .serialized)
struct CatalogBuildTests {
    let build = Harness.binary("folio-build")
    let env = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]

    /// A content directory with only `catalogs/` holding `files` (relative path → text).
    func content(_ files: [String: String], in dir: String) -> String {
        let root = dir + "/content"
        for (path, text) in files {
            let full = root + "/catalogs/" + path
            try! FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try! Data(text.utf8).write(to: URL(fileURLWithPath: full))
        }
        return root
    }

    static let english = """
        /* Title */
        "app.title" = "Sonnets";
        "reader.position" = "Sonnet %d of %d";
        "reader.title" = "Sonnet %@";
        """

    static let englishPlurals = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>list.count</key>
            <dict>
                <key>NSStringLocalizedFormatKey</key>
                <string>%#@n@</string>
                <key>n</key>
                <dict>
                    <key>NSStringFormatSpecTypeKey</key>
                    <string>NSStringPluralRuleType</string>
                    <key>NSStringFormatValueTypeKey</key>
                    <string>d</string>
                    <key>one</key>
                    <string>%d sonnet</string>
                    <key>other</key>
                    <string>%d sonnets</string>
                </dict>
            </dict>
        </dict>
        </plist>
        """

    static func po(_ language: String, pluralForms: String, _ body: String) -> String {
        """
        msgid ""
        msgstr ""
        "Content-Type: text/plain; charset=UTF-8\\n"
        "Language: \(language)\\n"
        "Plural-Forms: \(pluralForms)\\n"

        \(body)
        """
    }

    static let russianForms = "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"

    func publish(_ content: String, _ out: String, _ extra: [String] = []) throws -> Harness.Output {
        try Harness.run(build, ["--content", content, "--output", out] + extra, env: env)
    }

    func catalog(_ out: String, _ manifest: Manifest, _ path: String) throws -> CompiledCatalog {
        let e = try #require(manifest.entry(path), "\(path) not published")
        return try CompiledCatalog(bytes: try FileIO.read(out + "/" + e.objectPath))
    }

    @Test("the real content: every locale in every format compiles, with locales on the entries and an index")
    func realContent() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let out = dir + "/public"
        let r = try publish(Harness.repoRoot + "/content", out)
        #expect(r.status == 0, "\(r.stderr)")
        let m = try Harness.verifyPublished(out)
        let expected = ["ar", "cy", "de", "en", "es", "es-419", "fr", "ja", "pl", "pt-BR", "ru", "zh-Hans", "zh-Hant"]
        for locale in expected {
            let e = try #require(m.entry("catalogs/\(locale)/Localizable.plist"), "no catalog for \(locale)")
            #expect(e.locale == locale)
        }
        #expect(m.entries.filter { $0.path.hasPrefix("catalogs/") && $0.path != CatalogIndex.path }.count == expected.count)
        let indexEntry = try #require(m.entry(CatalogIndex.path))
        #expect(indexEntry.locale == nil)
        let index = try CatalogIndex(plist: try BinaryPlist.decode(try FileIO.read(out + "/" + indexEntry.objectPath)))
        #expect(index.developmentLanguage == "en")
        #expect(index.tables == ["Localizable"])
        #expect(index.locales == expected.sorted())
        let total = try #require(index.coverage["en"]?["Localizable"]?.total)
        #expect(total >= 29)
        #expect(index.coverage["en"]?["Localizable"]?.translated == total)
        #expect(index.coverage["fr"]?["Localizable"]?.translated == total)
        // es-419 only overrides what differs from es; the XLIFF and .po locales leave sync.summary out.
        #expect((index.coverage["es-419"]?["Localizable"]?.translated ?? 99) < total / 2)
        #expect(index.coverage["ru"]?["Localizable"]?.translated == total - 1)

        let en = try catalog(out, m, "catalogs/en/Localizable.plist")
        #expect(en.strings["app.title"] == .string("Sonnets"))
        #expect(en.strings["list.count"] == .plural([.one: "%d sonnet", .other: "%d sonnets"]))
        guard case .substitutions(let format, let variables)? = en.strings["sync.summary"] else {
            Issue.record("sync.summary is not a substitution: \(String(describing: en.strings["sync.summary"]))")
            return
        }
        #expect(format.contains("%#@"))
        #expect(variables.count == 2)
        // Welsh uses all six CLDR categories.
        guard case .plural(let cy)? = try catalog(out, m, "catalogs/cy/Localizable.plist").strings["list.count"] else {
            Issue.record("cy list.count is not plural")
            return
        }
        #expect(Set(cy.keys) == Set(PluralCategory.allCases))
        // Russian comes from gettext: three forms and the Plural-Forms that picks them.
        let ru = try catalog(out, m, "catalogs/ru/Localizable.plist")
        guard case .gettextPlural(let forms)? = ru.strings["list.count"] else {
            Issue.record("ru list.count is not a gettext plural")
            return
        }
        #expect(forms.count == 3)
        #expect(ru.pluralForms?.contains("nplurals=3") == true)
        #expect(ru.strings["status.beta"] == nil, "a fuzzy entry was published")
        // German is UTF-16 on disk; the text arrives intact.
        #expect(try catalog(out, m, "catalogs/de/Localizable.plist").strings["button.cancel"] == .string("Abbrechen"))
        // xcstrings: Japanese plural with only `other`, and a device variation.
        let ja = try catalog(out, m, "catalogs/ja/Localizable.plist")
        guard case .plural(let jaCount)? = ja.strings["list.count"] else {
            Issue.record("ja list.count is not plural")
            return
        }
        #expect(Array(jaCount.keys) == [.other])
        guard case .device(let devices)? = ja.strings["app.hint"] else {
            Issue.record("ja app.hint has no device variants")
            return
        }
        #expect(devices["mac"] != nil && devices["iphone"] != nil)
        // XLIFF 1.2 (es, es-419) and 2.0 (pt-BR).
        #expect(try catalog(out, m, "catalogs/es/Localizable.plist").strings["button.cancel"] == .string("Cancelar"))
        #expect(try catalog(out, m, "catalogs/pt-BR/Localizable.plist").strings["button.cancel"] == .string("Cancelar"))
        // What the locales leave out is declared in folio.toml's [catalogs.partial]: no coverage
        // warning, and the strict build CI runs passes (catalogPartialTests covers the rules).
        #expect(!r.stderr.contains("keys translated"), "\(r.stderr)")
        let strict = try publish(Harness.repoRoot + "/content", dir + "/strict", ["--strict"])
        #expect(strict.status == 0 && !strict.stderr.contains("warning"), "\(strict.stderr)")
    }

    @Test("a catalogs-only content directory publishes catalogs and an index")
    func catalogsOnly() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = content([
            "en/Localizable.strings": Self.english, "en/Localizable.stringsdict": Self.englishPlurals,
            "ru/Localizable.po": Self.po("ru", pluralForms: Self.russianForms, """
                msgid "app.title"
                msgstr "Сонеты"

                msgid "list.count"
                msgid_plural "list.count"
                msgstr[0] "%d сонет"
                msgstr[1] "%d сонета"
                msgstr[2] "%d сонетов"
                """),
            "pt_BR/Localizable.strings": "\"app.title\" = \"Sonetos\";",
        ], in: dir)
        let r = try publish(c, dir + "/public")
        #expect(r.status == 0, "\(r.stderr)")
        let m = try Harness.verifyPublished(dir + "/public")
        #expect(m.entry("sonnets/index.plist") == nil)
        #expect(try catalog(dir + "/public", m, "catalogs/pt-BR/Localizable.plist").strings["app.title"] == .string("Sonetos"))
        let ru = try catalog(dir + "/public", m, "catalogs/ru/Localizable.plist")
        #expect(ru.strings["list.count"] == .gettextPlural(["%d сонет", "%d сонета", "%d сонетов"]))
        // Not translated: reader.position and reader.title; the warning says so with the coverage.
        #expect(r.stderr.contains("ru/Localizable: 2 of 4 keys translated (50%)"), "\(r.stderr)")
    }

    /// Publishes a good version, then each broken variant: each must fail with the expected
    /// diagnostic and leave the published directory byte for byte as it was.
    func expectRejected(
        _ files: [String: String], _ expected: [String], english: String = CatalogBuildTests.englishPlurals,
        strict: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let good = content(["en/Localizable.strings": Self.english, "en/Localizable.stringsdict": english], in: dir + "/good")
        #expect(try publish(good, dir + "/public").status == 0, sourceLocation: sourceLocation)
        let before = Harness.snapshot(dir + "/public")
        var all = ["en/Localizable.strings": Self.english, "en/Localizable.stringsdict": english]
        for (k, v) in files { all[k] = v }
        let bad = content(all, in: dir + "/bad")
        let r = try publish(bad, dir + "/public", strict ? ["--strict"] : [])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)", sourceLocation: sourceLocation)
        for text in expected {
            #expect(r.stderr.contains(text), "missing \(text) in:\n\(r.stderr)", sourceLocation: sourceLocation)
        }
        #expect(Harness.snapshot(dir + "/public") == before, "public/ changed", sourceLocation: sourceLocation)
    }

    @Test("format specifiers must match the source: type, position and count")
    func formatSpecifiers() throws {
        try expectRejected(
            ["fr/Localizable.strings": """
                "app.title" = "Sonnets";
                "reader.title" = "Sonnet %d";
                "reader.position" = "Sonnet %1$d sur %2$d";
                """],
            ["content/catalogs/fr/Localizable.strings:2:", "error: \"reader.title\": format specifiers do not match"])
        try expectRejected(
            ["de/Localizable.strings": "\"reader.position\" = \"Sonett %2$@ von %1$d\";"],
            ["\"reader.position\": format specifiers"])
    }

    static func twoCounts(_ format: String, first: (String, String) = ("sonnets", "d"), second: (String, String) = ("seconds", "d")) -> String {
        func variable(_ v: (String, String)) -> String {
            """
            <key>\(v.0)</key>
            <dict>
                <key>NSStringFormatSpecTypeKey</key><string>NSStringPluralRuleType</string>
                <key>NSStringFormatValueTypeKey</key><string>\(v.1)</string>
                <key>one</key><string>%\(v.1) \(v.0)</string>
                <key>other</key><string>%\(v.1) \(v.0)</string>
            </dict>
            """
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
                <key>sync.summary</key>
                <dict>
                    <key>NSStringLocalizedFormatKey</key><string>\(format)</string>
                    \(variable(first))
                    \(variable(second))
                </dict>
            </dict>
            </plist>
            """
    }

    @Test("several counts in one string: positional tokens may reorder, a count's type must match")
    func substitutionFormats() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = content([
            "en/Localizable.strings": Self.english,
            "en/Localizable.stringsdict": Self.twoCounts("Downloaded %#@sonnets@ in %#@seconds@"),
            "fr/Localizable.stringsdict": Self.twoCounts("En %2$#@seconds@ : %1$#@sonnets@"),
        ], in: dir)
        let r = try publish(c, dir + "/public")
        #expect(r.status == 0, "\(r.stderr)")
        let m = try Harness.verifyPublished(dir + "/public")
        let fr = try catalog(dir + "/public", m, "catalogs/fr/Localizable.plist")
        let lookup = CatalogLookup(chain: [fr])
        #expect(lookup.string(for: "sync.summary", arguments: [.int(3), .int(1)])?.text == "En 1 seconds : 3 sonnets")
        try expectRejected(
            ["fr/Localizable.stringsdict": Self.twoCounts("En %2$#@seconds@ : %1$#@sonnets@", second: ("seconds", "@"))],
            ["content/catalogs/fr/Localizable.stringsdict:", "\"sync.summary\": format specifiers do not match"],
            english: Self.twoCounts("Downloaded %#@sonnets@ in %#@seconds@"))
    }

    @Test("plural variants must fit the locale: CLDR categories, `other`, nplurals")
    func pluralRules() throws {
        var lines = Self.englishPlurals.components(separatedBy: "\n")
        let other = try #require(lines.firstIndex { $0.contains("<key>other</key>") })
        lines.removeSubrange(other...(other + 1))
        let noOther = lines.joined(separator: "\n")
        try expectRejected(["de/Localizable.stringsdict": noOther], ["plural variants need 'other'"])
        try expectRejected(["ru/Localizable.po": Self.po("ru", pluralForms: Self.russianForms, """
            msgid "list.count"
            msgid_plural "list.count"
            msgstr[0] "%d сонет"
            msgstr[1] "%d сонетов"
            """)], ["content/catalogs/ru/Localizable.po:7:1: error:", "nplurals=3"])
        try expectRejected(["ru/Localizable.po": Self.po("ru", pluralForms: "nplurals=3; plural=(n%10==1 ? 0 :;", """
            msgid "app.title"
            msgstr "Сонеты"
            """)], ["content/catalogs/ru/Localizable.po:", "invalid Plural-Forms"])
    }

    @Test("invalid locale tags, stray files, duplicate keys across files, source language disagreement")
    func structure() throws {
        try expectRejected(["fr!/Localizable.strings": "\"app.title\" = \"Sonnets\";"], ["'fr!' is not a locale"])
        try expectRejected(["notes.txt": "hello"], ["content/catalogs/notes.txt:1:1: error: unexpected file"])
        try expectRejected(
            ["en/Extra.strings": "\"a\" = \"b\";", "fr/Localizable.strings": "\"app.title\" = \"Sonnets\";\n\"app.title\" = \"Les sonnets\";"],
            ["content/catalogs/fr/Localizable.strings:2:"])
        try expectRejected(
            ["fr/Localizable.strings": "\"app.title\" = \"Sonnets\";", "fr.lproj/Localizable.strings": "\"app.title\" = \"Les Sonnets\";"],
            ["duplicate key \"app.title\" for fr/Localizable: first defined at"])
        try expectRejected(["Localizable.xliff": """
            <?xml version="1.0" encoding="UTF-8"?>
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="Localizable.strings" source-language="de" target-language="fr" datatype="plaintext">
                <body>
                  <trans-unit id="app.title"><source>Sonette</source><target>Sonnets</target></trans-unit>
                </body>
              </file>
            </xliff>
            """], ["the file's source language is de but the development language is en"])
        try expectRejected(["fr/Localizable.strings": "\"app.title\" = \"Sonnets\"\n\"x\" = \"y\";"], ["content/catalogs/fr/Localizable.strings:"])
    }

    @Test("damaged real catalogs: folio-build reports and exits 1 (never a crash), public/ stays as it was")
    func damagedRealCatalogs() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        let out = dir + "/public"
        #expect(try publish(content, out).status == 0)
        let before = Harness.snapshot(out)
        let cases: [(String, ([UInt8]) -> [UInt8])] = [
            ("catalogs/ru/Localizable.po", { Array($0.prefix($0.count / 2)) }),
            ("catalogs/Localizable.xliff", { Array($0.prefix($0.count * 2 / 3)) }),
            ("catalogs/Localizable.pt-BR.xlf", { b in b.map { $0 == UInt8(ascii: ">") ? UInt8(ascii: " ") : $0 } }),
            ("catalogs/Localizable.xcstrings", { Array($0.dropLast(40)) }),
            ("catalogs/cy/Localizable.stringsdict", { Array($0.prefix(700)) }),
            ("catalogs/de/Localizable.strings", { Array($0.dropFirst(2)) }),  // UTF-16 without its BOM
            ("catalogs/fr/Localizable.strings", { $0 + Array("\n\"unterminated = \"x\";".utf8) }),
        ]
        for (path, damage) in cases {
            let file = content + "/" + path
            let original = try FileIO.read(file)
            try FileIO.writeAtomically(damage(original), to: file)
            let r = try publish(content, out)
            #expect(r.status == 1, "\(path): exit \(r.status)\n\(r.stderr)")
            #expect(r.stderr.contains(path + ":"), "\(path): \(r.stderr)")
            #expect(Harness.snapshot(out) == before, "\(path): public/ changed")
            try FileIO.writeAtomically(original, to: file)
        }
    }

    @Test("a table with no development-language catalog is an error")
    func missingDevelopmentLanguage() throws {
        try expectRejected(["fr/Other.strings": "\"a\" = \"b\";"], ["table Other has no catalog in the development language en"])
    }
}
