import FolioHTTPCore
import FolioLocalization
import Foundation
import Testing

@testable import FolioEdge

/// `Accept-Language` parsing (RFC 9110 §12.5.4) and the choice of a catalog locale
/// (RFC 4647 lookup through CLDR parent locales, `q=0` exclusions, the development language).
@Suite("Accept-Language negotiation")
struct LanguageNegotiationTests {
    // MARK: Parsing

    /// The members as "range;q" strings, in the order they are used.
    static func parsed(_ header: String) -> [String] {
        AcceptLanguage.members(header).map { "\($0.range);\($0.q)" }
    }

    @Test func weightsAndOrder() {
        #expect(Self.parsed("da, en-GB;q=0.8, en;q=0.7") == ["da;1000", "en-GB;800", "en;700"])
        // Highest weight first; equal weights keep the header's order.
        #expect(Self.parsed("en;q=0.5, fr, de;q=0.5, it") == ["fr;1000", "it;1000", "en;500", "de;500"])
        #expect(Self.parsed("a;q=0.001, b;q=0.01, c;q=0.1") == ["c;100", "b;10", "a;1"])
        // Every qvalue form.
        #expect(Self.parsed("a;q=1, b;q=1., c;q=1.000, d;q=0., e;q=0, f;q=0.999") == ["a;1000", "b;1000", "c;1000", "f;999", "d;0", "e;0"])
    }

    @Test func zeroWeightIsKeptAsNotAcceptable() {
        #expect(Self.parsed("fr;q=0") == ["fr;0"])
        #expect(Self.parsed("fr;q=0.000, de") == ["de;1000", "fr;0"])
    }

    @Test func wildcard() {
        #expect(Self.parsed("*") == ["*;1000"])
        #expect(Self.parsed("fr, *;q=0") == ["fr;1000", "*;0"])
        #expect(Self.parsed("*-US, **") == [], "a wildcard is only ever the whole range")
    }

    @Test func whitespaceAndEmptyElements() {
        #expect(Self.parsed("  fr ;  q=0.3 ,\tde\t") == ["de;1000", "fr;300"])
        #expect(Self.parsed(" , ,fr,, ") == ["fr;1000"])
        #expect(Self.parsed("") == [])
        #expect(Self.parsed("   ") == [])
        #expect(Self.parsed("fr;q=0.5 ;q=0.7") == ["fr;700"], "the last weight wins")
    }

    @Test func malformedMembersAreIgnored() {
        let header = "en_US, 123, fr-, -fr, en--GB, en;q=2, en;q=0.1234, en;q=1.5, en;q=-1, de;foo=bar, abcdefghi, "
            + "en-abcdefghi, it;q=, es;q, es;, nl q=0.5, ja;q =0.5, é, en-US;q=0.5;x, pt"
        #expect(Self.parsed(header) == ["pt;1000"])
        // Nothing but malformed members: as if there were no preference.
        #expect(Self.parsed("en_US, ;q=0.5") == [])
    }

    @Test func caseIsKeptForMatching() {
        #expect(Self.parsed("EN-gb;Q=0.5, zh-HANT") == ["zh-HANT;1000", "EN-gb;500"])
    }

    @Test func longHeadersAreBounded() {
        let many = (0..<40).map { "l\(Character(UnicodeScalar(UInt8(97 + $0 % 26))))x\($0 / 26 == 0 ? "" : "y")" }
        let parsed = Self.parsed(many.joined(separator: ","))
        #expect(parsed.count == AcceptLanguage.maxRanges)
        #expect(parsed.first == "lax;1000")
        #expect(Self.parsed(String(repeating: "en-", count: 30) + "en") == [], "over \(AcceptLanguage.maxRangeBytes) bytes")
    }

    // MARK: Choosing

    static func chooser(_ locales: [String], dev: String? = "en") -> LocaleChooser {
        LocaleChooser(locales: locales.compactMap { LocaleTag($0) }, developmentLanguage: dev.flatMap { LocaleTag($0) })
    }

