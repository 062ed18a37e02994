import FolioTestSupport
import FolioLocalization
import FolioSupport
import Foundation
import Testing

/// Severity as Xcode and `msgfmt -c` see it: what they accept is a warning (and an error with
/// `--strict`), what would go wrong at run time is an error; gettext entries by their format flag.
extension CatalogBuildTests {
    /// An Xcode String Catalog (table `Social`) in the shapes real apps' catalogs have: English text
    /// keys written from interpolations, an English value that leaves its count out, a substitution
    /// whose variants read another argument, a `one` variant in languages without that category.
    static func social(followersOther: String = "%2$@ has %arg followers", frenchFollow: String = "%#@count@ vous suivent") -> String {
        func unit(_ value: String) -> String { #"{ "stringUnit" : { "state" : "translated", "value" : "\#(value)" } }"# }
        func plural(_ variants: [(String, String)]) -> String {
            #"{ "variations" : { "plural" : { \#(variants.map { #""\#($0.0)" : \#(unit($0.1))"# }.joined(separator: ", ")) } } }"#
        }
        return #"""
            {
              "sourceLanguage" : "en",
              "strings" : {
                "%@ joined" : {
                  "localizations" : {
                    "de" : \#(unit("ist beigetreten")),
                    "en" : \#(unit("%@ joined"))
                  }
                },
                "followers %lld %@" : {
                  "localizations" : {
                    "en" : {
                      "stringUnit" : { "state" : "translated", "value" : "%#@followers@" },
                      "substitutions" : {
                        "followers" : {
                          "argNum" : 1,
                          "formatSpecifier" : "lld",
                          "variations" : { "plural" : {
                            "one" : \#(unit("%2$@ has %arg follower")),
                            "other" : \#(unit(followersOther))
                          } }
                        }
                      }
                    }
                  }
                },
                "follow.label %lld" : {
                  "localizations" : {
                    "en" : \#(unit("followed you")),
                    "fr" : {
                      "stringUnit" : { "state" : "translated", "value" : "\#(frenchFollow)" },
                      "substitutions" : {
                        "count" : {
                          "formatSpecifier" : "lld",
                          "variations" : { "plural" : {
                            "one" : \#(unit("%arg personne")),
                            "other" : \#(unit("%arg personnes"))
                          } }
                        }
                      }
                    }
                  }
                },
                "items %lld" : {
                  "localizations" : {
                    "en" : \#(plural([("zero", "No items"), ("one", "%lld item"), ("other", "%lld items")])),
                    "ko" : \#(plural([("one", "항목 %lld개"), ("other", "항목 %lld개")]))
                  }
                }
              },
              "version" : "1.0"
            }
            """#
    }

    static let russianPython = po("ru", pluralForms: russianForms, """
        #, python-format
        msgid "%(count)s sonnets read"
        msgstr "Прочитано сонетов: %(count)s"

        #, python-brace-format
        msgid "{name} joined"
        msgstr "{name} присоединился"

        msgid "reader.position"
        msgstr "Сонет %s"

        #, c-format
        msgid "%d sonnet"
        msgid_plural "%d sonnets"
        msgstr[0] "%d сонет"
        msgstr[1] "%d сонета"
        msgstr[2] "%d сонетов"
        msgstr[3] "%d сонета (дробное)"
        """)

    @Test("what Xcode and msgfmt accept compiles with warnings; --strict fails the build and publishes nothing")
    func acceptedWithWarnings() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let japanese = Self.englishPlurals.replacingOccurrences(of: "%d sonnet<", with: "%d 編<").replacingOccurrences(of: "%d sonnets<", with: "%d 編のソネット<")
        let c = content([
            "en/Localizable.strings": Self.english,
            "en/Localizable.stringsdict": Self.englishPlurals,
            "de/Localizable.strings": "\"reader.position\" = \"Sonett %d\";",
            "ja/Localizable.stringsdict": japanese,
            "ru/Localizable.po": Self.russianPython,
            "Social.xcstrings": Self.social(),
        ], in: dir)
        let r = try publish(c, dir + "/public")
        #expect(r.status == 0, "\(r.stderr)")
        for text in [
            // An omitted argument, in a translation and in the development language against the key.
            "content/catalogs/de/Localizable.strings:1:1: warning: \"reader.position\": the translation leaves out argument 2 (%d)",
            "warning: \"follow.label %lld\": the translation leaves out argument 1 (%lld)",
            "warning: \"%@ joined\": the translation leaves out argument 1 (%@)",
            // A category the language does not have: dropped, and said.
            "content/catalogs/ja/Localizable.stringsdict:", "\"list.count\": plural category 'one' not used in ja",
            "\"items %lld\": plural category 'one' not used in ko",
            // gettext forms beyond nplurals.
            "content/catalogs/ru/Localizable.po:", "has 4 plural forms but Plural-Forms says nplurals=3",
        ] {
            #expect(r.stderr.contains(text), "missing \(text) in:\n\(r.stderr)")
        }
        #expect(!r.stderr.contains(": error:"), "\(r.stderr)")
        // The python-format, python-brace-format and unflagged entries are fine as they are.
        let russianLines = r.stderr.split(separator: "\n").filter { $0.contains("ru/Localizable.po") }
        #expect(!russianLines.contains { $0.contains("format") || $0.contains("leaves out") }, "\(russianLines)")

        let m = try Harness.verifyPublished(dir + "/public")
        let ja = try catalog(dir + "/public", m, "catalogs/ja/Localizable.plist")
        #expect(ja.strings["list.count"] == .plural([.other: "%d 編のソネット"]))
        let ru = try catalog(dir + "/public", m, "catalogs/ru/Localizable.plist")
        #expect(ru.strings["%d sonnet"] == .gettextPlural(["%d сонет", "%d сонета", "%d сонетов"]))
        let ko = try catalog(dir + "/public", m, "catalogs/ko/Social.plist")
        #expect(ko.strings["items %lld"] == .plural([.other: "항목 %lld개"]))

        // Lookups: a variant reading the name beside its count; Foundation's zero for 0; a count the
        // English text leaves out, and the French substitution that shows it.
        let en = CatalogLookup(chain: [try catalog(dir + "/public", m, "catalogs/en/Social.plist")])
        #expect(en.string(for: "followers %lld %@", arguments: [.int(1), .string("Ann")])?.text == "Ann has 1 follower")
        #expect(en.string(for: "followers %lld %@", arguments: [.int(5), .string("Ann")])?.text == "Ann has 5 followers")
        #expect(en.string(for: "items %lld", arguments: [.int(0)])?.text == "No items")
        #expect(en.string(for: "items %lld", arguments: [.int(1)])?.text == "1 item")
        #expect(en.string(for: "follow.label %lld", arguments: [.int(3)])?.text == "followed you")
        let fr = CatalogLookup(chain: [try catalog(dir + "/public", m, "catalogs/fr/Social.plist")])
        #expect(fr.string(for: "follow.label %lld", arguments: [.int(3)])?.text == "3 personnes vous suivent")

        // --strict: the same content fails, every warning printed as an error, nothing published.
        let before = Harness.snapshot(dir + "/public")
        try FileIO.writeAtomically(Array("\"app.title\" = \"Sonette\";\n\"reader.position\" = \"Sonett %d\";".utf8), to: c + "/catalogs/de/Localizable.strings")
        let s = try publish(c, dir + "/public", ["--strict"])
        #expect(s.status == 1, "\(s.stderr)")
        #expect(s.stderr.contains("de/Localizable.strings:2:1: error: \"reader.position\": the translation leaves out argument 2 (%d)"), "\(s.stderr)")
        #expect(s.stderr.contains("[warning; an error with --strict]"), "\(s.stderr)")
        #expect(!s.stderr.contains(": warning:"), "\(s.stderr)")
        #expect(Harness.snapshot(dir + "/public") == before, "public/ changed")
        // Without --strict the same edit publishes.
        #expect(try publish(c, dir + "/public").status == 0)
    }

    @Test("what would go wrong at run time stays an error: another type, an argument not passed, a malformed specifier")
    func runTimeErrors() throws {
        let social = ["Social.xcstrings": Self.social()]
        // A variant that reads the name (argument 2, an object) as an integer.
        try expectRejected(["Social.xcstrings": Self.social(followersOther: "%2$d has %arg followers")], [
            "content/catalogs/Social.xcstrings:", "error: \"followers %lld %@\": %#@followers@[other] format specifiers do not match the source: the translation uses %2$d for argument 2 where the source uses %@",
        ])
        // The key says the app passes an integer; the French reads an object.
        try expectRejected(["Social.xcstrings": Self.social(frenchFollow: "%@ vous suit")], [
            "error: \"follow.label %lld\": format specifiers do not match the source: the translation uses %@ for argument 1 where the source uses %lld",
        ])
        try expectRejected(social.merging(["de/Localizable.strings": "\"reader.title\" = \"Sonett %2$@\";"]) { a, _ in a }, [
            "content/catalogs/de/Localizable.strings:1:1: error: \"reader.title\": format specifiers do not match the source: %2$@ reads argument 2, but the source passes 1",
        ])
        try expectRejected(["de/Localizable.strings": "\"reader.title\" = \"Sonett %y\";"], [
            "error: \"reader.title\": the translation has an invalid format specifier: invalid conversion",
        ])
        // gettext, by flag: a mapping key the source lacks, a brace field it lacks, another C type.
        func russian(_ entry: String) -> [String: String] { ["ru/Localizable.po": Self.po("ru", pluralForms: Self.russianForms, entry)] }
        try expectRejected(russian("#, python-format\nmsgid \"%(count)s sonnets read\"\nmsgstr \"Прочитано: %(число)s\""), [
            "content/catalogs/ru/Localizable.po:", "error: \"%(count)s sonnets read\": python-format: the translation uses %(число), which the source does not have",
        ])
        try expectRejected(russian("#, python-format\nmsgid \"%s of %s\"\nmsgstr \"%s\""), [
            "python-format: the translation has 1 directive(s), the source 2",
        ])
        try expectRejected(russian("#, python-brace-format\nmsgid \"{name} joined\"\nmsgstr \"{имя} присоединился\""), [
            "python-brace-format: the translation uses {имя}, which the source does not have",
        ])
        try expectRejected(russian("#, c-format\nmsgid \"%d sonnets\"\nmsgstr \"%s сонетов\""), [
            "error: \"%d sonnets\": format specifiers do not match the source: the translation uses %s for argument 1 where the source uses %d",
        ])
        // A plural without 'other' is still an error, in a substitution too.
        try expectRejected(["Social.xcstrings": Self.social().replacingOccurrences(of: "\"other\" : { \"stringUnit\" : { \"state\" : \"translated\", \"value\" : \"%arg personnes\" } }", with: "\"few\" : { \"stringUnit\" : { \"state\" : \"translated\", \"value\" : \"%arg personnes\" } }")], [
            "error: \"follow.label %lld\": %#@count@ plural variants need 'other'",
        ])
    }

    @Test("gettext entries without a format flag, or with no-c-format, are not checked (as msgfmt -c)")
    func gettextFlags() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = content([
            "en/Localizable.strings": Self.english,
            "ru/Localizable.po": Self.po("ru", pluralForms: Self.russianForms, """
                msgid "Sonnet %d of %d"
                msgstr "Сонет %s"

                #, no-c-format
                msgid "100% sure"
                msgstr "на 100% уверен %d"

                #, fuzzy, c-format
                msgid "%d left"
                msgstr "%s осталось"
                """),
        ], in: dir)
        let r = try publish(c, dir + "/public")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("Sonnet %d of %d\":") && !r.stderr.contains("100% sure\":") && !r.stderr.contains("%d left\":"), "\(r.stderr)")
        let ru = try catalog(dir + "/public", try Harness.verifyPublished(dir + "/public"), "catalogs/ru/Localizable.plist")
        #expect(ru.strings["Sonnet %d of %d"] == .string("Сонет %s"))
        #expect(ru.strings["%d left"] == nil, "a fuzzy entry is not published")
    }

    @Test("folio-build --version names the CLDR release its plural rules come from")
    func versionNamesCLDR() throws {
        let r = try Harness.run(build, ["--version"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("CLDR \(CLDRData.version)"), "\(r.stdout)")
        #expect(r.stdout.hasPrefix("folio-build "), "\(r.stdout)")
    }
}
