import FolioCatalogs
import FolioLocalization
import Testing

/// gettext's format flags, and Python's two format languages checked as `msgfmt -c` checks them.
@Suite("gettext formats")
struct GettextFormatTests {
    @Test("a #, line's flags: fuzzy and the first format flag decide how the entry is read and checked")
    func flags() throws {
        let text = """
            msgid ""
            msgstr "Plural-Forms: nplurals=2; plural=(n != 1);\\n"

            #, c-format
            msgid "a %d"
            msgstr "b %d"

            #, fuzzy, python-format
            msgid "%(x)s"
            msgstr "%(x)s"

            #: src/x.py:10
            #, python-brace-format
            msgid "{x}"
            msgstr "{x}"

            #,no-c-format ,  fuzzy
            msgid "100%"
            msgstr "100%"

            #, possible-c-format
            msgid "c %s"
            msgstr "d %s"

            #, objc-format
            msgid "e %@"
            msgstr "f %@"

            #, java-format
            msgid "g {0}"
            msgstr "h {0}"

            msgid "plain"
            msgstr "plain"
            """
        let (file, problems) = POFile.parse(Array(text.utf8))
        #expect(problems.isEmpty, "\(problems)")
        #expect(file.entries.map(\.format) == [.c, .python, .pythonBrace, .unchecked, .c, .apple, .unchecked, .unchecked])
        #expect(file.entries.map(\.fuzzy) == [false, true, false, true, false, false, false, false])
        let parsed = POFile.parseCatalog(Array(text.utf8))
        #expect(parsed.sections.first?.messages.map(\.format) == file.entries.map(\.format))
        #expect(FormatLanguage(gettextFlag: "fuzzy") == nil)
        #expect(FormatLanguage(gettextFlag: "no-python-brace-format") == .unchecked)
        #expect(FormatLanguage(gettextFlag: "possible-python-format") == .python)
    }

    @Test("python-format: named keys the source lacks, types a value cannot take, counts of unnamed directives")
    func pythonPercent() {
        func problem(_ source: String, _ translation: String, fewer: Bool = false) -> FormatMismatch? {
            PythonPercentFormat.compare(source: source, translation: translation, allowFewer: fewer)
        }
        // Accepted: reordered names, %s for anything, a left-out name is only an omission, literals.
        #expect(problem("%(a)s and %(b)d", "%(b)d et %(a)s") == nil)
        #expect(problem("%(num)d files", "%(num)s fichiers") == nil)
        #expect(problem("%(n)d%% done", "%(n)d %% fait") == nil)
        #expect(problem("%(n)d files", "des fichiers")?.isOmission == true)
        #expect(problem("%(a)s %(b)s", "%(a)s")?.isOmission == true)
        #expect(problem("%(a)s %(b)s", "%(a)s", fewer: true) == nil)
        #expect(problem("%d of %d", "%d sur %d") == nil)
        #expect(problem("%5.2f%%", "%.1f %%") == nil)
        // Errors: what Python raises for at run time.
        #expect(problem("%(count)s", "%(nombre)s")?.isOmission == false)
        #expect(problem("%(count)s", "%(count)d")?.isOmission == false, "a string passed for %s cannot take %d")
        #expect(problem("%d of %d", "%d")?.isOmission == false, "TypeError: not all arguments converted")
        #expect(problem("%d", "%d %d")?.isOmission == false)
        #expect(problem("%s", "plain")?.isOmission == false)
        #expect(problem("%(a)s", "%s")?.isOmission == false)
        #expect(problem("%(a)s", "%(a)y")?.message.contains("not a valid python-format string") == true)
        #expect(problem("%(a)s", "%(a")?.isOmission == false)
        #expect(problem("no directives", "100 %")?.isOmission == false)
        // A source Python would refuse is not compared (as msgfmt).
        #expect(problem("%(a)s %s", "anything %y") == nil)
    }

    @Test("python-brace-format: fields the source lacks, automatic and numbered fields mixed, lone braces")
    func pythonBrace() {
        func problem(_ source: String, _ translation: String) -> FormatMismatch? {
            PythonBraceFormat.compare(source: source, translation: translation, allowFewer: false)
        }
        #expect(problem("{name} joined {group}", "{group} : {name} a rejoint") == nil)
        #expect(problem("{0} of {1}", "{1} de {0}") == nil)
        #expect(problem("{} of {}", "{} de {}") == nil)
        #expect(problem("{user.name!r:>{width}}", "{user.name:<{width}}") == nil)
        #expect(problem("{{literal}} {x}", "{{littéral}} {x}") == nil)
        #expect(problem("{name} joined", "a rejoint")?.isOmission == true)
        #expect(problem("{name}", "{nom}")?.isOmission == false)
        #expect(problem("{} {}", "{} {} {}")?.isOmission == false)
        #expect(problem("{0}", "{} {0}")?.isOmission == false)
        #expect(problem("{x}", "{x} }")?.isOmission == false)
        #expect(problem("{x}", "{x")?.isOmission == false)
        #expect(problem("{x", "anything {y}") == nil)
    }

    @Test("lookups: Foundation's zero answers 0 in any language; gettext forms by Plural-Forms, unformatted")
    func lookups() throws {
        let en = CompiledCatalog(table: "T", locale: "en", pluralForms: nil, strings: [
            "items": .plural([.zero: "No items", .one: "%d item", .other: "%d items"]),
            "followers": .substitutions(format: "%#@f@", variables: [
                "f": PluralSubstitution(argument: 1, formatSpecifier: "lld", variants: [.one: "%2$@ has %lld follower", .other: "%2$@ has %lld followers"])
            ]),
        ])
        let lookup = CatalogLookup(chain: [en])
        #expect(lookup.string(for: "items", arguments: [.int(0)])?.text == "No items")
        #expect(lookup.string(for: "items", arguments: [.int(1)])?.text == "1 item")
        #expect(lookup.string(for: "items", arguments: [.int(2)])?.text == "2 items")
        #expect(lookup.text(for: "items", count: 0)?.text == "No items")
        #expect(lookup.text(for: "followers", count: 1)?.text == "%2$@ has %lld follower")
        let positional = CatalogLookup(chain: [CompiledCatalog(table: "T", locale: "en", strings: [
            "two": .substitutions(format: "%2$#@b@ in %1$#@a@", variables: [
                "a": PluralSubstitution(formatSpecifier: "d", variants: [.one: "one day", .other: "%d days"]),
                "b": PluralSubstitution(formatSpecifier: "d", variants: [.one: "one book", .other: "%d books"]),
            ])
        ])])
        #expect(positional.text(for: "two", count: 1)?.text == "one book in one day")
        #expect(positional.string(for: "two", arguments: [.int(3), .int(1)])?.text == "one book in 3 days")
        #expect(lookup.string(for: "followers", arguments: [.int(1), .string("Ann")])?.text == "Ann has 1 follower")
        #expect(lookup.string(for: "followers", arguments: [.int(7), .string("Ann")])?.text == "Ann has 7 followers")
        let ru = CompiledCatalog(
            table: "T", locale: "ru", pluralForms: "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
            strings: ["%d file": .gettextPlural(["%d файл", "%d файла", "%d файлов"])])
        let r = CatalogLookup(chain: [ru])
        #expect([1, 2, 5, 11, 21, 22, 25].map { r.text(for: "%d file", count: $0)?.text } == ["%d файл", "%d файла", "%d файлов", "%d файлов", "%d файл", "%d файла", "%d файлов"])
    }
}
