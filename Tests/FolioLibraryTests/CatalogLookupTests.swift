import Testing

@testable import FolioLocalization
@testable import FolioPlist

@Suite("CompiledCatalog and CatalogLookup")
struct CatalogLookupTests {
    static let summary = CatalogValue.substitutions(
        format: "Downloaded %#@sonnets@ in %#@seconds@",
        variables: [
            "sonnets": PluralSubstitution(formatSpecifier: "d", variants: [.one: "%d sonnet", .other: "%d sonnets"]),
            "seconds": PluralSubstitution(formatSpecifier: "d", variants: [.one: "%d second", .other: "%d seconds"]),
        ])

    static let english = CompiledCatalog(table: "Localizable", locale: "en", strings: [
        "app.title": .string("Sonnets"),
        "reader.position": .string("Sonnet %d of %d"),
        "list.count": .plural([.one: "%d sonnet", .other: "%d sonnets"]),
        "sync.summary": summary,
        "app.hint": .device(["iphone": .string("Tap a sonnet"), "other": .string("Select a sonnet")]),
    ])

    @Test("every value kind survives the published plist form, byte for byte deterministic")
    func roundTrip() throws {
        let russian = CompiledCatalog(
            table: "Localizable", locale: "ru", pluralForms: "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
            strings: ["list.count": .gettextPlural(["%d сонет", "%d сонета", "%d сонетов"]), "app.title": .string("Сонеты")])
        for catalog in [Self.english, russian] {
            let bytes = BinaryPlist.encode(catalog.plist)
            #expect(try CompiledCatalog(bytes: bytes) == catalog)
            #expect(BinaryPlist.encode(try CompiledCatalog(bytes: bytes).plist) == bytes)
        }
        let positional = CompiledCatalog(table: "T", locale: "ja", strings: [
            "s": .substitutions(format: "%#@b@ %#@a@", variables: [
                "a": PluralSubstitution(argument: 1, formatSpecifier: "lld", variants: [.other: "%lld 編"]),
                "b": PluralSubstitution(argument: 2, formatSpecifier: "lld", variants: [.other: "%lld 秒"]),
            ])])
        #expect(try CompiledCatalog(plist: positional.plist) == positional)
    }

