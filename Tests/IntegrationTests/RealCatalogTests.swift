import FolioTestSupport
import FolioLocalization
import FolioPublished
import FolioSupport
import Foundation
import Testing

/// folio-build on real-world catalogs: Django's own gettext files (compared key by key with what GNU
/// gettext answers) and an Xcode String Catalog with the shapes of a real app's. What msgfmt and Xcode
/// compile must compile, with warnings; `--strict` refuses the same content and publishes nothing.
@Suite("real-world catalogs", .serialized)
struct RealCatalogTests {
    let build = Harness.binary("folio-build")
    let env = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]

    static let fixtures = Harness.repoRoot + "/Tests/Fixtures/RealCatalogs"
    /// The Django locale folders, as in the wheel (POSIX names).
    static let djangoLocales = ["en", "fr", "ja", "pt_BR", "ru"]

    /// Whether `python3` and GNU `msgfmt` are on the PATH (the gettext reference needs both).
    static let hasGettextTools: Bool = ["python3", "msgfmt"].allSatisfy { tool in
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    /// A content directory whose `catalogs/` is a copy of `source` (a fixture's catalogs folder or one file).
    func content(copying source: String, in dir: String) throws -> String {
        let root = dir + "/content"
        try FileManager.default.createDirectory(atPath: root + "/catalogs", withIntermediateDirectories: true)
        var isDir: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: source, isDirectory: &isDir)
        if isDir.boolValue {
            for item in try FileManager.default.contentsOfDirectory(atPath: source) {
                try FileManager.default.copyItem(atPath: source + "/" + item, toPath: root + "/catalogs/" + item)
            }
        } else {
            try FileManager.default.copyItem(atPath: source, toPath: root + "/catalogs/" + (source as NSString).lastPathComponent)
        }
        return root
    }

    func publish(_ content: String, _ out: String, strict: Bool = false) throws -> Harness.Output {
        try Harness.run(build, ["--content", content, "--output", out] + (strict ? ["--strict"] : []), env: env)
    }

    /// The published catalog of `table` in `locale` (canonical tag), nil when the manifest has none.
    func catalog(_ out: String, _ manifest: Manifest, _ locale: String, _ table: String) throws -> CompiledCatalog? {
        guard let e = manifest.entry(CompiledCatalog.path(table: table, locale: locale)) else { return nil }
        return try CompiledCatalog(bytes: try FileIO.read(out + "/" + e.objectPath))
    }

    func lines(_ stderr: String, _ severity: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.contains(": \(severity): ") }
    }

    /// Whether some `warning:` line holds every one of `fragments`.
    func warns(_ stderr: String, _ fragments: [String]) -> Bool {
        lines(stderr, "warning").contains { line in fragments.allSatisfy { line.contains($0) } }
    }

    /// Builds `content` twice: plain (exit 0, no error, the returned output) and with `--strict` (exit 1,
    /// the published directory byte for byte as the plain build left it).
    func buildPlainAndStrict(
        _ content: String, _ out: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Harness.Output {
        let r = try publish(content, out)
        #expect(r.status == 0, "folio-build exit \(r.status):\n\(r.stderr)", sourceLocation: sourceLocation)
        #expect(lines(r.stderr, "error").isEmpty, "errors:\n\(lines(r.stderr, "error").prefix(20).joined(separator: "\n"))", sourceLocation: sourceLocation)
        let before = Harness.snapshot(out)
        let strict = try publish(content, out, strict: true)
        #expect(strict.status == 1, "folio-build --strict exit \(strict.status):\n\(strict.stderr)", sourceLocation: sourceLocation)
        #expect(!lines(strict.stderr, "error").isEmpty, "--strict printed no error:\n\(strict.stderr)", sourceLocation: sourceLocation)
        #expect(Harness.snapshot(out) == before, "folio-build --strict changed the published directory", sourceLocation: sourceLocation)
        return r
    }

    // MARK: Django

    @Test("Django's gettext catalogs compile: msgstr[n] past nplurals dropped with a warning, python-format not read as C; --strict refuses")
    func djangoBuilds() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = try content(copying: Self.fixtures + "/django/catalogs", in: dir)
        let out = dir + "/public"
        let r = try buildPlainAndStrict(c, out)
        for locale in ["fr", "pt_BR"] {
            #expect(warns(r.stderr, ["catalogs/\(locale)/django.po:", "msgstr[2]"]), "no warning names msgstr[2] in \(locale):\n\(r.stderr)")
        }
        for locale in ["en", "ja", "ru"] {
            #expect(!warns(r.stderr, ["catalogs/\(locale)/django.po:", "msgstr["]), "\(locale) has no extra plural form:\n\(r.stderr)")
        }
        guard r.status == 0 else { return }
        let m = try Harness.verifyPublished(out)
        // The first nplurals forms are kept: two in fr and pt-BR, one in ja, four in ru.
        for (locale, forms) in [("fr", 2), ("pt-BR", 2), ("ja", 1), ("ru", 4)] {
            let cat = try #require(try catalog(out, m, locale, "django"), "catalogs/\(locale)/django.plist not published")
            #expect(cat.locale == locale)
            #expect(cat.pluralForms?.contains("nplurals=\(forms)") == true, "\(locale): \(cat.pluralForms ?? "no Plural-Forms")")
            var plurals = 0
            for (key, value) in cat.strings {
                guard case .gettextPlural(let texts) = value else { continue }
                plurals += 1
                #expect(texts.count == forms, "\(locale) \(key): \(texts.count) forms")
            }
            #expect(plurals == 15, "\(locale): \(plurals) plural entries")
            // A python-format entry and the python-brace-format one, as written.
            #expect(cat.strings.values.contains { if case .string(let s) = $0 { s.contains("%(") } else { false } })
            #expect(cat.strings["The number of days must be between {min_days} and {max_days}."] != nil)
        }
    }

    /// What `scripts/gettext-reference.py` prints for one .po file.
    struct GettextReference: Decodable {
        struct Entry: Decodable {
            var key: String
            var inMo: Bool
            var text: String?
            var plural: [String]?
        }
        var pluralForms: String?
        var maxCount: Int
        var entries: [Entry]
    }

    @Test(
        "Django: every key reads as GNU gettext answers it (msgfmt --check-format, Python's GNUTranslations), counts 0…200",
        .enabled(if: RealCatalogTests.hasGettextTools, "needs python3 and GNU msgfmt on the PATH (Debian package gettext)"))
    func djangoMatchesGettext() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = try content(copying: Self.fixtures + "/django/catalogs", in: dir)
        let out = dir + "/public"
        let r = try publish(c, out)
        try #require(r.status == 0, "folio-build exit \(r.status):\n\(r.stderr)")
        let m = try Harness.verifyPublished(out)
        var mismatches: [String] = []
        var compared = 0
        for locale in Self.djangoLocales {
            let po = Self.fixtures + "/django/catalogs/\(locale)/django.po"
            let ref = try Harness.run("/usr/bin/env", ["python3", Harness.repoRoot + "/scripts/gettext-reference.py", po])
            try #require(ref.status == 0, "gettext-reference.py \(locale): exit \(ref.status)\n\(ref.stderr)")
            let reference = try JSONDecoder().decode(GettextReference.self, from: Data(ref.stdoutBytes))
            #expect(reference.entries.count == 348, "\(locale): \(reference.entries.count) entries")
            let tag = try #require(LocaleTag(locale)?.description)
            let published = try catalog(out, m, tag, "django")
            let lookup = published.map { CatalogLookup(chain: [$0]) }
            for entry in reference.entries {
                let shown = entry.key.replacingOccurrences(of: "\u{4}", with: "\\x04")
                guard entry.inMo else {
                    // gettext answers with the msgid: Folio must not publish a translation either.
                    if let value = published?.strings[entry.key] {
                        mismatches.append("\(locale) \"\(shown)\": not in the .mo, but published as \(value)")
                    }
                    continue
                }
                guard let lookup else {
                    mismatches.append("\(locale) \"\(shown)\": catalogs/\(tag)/django.plist is not published")
                    continue
                }
                compared += 1
                if let forms = entry.plural {
                    for (n, expected) in forms.enumerated() {
                        let got = lookup.text(for: entry.key, count: n)?.text
                        if got != expected {
                            mismatches.append("\(locale) \"\(shown)\" n=\(n): folio \(got.map { "\"\($0)\"" } ?? "nil"), gettext \"\(expected)\"")
                        }
                    }
                } else if let expected = entry.text {
                    let got = lookup.text(for: entry.key)?.text
                    if got != expected {
                        mismatches.append("\(locale) \"\(shown)\": folio \(got.map { "\"\($0)\"" } ?? "nil"), gettext \"\(expected)\"")
                    }
                }
            }
        }
        // en's msgstrs are all empty; the four other locales translate every key.
        #expect(compared == 4 * 348, "\(compared) keys compared")
        #expect(mismatches.isEmpty, "\(mismatches.count) lookups differ from GNU gettext:\n\(mismatches.prefix(25).joined(separator: "\n"))")
    }

    // MARK: Xcode String Catalog

    @Test("an Xcode String Catalog shaped like a real app's compiles with warnings; --strict refuses")
    func xcstringsBuilds() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = try content(copying: Self.fixtures + "/xcstrings/Localizable.xcstrings", in: dir)
        let out = dir + "/public"
        let r = try buildPlainAndStrict(c, out)
        let file = "catalogs/Localizable.xcstrings:"
        // A plural category the language does not have: dropped, and named.
        for locale in ["ja", "ko", "zh-Hans", "zh-Hant"] {
            #expect(warns(r.stderr, [file, "'one'", "in \(locale)"]), "no warning about 'one' in \(locale):\n\(r.stderr)")
        }
        // Translations that leave out an argument; a substitution skipped for the abbreviated count alone.
        for key in [
            "activity.started-reading %@", "activity.finished-book %@ %@", "%@ is already on your shelf",
            "profile.label.readers %lld %@",
        ] {
            #expect(warns(r.stderr, [file, "\"\(key)\""]), "no warning names \"\(key)\":\n\(r.stderr)")
        }
        guard r.status == 0 else { return }
        let m = try Harness.verifyPublished(out)
        for locale in ["en", "de", "fr", "ja", "ko", "pl", "uk", "zh-Hans", "zh-Hant"] {
            #expect(try catalog(out, m, locale, "Localizable") != nil, "catalogs/\(locale)/Localizable.plist not published")
        }
        // The dropped category is gone from the published value.
        let ja = try #require(try catalog(out, m, "ja", "Localizable"))
        #expect(ja.strings["library.books.count %lld"] == .plural([.other: "%lld冊"]))
        let zh = try #require(try catalog(out, m, "zh-Hant", "Localizable"))
        #expect(zh.strings["reader.pages-left %lld"] == .plural([.other: "還剩 %lld 頁"]))
    }

    @Test("lookups in the String Catalog: substitutions that use %2$@ beside their count, omitted arguments, devices, states")
    func xcstringsLookups() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = try content(copying: Self.fixtures + "/xcstrings/Localizable.xcstrings", in: dir)
        let out = dir + "/public"
        let r = try publish(c, out)
        try #require(r.status == 0, "folio-build exit \(r.status):\n\(r.stderr)")
        let m = try Harness.verifyPublished(out)
        func lookup(_ locale: String, device: String = "mac") throws -> CatalogLookup {
            CatalogLookup(chain: [try #require(try catalog(out, m, locale, "Localizable"), "no \(locale) catalog")], device: device)
        }
        func text(_ l: CatalogLookup, _ key: String, _ arguments: [FormatArgument]) -> String? {
            l.string(for: key, arguments: arguments)?.text
        }
        let (en, de, fr, ja, ko, pl, uk) = (
            try lookup("en"), try lookup("de"), try lookup("fr"), try lookup("ja"), try lookup("ko"), try lookup("pl"), try lookup("uk"))
        let enPhone = try lookup("en", device: "iphone")
        // Without argNum: the variant shows the second argument (the abbreviated count) only.
        #expect(text(en, "profile.label.readers %lld %@", [.int(1), .string("1")]) == "1 reader")
        #expect(text(en, "profile.label.readers %lld %@", [.int(1200), .string("1.2K")]) == "1.2K readers")
        // With argNum: %arg is the count, %2$@ the second argument.
        #expect(text(en, "shelf.label.books-by %lld %@", [.int(2), .string("Ann")]) == "2 books by Ann")
        #expect(text(en, "shelf.label.books-by %lld %@", [.int(1), .string("Ann")]) == "1 book by Ann")
        #expect(text(pl, "shelf.label.books-by %lld %@", [.int(3), .string("Ann")]) == "3 książki autorstwa Ann")
        #expect(text(pl, "shelf.label.books-by %lld %@", [.int(5), .string("Ann")]) == "5 książek autorstwa Ann")
        #expect(text(pl, "profile.label.readers %lld %@", [.int(22), .string("22")]) == "22 czytelników")
        // The owner before the count, in Japanese: with argNum the token is argument 1 (Xcode compiles it to
        // %1$#@books@), so %2$@ outside it still names the caller's second argument.
        #expect(text(ja, "shelf.label.books-by %lld %@", [.int(2), .string("Ann")]) == "Annの本 2冊")
        // Korean skips the substitution: only the abbreviated count shows.
        #expect(text(ko, "profile.label.readers %lld %@", [.int(1200), .string("1.2K")]) == "독자 1.2K명")
        // Translations that leave an argument out print what they have.
        #expect(text(fr, "activity.started-reading %@", [.string("Ann")]) == "a commencé à lire")
        #expect(text(uk, "activity.finished-book %@ %@", [.string("Ann"), .string("Emma")]) == "Книгу Emma дочитано")
        // English has no specifier; German counts with a substitution.
        #expect(text(en, "notifications.label.recommended %lld", [.int(3)]) == "recommended a book to you")
        #expect(text(de, "notifications.label.recommended %lld", [.int(1)]) == "hat dir ein Buch empfohlen")
        #expect(text(de, "notifications.label.recommended %lld", [.int(3)]) == "und 3 weitere haben dir ein Buch empfohlen")
        // `one` dropped in Japanese: 1 takes `other`.
        #expect(text(ja, "library.books.count %lld", [.int(1)]) == "1冊")
        // Device variations, one with plurals inside.
        #expect(text(en, "reader.hint.turn-page", []) == "Press → to turn the page")
        #expect(text(enPhone, "reader.hint.turn-page", []) == "Swipe to turn the page")
        #expect(text(en, "library.downloads %lld", [.int(1)]) == "1 book on this Mac")
        #expect(text(de, "library.downloads %lld", [.int(2)]) == "2 Bücher geladen")
        // English text as the key, no `en` localization: the translations are published.
        #expect(text(de, "Currently reading", []) == "Aktuelle Lektüre")
        #expect(text(de, "%@ is already on your shelf", [.string("Emma")]) == "Emma steht schon in deinem Regal")
        // `needs_review` is a translation; `new` with an empty value is not.
        #expect(text(fr, "settings.sync.title", []) == "Synchroniser la progression")
        #expect(ko.string(for: "settings.sync.title") == nil)
    }
}