    /// The locale chosen for a header (nil: no header).
    static func choice(_ header: String?, _ locales: [String], dev: String? = "en") -> String {
        let c = chooser(locales, dev: dev)
        return c.names[c.choose(header.map { HeaderValue($0) })]
    }

    @Test func spanishThroughLatinAmerica() {
        #expect(Self.choice("es-MX", ["en", "es", "es-419", "fr"]) == "es-419")
        #expect(Self.choice("es-mx", ["en", "es", "es-419", "fr"]) == "es-419")
        #expect(Self.choice("es-MX", ["en", "es", "fr"]) == "es")
        #expect(Self.choice("es-ES", ["en", "es", "es-419"]) == "es")
        #expect(Self.choice("es", ["en", "es-419"]) == "en", "lookup never goes to a more specific tag")
    }

    @Test func englishVariants() {
        #expect(Self.choice("en-GB", ["en", "fr"], dev: "fr") == "en")
        #expect(Self.choice("en-GB", ["en", "en-GB", "fr"]) == "en-GB")
        #expect(Self.choice("en-AU", ["en", "en-GB", "fr"]) == "en", "en-AU → en-001 → en")
        #expect(Self.choice("en-US", ["de", "en"], dev: "de") == "en")
    }

    @Test func chineseScriptsNeverCross() {
        let both = ["en", "zh-Hans", "zh-Hant"]
        #expect(Self.choice("zh-HK", both) == "zh-Hant")
        #expect(Self.choice("zh-TW", both) == "zh-Hant")
        #expect(Self.choice("zh-MO", both) == "zh-Hant")
        #expect(Self.choice("zh-Hant-HK", both) == "zh-Hant")
        #expect(Self.choice("zh-CN", both) == "zh-Hans")
        #expect(Self.choice("zh", both) == "zh-Hans")
        #expect(Self.choice("zh-SG", both) == "zh-Hans")
        // Only Simplified is published: a Traditional reader gets the development language.
        #expect(Self.choice("zh-HK", ["en", "zh-Hans"]) == "en")
        #expect(Self.choice("zh-TW, ja;q=0.5", ["en", "ja", "zh-Hans"]) == "ja")
        // A regional locale answers to its script-explicit form.
        #expect(Self.choice("zh-Hant-TW", ["en", "zh-TW"]) == "zh-TW")
        #expect(Self.choice("zh-Hant-HK", ["en", "zh-HK", "zh-Hans"]) == "zh-HK")
    }

    @Test func portugueseThroughPortugal() {
        #expect(Self.choice("pt-AO", ["en", "pt", "pt-PT"]) == "pt-PT")
        #expect(Self.choice("pt-AO", ["en", "pt"]) == "pt")
        #expect(Self.choice("pt-AO", ["en", "pt-BR"]) == "en")
        #expect(Self.choice("pt", ["en", "pt-BR", "pt-PT"]) == "en")
        #expect(Self.choice("pt-BR", ["en", "pt-BR", "pt-PT"]) == "pt-BR")
        #expect(Self.choice("PT_br, pt-br", ["en", "pt-BR"]) == "pt-BR", "the POSIX spelling is malformed and ignored")
    }

    @Test func developmentLanguageDefault() {
        let locales = ["de", "en", "fr"]
        #expect(Self.choice(nil, locales, dev: "fr") == "fr")
        #expect(Self.choice("", locales, dev: "fr") == "fr")
        #expect(Self.choice("*", locales, dev: "fr") == "fr")
        #expect(Self.choice("ja, ko", locales, dev: "fr") == "fr")
        #expect(Self.choice("en_US", locales, dev: "fr") == "fr", "malformed: no preference, never an error")
        // `*` followed by ranges is skipped (RFC 4647 §3.4).
        #expect(Self.choice("*, de", locales, dev: "fr") == "de")
        // No (readable) index: en if available, else the alphabetically first.
        #expect(Self.choice(nil, locales, dev: nil) == "en")
        #expect(Self.choice(nil, ["fr", "de"], dev: nil) == "de")
        // A development language through its fallback chain, then its language.
        #expect(Self.choice(nil, ["de", "en"], dev: "en-US") == "en")
        #expect(Self.choice(nil, ["en-GB", "fr"], dev: "en") == "en-GB")
        #expect(Self.choice(nil, ["es-419", "fr"], dev: "es-MX") == "es-419")
        #expect(Self.choice(nil, ["de", "fr"], dev: "ja") == "de")
    }

