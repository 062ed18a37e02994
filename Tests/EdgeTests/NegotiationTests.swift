import Testing

@testable import FolioEdge

/// `Accept-Encoding` negotiation (RFC 9110 §12.5.3) and the header-text helpers it uses.
@Suite("Accept-Encoding negotiation")
struct NegotiationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var header: String?
        var hasGzip: Bool
        var expected: ContentCoding?

        init(_ header: String?, gzip hasGzip: Bool = true, _ expected: ContentCoding?) {
            self.header = header
            self.hasGzip = hasGzip
            self.expected = expected
        }

        var testDescription: String {
            let h = header.map { "\"\($0)\"" } ?? "no header"
            let e = expected.map { "\($0)" } ?? "nil (406)"
            return "\(h), hasGzip: \(hasGzip) → \(e)"
        }
    }

    static let cases: [Case] = [
        // No header: identity, whatever the resource offers.
        Case(nil, gzip: true, .identity),
        Case(nil, gzip: false, .identity),
        // An empty header field value means "no coding preference beyond identity".
        Case("", gzip: true, .identity),
        Case("", gzip: false, .identity),
        Case("gzip", gzip: true, .gzip),
        Case("gzip", gzip: false, .identity),
        Case("gzip, deflate, br", .gzip),
        Case("deflate, br, gzip", .gzip),
        Case("x-gzip", .gzip),
        Case("GZIP", .gzip),
        Case("X-GZip", .gzip),
        Case(" , ,gzip,, ", .gzip),
        Case("br", .identity),
        Case("br", gzip: false, .identity),
        // q=0 means "not acceptable".
        Case("gzip;q=0", .identity),
        Case("gzip; Q=0", .identity),
        Case("gzip;level=9;q=0", .identity),
        // gzip is not listed and there is no `*`: RFC 9110 §12.5.3 makes it unacceptable too.
        Case("identity;q=0", gzip: true, nil),
        Case("identity;q=0, gzip", gzip: true, .gzip),
        Case("identity;q=0", gzip: false, nil),
        Case("gzip;q=0, identity;q=0", nil),
        // `*;q=0` with no explicit identity entry excludes identity too.
        Case("*;q=0", gzip: false, nil),
        Case("*;q=0", gzip: true, nil),
        Case("*", gzip: true, .gzip),
        Case("*", gzip: false, .identity),
        Case("*;q=0.5, identity;q=1", .identity),
        Case("identity;q=0, *;q=0.5", gzip: false, nil),
        Case("identity, *;q=0", gzip: true, .identity),
        Case("identity;q=0, *", gzip: true, .gzip),
        // An explicit gzip entry beats `*`.
        Case("gzip;q=0, *;q=1", .identity),
        Case("gzip;q=0, *", gzip: false, .identity),
        // q-value ordering; a tie goes to gzip.
        Case("gzip;q=0.5, identity;q=0.8", .identity),
        Case("gzip;q=0.8, identity;q=0.5", .gzip),
        Case("gzip;q=0.5, identity;q=0.5", .gzip),
        Case("identity;q=0.3, gzip;q=0.3", .gzip),
        Case(" gzip ; q=0.5 , identity ; q=0.4", .gzip),
        Case("gzip;q=0.001, identity;q=0", .gzip),
        Case("gzip;q=1.000", .gzip),
        Case("x-gzip;q=0.2, gzip;q=0.9, identity;q=0.5", .gzip),
        // Malformed q-values: the item is ignored (not treated as q=1).
        Case("gzip;q=abc", .identity),
        Case("gzip;q=2", .identity),
        Case("gzip;q=1.5", .identity),
        Case("gzip;q=0.1234", .identity),
        Case("gzip;q=", .identity),
        Case("gzip;q=abc, identity;q=0", nil),
        Case("gzip;q=abc, gzip;q=0.1, identity;q=0", .gzip),
    ]

    @Test("choose", arguments: cases)
    func choose(_ c: Case) {
        #expect(AcceptEncoding.choose(c.header.map { HeaderValue($0) }, hasGzip: c.hasGzip) == c.expected)
    }

    /// With a brotli variant too: (header, has gzip, expected); every resource here has brotli.
    static let brotliCases: [(String?, Bool, ContentCoding?)] = [
        (nil, true, .identity),
        ("br", true, .brotli),
        ("br", false, .brotli),
        ("BR", true, .brotli),
        ("gzip, deflate, br", true, .brotli),
        ("gzip, deflate, br, zstd", true, .brotli),  // curl --compressed
        ("br, gzip", true, .brotli),  // sync
        ("gzip", true, .gzip),
        ("gzip", false, .identity),
        // q-values decide; a tie prefers brotli, then gzip, then identity.
        ("br;q=0.5, gzip", true, .gzip),
        // identity, not listed, keeps q=1 and beats both.
        ("br;q=0.5, gzip", false, .identity),
        ("br;q=0.5, gzip;q=0.5", true, .identity),
        ("br;q=0.5, gzip;q=0.5, identity;q=0.5", true, .brotli),
        ("gzip;q=0.5, br;q=0.5, identity;q=0.1", true, .brotli),
        ("gzip;q=0.5, br;q=0.4, identity;q=0.1", true, .gzip),
        ("br;q=0.5, identity;q=0.5", true, .brotli),
        ("br;q=0.4, identity", true, .identity),
        ("br;q=0", true, .identity),
        ("br;q=0, gzip", true, .gzip),
        ("br;q=0, identity;q=0", true, nil),
        ("br;q=abc", true, .identity),
        ("*", true, .brotli),
        ("*", false, .brotli),
        ("*;q=0.5, gzip", true, .gzip),
        ("*;q=0.5, br;q=0.1, gzip;q=0.1", true, .identity),
        ("identity;q=0, *;q=0.1, gzip;q=0.1", true, .brotli),
    ]

    @Test("choose with a brotli variant")
    func chooseBrotli() {
        for (header, gzip, expected) in Self.brotliCases {
            let got = AcceptEncoding.choose(header.map { HeaderValue($0) }, hasGzip: gzip, hasBrotli: true)
            #expect(got == expected, "\(header ?? "no header"), hasGzip: \(gzip)")
        }
    }

    @Test func headerInsideALargerString() {
        // The parser hands out substrings of a larger string; indices must be respected.
        let whole = "Accept-Encoding: identity;q=0, gzip;q=0.7;"
        let value = whole.dropFirst("Accept-Encoding: ".count).dropLast()
        #expect(AcceptEncoding.choose(HeaderValue(value), hasGzip: true) == .gzip)
        #expect(AcceptEncoding.choose(HeaderValue(value), hasGzip: false) == nil)
    }

    @Test func qValues() {
        func q(_ s: String) -> Double? { HeaderText.qValue(Array(s.utf8)) }
        #expect(q("0") == 0)
        #expect(q("1") == 1)
        #expect(q("0.5") == 0.5)
        #expect(q("0.25") == 0.25)
        #expect(q("0.125") == 0.125)
        #expect(q("1.000") == 1)
        #expect(q("1.") == 1)
        #expect(q("0.") == 0)
        #expect(q("1.001") == nil)
        #expect(q("1.5") == nil)
        #expect(q("0.1234") == nil)
        #expect(q("2") == nil)
        #expect(q("") == nil)
        #expect(q(".5") == nil)
        #expect(q("0.a") == nil)
        #expect(q("0,5") == nil)
        #expect(q("-0") == nil)
    }

    @Test func caseInsensitiveComparison() {
        #expect(HeaderText.equalsLowercase(Array("GZip".utf8), "gzip"))
        #expect(HeaderText.equalsLowercase(Array("gzip".utf8), "gzip"))
        #expect(HeaderText.equalsLowercase(Array("If-None-Match".utf8), "if-none-match"))
        #expect(!HeaderText.equalsLowercase(Array("gzi".utf8), "gzip"))
        #expect(!HeaderText.equalsLowercase(Array("gzipp".utf8), "gzip"))
        #expect(!HeaderText.equalsLowercase(Array("gzIq".utf8), "gzip"))
        // Only A–Z fold: "@" (0x40) is not "`" (0x60), "[" (0x5B) is not "{" (0x7B).
        #expect(!HeaderText.equalsLowercase(Array("@".utf8), "`"))
        #expect(!HeaderText.equalsLowercase(Array("[".utf8), "{"))
        #expect(HeaderText.equalsLowercase([UInt8](), ""))
    }

    @Test func trimming() {
        let blank: HeaderValue = " \t "
        #expect(HeaderText.trimBytes(blank.bytes[...]).isEmpty)
        [UInt8](" \tclose\t ".utf8).withUnsafeBytes { raw in
            #expect(Array(HeaderText.trimBytes(raw[...])) == Array("close".utf8))
        }
    }
}
