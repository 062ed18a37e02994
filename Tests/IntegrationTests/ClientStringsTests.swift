import FolioTestSupport
import FolioPlist
import FolioSupport
import Foundation
import Testing

/// `folio strings` and the localized labels of `folio read`, against the real edge and the real catalogs.
@Suite("folio strings", .serialized)
struct ClientStringsTests {
    /// Runs folio with a chosen locale environment (nothing inherited from the test runner's).
    static func folio(_ args: [String], cache: String, edge: String, lang: String? = nil, lcAll: String? = nil) throws -> Harness.Output {
        try ClientTest.folio(args, cache: cache, edge: edge, env: ["LC_ALL": lcAll ?? "", "LANG": lang ?? ""])
    }

    /// A synced cache of the repository's content.
    static func synced(_ body: (_ cache: String, _ edge: String) throws -> Void) throws {
        let root = try ClientRoot.make("client-strings")
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        let sync = try folio(["sync"], cache: cache, edge: edge.baseURL)
        #expect(sync.status == 0, "\(sync.stderr)")
        try body(cache, edge.baseURL)
    }

    @Test("a key with --count prints the plural form the locale's rules pick (gettext for ru, CLDR for pl and cy)")
    func plurals() throws {
        try Self.synced { cache, edge in
            for (n, text) in [(1, "1 сонет"), (2, "2 сонета"), (5, "5 сонетов"), (11, "11 сонетов"), (21, "21 сонет"), (22, "22 сонета")] {
                let r = try Self.folio(["strings", "list.count", "--count", String(n), "--locale", "ru"], cache: cache, edge: edge)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stdout == text + "\n", "ru \(n)")
                #expect(r.stderr.isEmpty, "\(r.stderr)")
            }
            let en1 = try Self.folio(["strings", "list.count", "--count", "1"], cache: cache, edge: edge, lang: "C")
            #expect(en1.stdout == "1 sonnet\n")
            let en2 = try Self.folio(["strings", "list.count", "--count", "154"], cache: cache, edge: edge, lang: "C")
            #expect(en2.stdout == "154 sonnets\n")
            // Without --count a plural key lists its forms, labelled by category.
            let forms = try Self.folio(["strings", "list.count", "--locale", "en"], cache: cache, edge: edge)
            #expect(forms.stdout == "[one] %d sonnet\n[other] %d sonnets\n", "\(forms.stdout)")
            // Two counts in one string, each filling its placeholder in order.
            let summary = try Self.folio(["strings", "sync.summary", "--locale", "en", "--count", "1", "--count", "5"], cache: cache, edge: edge)
            #expect(summary.stdout.hasPrefix("Downloaded 1 sonnet in 5 seconds"), "\(summary.stdout)")
            let other = try Self.folio(["strings", "sync.summary", "--locale", "en", "--count", "3", "--count", "1"], cache: cache, edge: edge)
            #expect(other.stdout.hasPrefix("Downloaded 3 sonnets in 1 second"), "\(other.stdout)")
        }
    }

    @Test("--count given fewer or more times than a string has plural placeholders: an error that says how many")
    func countsPerPlaceholder() throws {
        try Self.synced { cache, edge in
            for counts in [["1"], ["1", "2", "3"]] {
                let out = try Self.folio(["strings", "sync.summary", "--locale", "en"] + counts.flatMap { ["--count", $0] }, cache: cache, edge: edge)
                #expect(out.status == 1, "\(out.status) \(out.stdout)")
                #expect(
                    out.stderr.contains("\"sync.summary\" takes 2 counts (%#@sonnets@, %#@seconds@, in order), got \(counts.count); give them as --count N --count N"),
                    "\(out.stderr)")
            }
            let plural = try Self.folio(["strings", "list.count", "--count", "1", "--count", "2"], cache: cache, edge: edge, lang: "C")
            #expect(plural.status == 1 && plural.stderr.contains("\"list.count\" takes 1 count, got 2"), "\(plural.stderr)")
            let json = try ClientTest.json(try Self.folio(["strings", "sync.summary", "--locale", "en", "--count", "2", "--count", "1", "--json"], cache: cache, edge: edge))
            #expect(json["text"]?.stringValue?.hasPrefix("Downloaded 2 sonnets in 1 second") == true, "\(json)")
            #expect(json["counts"] == .array([.int(2), .int(1)]))
        }
    }

    @Test("the locale comes from --locale, else LC_ALL, else LANG; fallback is said on stderr")
    func localeAndFallback() throws {
        try Self.synced { cache, edge in
            let pt = try Self.folio(["strings", "status.source.cache"], cache: cache, edge: edge, lang: "pt_BR.UTF-8")
            #expect(pt.status == 0, "\(pt.stderr)")
            let ptExpected = try Self.folio(["strings", "status.source.cache", "--locale", "pt-BR"], cache: cache, edge: edge)
            #expect(pt.stdout == ptExpected.stdout)
            #expect(pt.stdout != "Saved copy\n")
            // LC_ALL beats LANG.
            let fr = try Self.folio(["strings", "status.source.cache"], cache: cache, edge: edge, lang: "de_DE.UTF-8", lcAll: "fr_FR.UTF-8")
            #expect(fr.stdout == "Copie enregistrée\n")
            // C means the development language, with nothing to say about fallback.
            let c = try Self.folio(["strings", "status.source.cache"], cache: cache, edge: edge, lang: "C")
            #expect(c.stdout == "Saved copy\n")
            #expect(c.stderr.isEmpty)

            // es-MX → es-419 (CLDR parent), and a key es-419 does not override comes from es.
            let retry = try Self.folio(["strings", "button.retry", "--locale", "es-MX"], cache: cache, edge: edge)
            #expect(retry.stdout == "Volver a intentar\n")
            #expect(retry.stderr.contains("no Localizable catalog for es-MX; answering from es-419"), "\(retry.stderr)")
            let cancel = try Self.folio(["strings", "button.cancel", "--locale", "es-MX"], cache: cache, edge: edge)
            #expect(cancel.stdout == "Cancelar\n")
            #expect(cancel.stderr.contains("\"button.cancel\" is not translated in es-419; answering from es"), "\(cancel.stderr)")
            // Spain's Spanish stays Spain's.
            #expect(try Self.folio(["strings", "button.retry", "--locale", "es-ES"], cache: cache, edge: edge).stdout == "Reintentar\n")
            // zh-HK is Traditional Chinese, never Simplified.
            let hk = try Self.folio(["strings", "app.title", "--locale", "zh-HK"], cache: cache, edge: edge)
            #expect(hk.stdout == "十四行詩\n")
            #expect(hk.stderr.contains("answering from zh-Hant"), "\(hk.stderr)")
            // A language with no catalog answers in the development language and says so.
            let sv = try Self.folio(["strings", "app.title", "--locale", "sv"], cache: cache, edge: edge)
            #expect(sv.stdout == "Sonnets\n")
            #expect(sv.stderr.contains("no Localizable catalog for sv; answering from en"))
            // An untranslated key in ru falls back to en.
            let ru = try Self.folio(["strings", "sync.summary", "--locale", "ru", "--count", "2", "--count", "3"], cache: cache, edge: edge)
            #expect(ru.stdout.hasPrefix("Downloaded 2 sonnets"), "\(ru.stdout)")
            #expect(ru.stderr.contains("\"sync.summary\" is not translated in ru; answering from en"), "\(ru.stderr)")
        }
    }

    @Test("every key of a table, JSON output, and clear errors")
    func listingJSONAndErrors() throws {
        try Self.synced { cache, edge in
            let all = try Self.folio(["strings", "--locale", "fr"], cache: cache, edge: edge)
            #expect(all.status == 0)
            let lines = all.stdout.split(separator: "\n")
            #expect(lines.contains("app.title = \"Sonnets\""))
            #expect(lines.contains("list.count[one] = \"%d sonnet\""))
            #expect(lines.filter { $0.hasPrefix("button.") }.count == 7)
            let counted = try Self.folio(["strings", "--locale", "fr", "--count", "2"], cache: cache, edge: edge)
            #expect(counted.stdout.split(separator: "\n").contains("list.count = \"2 sonnets\""))

            let json = try ClientTest.json(try Self.folio(["strings", "list.count", "--locale", "pl", "--count", "22", "--json"], cache: cache, edge: edge))
            #expect(json["key"] == .string("list.count"))
            #expect(json["locale"] == .string("pl"))
            #expect(json["requested"] == .string("pl"))
            #expect(json["count"] == .int(22))
            #expect(json["plural"] == .string("form 1"))
            #expect(json["text"]?.stringValue?.hasPrefix("22 ") == true)
            #expect(json["fallbackChain"] == .array([.string("pl"), .string("en")]))
            let table = try ClientTest.json(try Self.folio(["strings", "--locale", "es-419", "--json"], cache: cache, edge: edge))
            #expect(table["strings"]?["button.retry"]?["locale"] == .string("es-419"))
            #expect(table["strings"]?["button.cancel"]?["locale"] == .string("es"))
            #expect(table["strings"]?["sync.summary"]?["locale"] == .string("en"))

            let unknown = try Self.folio(["strings", "no.such.key", "--locale", "fr"], cache: cache, edge: edge)
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("no key \"no.such.key\" in Localizable"))
            let table2 = try Self.folio(["strings", "--table", "Nope"], cache: cache, edge: edge)
            #expect(table2.status == 1)
            #expect(table2.stderr.contains("there is no table Nope"))
            let badLocale = try Self.folio(["strings", "--locale", "not a locale!"], cache: cache, edge: edge)
            #expect(badLocale.status != 0)
            #expect(badLocale.stderr.contains("is not a locale"))
        }
    }

    @Test("read labels its origin in the reader's language; the poem itself is unchanged")
    func readLabels() throws {
        try Self.synced { cache, edge in
            let fr = try Self.folio(["read", "sonnet", "18", "--verbose", "--offline"], cache: cache, edge: edge, lang: "fr_FR.UTF-8")
            #expect(fr.status == 0, "\(fr.stderr)")
            #expect(fr.stdout == (try ClientTest.sourceText(18)))
            #expect(fr.stderr.contains("Copie enregistrée"), "\(fr.stderr)")
            let en = try Self.folio(["read", "sonnet", "18", "--verbose", "--offline"], cache: cache, edge: edge, lang: "C")
            #expect(en.stderr.contains("Saved copy · Version"), "\(en.stderr)")
            let missing = try Self.folio(["read", "sonnet", "999", "--offline"], cache: cache, edge: edge, lang: "fr_FR.UTF-8")
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("Le sonnet 999 n’existe pas."), "\(missing.stderr)")
        }
        // With the edge gone and a stale cache, read says it is offline, in the reader's language.
        let root = try ClientRoot.make("client-strings-offline")
        defer { root.cleanup() }
        let cache = root.dir + "/cache"
        do {
            let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
            defer { edge.stop() }
            #expect(try Self.folio(["sync"], cache: cache, edge: edge.baseURL).status == 0)
        }
        // Age the cache past its max-age so read tries the (now unreachable) edge first.
        let state = cache + "/state.plist"
        var plist = try PlistValue.decode(try FileIO.read(state))
        if case .dict(var d) = plist {
            d["validatedAt"] = .date(Date(timeIntervalSince1970: 1_000_000))
            plist = .dict(d)
        }
        try FileIO.writeAtomically(BinaryPlist.encode(plist), to: state)
        let offline = try Self.folio(["read", "sonnet", "18"], cache: cache, edge: ClientTest.unreachableEdge, lang: "de_DE.UTF-8")
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stderr.contains("Offline"), "\(offline.stderr)")
    }
}