    @Test("a catalog that breaks the schema is rejected with the key path")
    func schemaErrors() {
        func reject(_ value: PlistValue, _ text: String) {
            #expect(throws: CatalogFormatError.self) { try CompiledCatalog(plist: value) }
            do { _ = try CompiledCatalog(plist: value) } catch { #expect(error.message.contains(text), "\(error.message)") }
        }
        let base: [String: PlistValue] = ["schemaVersion": .int(1), "table": .string("T"), "locale": .string("en")]
        reject(.array([]), "dictionary")
        reject(.dict(base.merging(["schemaVersion": .int(2), "strings": .dict([:])]) { $1 }), "schemaVersion 2")
        reject(.dict(base.merging(["strings": .dict(["k": .dict(["several": .string("x"), "other": .string("y")])])]) { $1 }),
               "k: 'several' is not a CLDR plural category")
        reject(.dict(base.merging(["strings": .dict(["k": .dict(["one": .string("x")])])]) { $1 }), "k: plural variants need 'other'")
        reject(.dict(base.merging(["strings": .dict(["k": .int(3)])]) { $1 }), "k: a value must be a string")
        reject(.dict(base.merging(["strings": .dict(["k": .dict(["forms": .array([])])])]) { $1 }), "k.forms")
    }

    @Test("CLDR plural forms pick by the count: English, Polish, Welsh")
    func cldrPlurals() {
        let en = CatalogLookup(chain: [Self.english])
        #expect(en.string(for: "list.count", arguments: [.int(1)])?.text == "1 sonnet")
        #expect(en.string(for: "list.count", arguments: [.int(0)])?.text == "0 sonnets")
        #expect(en.string(for: "list.count", arguments: [.int(154)])?.text == "154 sonnets")
        let pl = CatalogLookup(chain: [CompiledCatalog(table: "T", locale: "pl", strings: [
            "n": .plural([.one: "%d sonet", .few: "%d sonety", .many: "%d sonetów", .other: "%d sonetu"])])])
        for (n, text) in [(1, "1 sonet"), (2, "2 sonety"), (5, "5 sonetów"), (12, "12 sonetów"), (22, "22 sonety"), (25, "25 sonetów")] {
            #expect(pl.string(for: "n", arguments: [.int(Int64(n))])?.text == text, "pl \(n)")
        }
        let cy = CatalogLookup(chain: [CompiledCatalog(table: "T", locale: "cy", strings: [
            "n": .plural([.zero: "z", .one: "o", .two: "t", .few: "f", .many: "m", .other: "x"])])])
        for (n, text) in [(0, "z"), (1, "o"), (2, "t"), (3, "f"), (6, "m"), (4, "x"), (7, "x")] {
            #expect(cy.string(for: "n", arguments: [.int(Int64(n))])?.text == text, "cy \(n)")
        }
    }

    @Test("gettext plural forms pick by the catalog's Plural-Forms (Russian 1, 2, 5, 11, 21, 22, 25)")
    func gettextPlurals() {
        let ru = CatalogLookup(chain: [CompiledCatalog(
            table: "T", locale: "ru",
            pluralForms: "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
            strings: ["n": .gettextPlural(["%d сонет", "%d сонета", "%d сонетов"])])])
        for (n, text) in [(1, "1 сонет"), (2, "2 сонета"), (5, "5 сонетов"), (11, "11 сонетов"), (21, "21 сонет"), (22, "22 сонета"), (25, "25 сонетов")] {
            #expect(ru.string(for: "n", arguments: [.int(Int64(n))])?.text == text, "ru \(n)")
        }
        #expect(ru.pluralChoice(for: "n", count: 22) == "form 1")
    }

    @Test("substitutions: each %#@var@ takes its own count, in order or by argument number")
    func substitutions() {
        let en = CatalogLookup(chain: [Self.english])
        #expect(en.string(for: "sync.summary", arguments: [.int(3), .int(1)])?.text == "Downloaded 3 sonnets in 1 second")
        #expect(en.string(for: "sync.summary", arguments: [.int(1), .int(12)])?.text == "Downloaded 1 sonnet in 12 seconds")
        let ja = CatalogLookup(chain: [CompiledCatalog(table: "T", locale: "ja", strings: [
            "s": .substitutions(format: "%#@seconds@で%#@sonnets@", variables: [
                "sonnets": PluralSubstitution(argument: 1, formatSpecifier: "d", variants: [.other: "%d編"]),
                "seconds": PluralSubstitution(argument: 2, formatSpecifier: "d", variants: [.other: "%d秒"]),
            ])])])
        #expect(ja.string(for: "s", arguments: [.int(3), .int(7)])?.text == "7秒で3編")
        // Positional tokens (stringsdict `%2$#@x@`) take the argument they name.
        let positional = CatalogLookup(chain: [CompiledCatalog(table: "T", locale: "en", strings: [
            "s": .substitutions(format: "%2$#@seconds@, %1$#@sonnets@", variables: [
                "sonnets": PluralSubstitution(formatSpecifier: "d", variants: [.one: "%d sonnet", .other: "%d sonnets"]),
                "seconds": PluralSubstitution(formatSpecifier: "d", variants: [.one: "%d second", .other: "%d seconds"]),
            ])])])
        #expect(positional.string(for: "s", arguments: [.int(1), .int(9)])?.text == "9 seconds, 1 sonnet")
        // A literal percent in the chosen text survives.
        let pct = CatalogLookup(chain: [CompiledCatalog(table: "T", locale: "en", strings: [
            "p": .substitutions(format: "%#@n@ done", variables: [
                "n": PluralSubstitution(formatSpecifier: "d", variants: [.other: "%d%%"])])])])
        #expect(pct.string(for: "p", arguments: [.int(40)])?.text == "40% done")
    }

    @Test("the chain answers from the first locale that has the key; device variants pick mac, then other")
    func chainAndDevices() {
        let es = CompiledCatalog(table: "T", locale: "es", strings: ["a": .string("Cancelar"), "b": .string("Inténtalo de nuevo")])
        let es419 = CompiledCatalog(table: "T", locale: "es-419", strings: ["b": .string("Volver a intentar")])
        let lookup = CatalogLookup(chain: [es419, es, Self.english])
        #expect(lookup.locales == ["es-419", "es", "en"])
        #expect(lookup.string(for: "b")?.text == "Volver a intentar")
        #expect(lookup.string(for: "b")?.locale == "es-419")
        #expect(lookup.string(for: "a")?.locale == "es")
        #expect(lookup.string(for: "app.title")?.locale == "en")
        #expect(lookup.string(for: "missing") == nil)
        #expect(lookup.string(for: "reader.position", arguments: [.int(18), .int(154)])?.text == "Sonnet 18 of 154")
        #expect(CatalogLookup(chain: [Self.english]).string(for: "app.hint")?.text == "Select a sonnet")
        #expect(CatalogLookup(chain: [Self.english], device: "iphone").string(for: "app.hint")?.text == "Tap a sonnet")
    }

    @Test("the index lists tables, locales and coverage, and reads back")
    func index() throws {
        let index = CatalogIndex(
            developmentLanguage: "en", tables: ["Localizable"], locales: ["en", "es", "es-419"],
            coverage: ["en": ["Localizable": .init(translated: 29, total: 29)], "es": ["Localizable": .init(translated: 28, total: 29)],
                       "es-419": ["Localizable": .init(translated: 6, total: 29)]])
        let back = try CatalogIndex(plist: try BinaryPlist.decode(BinaryPlist.encode(index.plist)))
        #expect(back == index)
        #expect(back.locales(for: "Localizable") == ["en", "es", "es-419"])
        #expect(back.locales(for: "Other") == [])
        #expect(index.coverage["es-419"]?["Localizable"]?.percent == 20)
    }
}