    @Test func weightsDecide() {
        let locales = ["de", "en", "es", "fr"]
        #expect(Self.choice("fr;q=0.5, es;q=0.9", locales) == "es")
        #expect(Self.choice("fr, es", locales) == "fr")
        #expect(Self.choice("ja, fr;q=0.1", locales) == "fr")
        #expect(Self.choice("es-MX;q=0.2, de-AT;q=0.3", locales) == "de")
    }

    @Test func zeroWeightExcludes() {
        // Never chosen through fallback to it…
        #expect(Self.choice("es-MX, es;q=0", ["en", "es"]) == "en")
        #expect(Self.choice("es-MX, es-419;q=0", ["en", "es", "es-419"]) == "es")
        #expect(Self.choice("fr, en;q=0", ["de", "en"]) == "de", "the development language is excluded")
        #expect(Self.choice("EN;Q=0", ["de", "en"]) == "de")
        // …the more specific range wins…
        #expect(Self.choice("en;q=0, en-GB", ["en", "en-GB"]) == "en-GB")
        #expect(Self.choice("en-GB, en;q=0", ["en", "en-GB"]) == "en-GB")
        // …and `*;q=0` excludes whatever is not listed.
        #expect(Self.choice("*;q=0, fr", ["en", "fr"]) == "fr")
        #expect(Self.choice("de;q=0.5, *;q=0", ["en", "de"]) == "de")
        // …unless nothing else exists: then the default, never 406.
        #expect(Self.choice("*;q=0", ["en", "fr"]) == "en")
        #expect(Self.choice("ja, *;q=0", ["en", "fr"]) == "en")
        #expect(Self.choice("en;q=0, fr;q=0", ["en", "fr"], dev: "fr") == "fr")
    }

    /// Without exclusions the choice is `LocaleMatcher.lookup` over the ranges in weight order, for
    /// every tag CLDR names (the precomputed answers) and for tags resolved per request.
    @Test func agreesWithLocaleMatcherLookup() {
        let sets: [[String]] = [
            ["en", "es", "es-419", "fr", "pt-BR", "pt-PT", "zh-Hans", "zh-Hant"],
            ["de", "en", "en-GB", "pt", "sr-Latn", "sr", "zh-TW", "zh-CN"],
            ["en"],
            ["en", "en-IN", "no", "he"],
        ]
        var tags = LocaleChooser.cldrTags.map(\.description)
        tags += ["nb", "nb-NO", "nn-NO", "hi-Latn", "hi-Latn-IN", "hi-IN", "iw-IL", "iw", "he-IL", "sh-RS", "tl-PH", "de-AT", "nl-BE", "de-CH-1996", "iw", "in-ID", "en-US-x-private", "sr-ME", "zh-US", "es-ES-u-co-trad", "xx-YY", "qaa"]
        for set in sets {
            let available = set.compactMap { LocaleTag($0) }
            let dev = LocaleTag("en")!
            let c = LocaleChooser(locales: available, developmentLanguage: dev)
            var mismatches: [String] = []
            for tag in tags {
                guard let requested = LocaleTag(tag) else { continue }
                let expected = LocaleMatcher.lookup([requested], available: available, developmentLanguage: dev)
                let got = c.locales[c.choose(HeaderValue(tag))]
                if got != expected { mismatches.append("\(tag): \(got) ≠ \(expected)") }
                // Case never matters.
                let upper = c.locales[c.choose(HeaderValue(tag.uppercased()))]
                if upper != expected { mismatches.append("\(tag.uppercased()): \(upper) ≠ \(expected)") }
            }
            #expect(mismatches.isEmpty, "\(set): \(mismatches.prefix(10))")
            #expect(c.knownCount > 500)
        }
        // Several ranges: the first that finds something, as lookup over the list.
        let available = ["en", "fr", "zh-Hant"].compactMap { LocaleTag($0) }
        let c = LocaleChooser(locales: available, developmentLanguage: LocaleTag("en"))
        for header in ["ja, zh-HK, fr", "fr;q=0.4, ja;q=0.9, zh-TW;q=0.5", "ko, ja"] {
            let ranges = AcceptLanguage.members(header).compactMap { LocaleTag($0.range) }
            let expected = LocaleMatcher.lookup(ranges, available: available, developmentLanguage: LocaleTag("en")!)
            #expect(c.locales[c.choose(HeaderValue(header))] == expected, "\(header)")
        }
    }

    // MARK: Catalog paths

    @Test func catalogPaths() {
        let parts = CatalogRoutes.split("catalogs/pt-BR/Localizable.plist")
        #expect(parts?.locale == "pt-BR")
        #expect(parts?.file == "Localizable.plist")
        #expect(CatalogRoutes.split("catalogs/index.plist") == nil)
        #expect(CatalogRoutes.split("catalogs/pt-BR/.plist") == nil)
        #expect(CatalogRoutes.split("catalogs/pt-BR/x/Localizable.plist") == nil)
        #expect(CatalogRoutes.split("sonnets/pt-BR/Localizable.plist") == nil)
        #expect(CatalogRoutes.split("catalogs/pt-BR/Localizable.json") == nil)
    }

    @Test func parserKeepsAcceptLanguage() throws {
        let parser = HTTPRequestParser(maxTargetBytes: 64, maxHeadBytes: 512, maxHeaderCount: 8)
        let text = "GET /content/catalogs/Localizable.plist HTTP/1.1\r\nHost: a\r\naccept-LANGUAGE:  pt-BR, pt;q=0.8 \r\nAccept-Encoding: gzip\r\n\r\n"
        let result = Array(text.utf8).withUnsafeBytes { parser.parse($0).owned() }
        guard case .request(let r, _) = result else {
            Issue.record("not parsed: \(result)")
            return
        }
        #expect(r.acceptLanguage == "pt-BR, pt;q=0.8")
        #expect(r.acceptEncoding == "gzip")
    }

    // MARK: Cost

    /// Nanoseconds per choice for a browser-like header (precomputed answers) and for a tag that
    /// is resolved per request; printed for the record, bounded loosely.
    @Test func costPerRequest() {
        let c = Self.chooser(["de", "en", "es", "es-419", "fr", "ja", "pt-BR", "pt-PT", "zh-Hans", "zh-Hant"])
        func measure(_ header: String, _ rounds: Int) -> Double {
            let h = HeaderValue(header)
            var sink = 0
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<rounds { sink &+= c.choose(h) }
            let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds)
            #expect(sink >= 0)
            return ns
        }
        for key in ["fr-ca", "fr", "en-us", "en", "de-at", "pt-ao", "es-mx", "zh-hk", "zh-hant-hk"] {
            #expect(c.resolvesWithoutParsing(key), "\(key)")
        }
        #expect(c.resolvesWithoutParsing("nl-be"), "nl is not published: no parsing")
        #expect(!c.resolvesWithoutParsing("de-ch-1996"))
        #expect(c.names[c.choose("nl-BE, de-CH-1996")] == "de")
        _ = measure("fr-CA", 1000)
        let browser = measure("fr-CA,fr;q=0.9,en-US;q=0.8,en;q=0.7", 20000)
        let excluded = measure("es-MX, es;q=0, *;q=0.1", 20000)
        let perRequest = measure("de-CH-1996", 20000)
        print("Accept-Language choice: \(Int(browser)) ns (browser header), \(Int(excluded)) ns (with q=0), \(Int(perRequest)) ns (tag resolved per request)")
        // Debug builds on a shared machine: only a pathology (e.g. rebuilding tables per request) fails this.
        #expect(browser < 50_000)
        #expect(perRequest < 200_000)
    }
}
