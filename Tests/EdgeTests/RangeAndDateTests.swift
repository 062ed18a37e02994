import Foundation
import FolioTestSupport
import Testing

@testable import FolioEdge

/// Single byte ranges (RFC 9110 §14.1).
@Suite("Byte ranges")
struct ByteRangeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var header: String?
        var length: Int
        var expected: ByteRange

        init(_ header: String?, length: Int = 100, _ expected: ByteRange) {
            self.header = header
            self.length = length
            self.expected = expected
        }

        var testDescription: String { "\(header.map { "\"\($0)\"" } ?? "no header") of \(length) → \(expected)" }
    }

    static let cases: [Case] = [
        Case(nil, .whole),
        Case("bytes=0-9", .partial(0...9)),
        Case("bytes=0-0", .partial(0...0)),
        Case("bytes=99-99", .partial(99...99)),
        Case("bytes=0-99", .partial(0...99)),
        Case("bytes=90-", .partial(90...99)),
        Case("bytes=0-", .partial(0...99)),
        Case("bytes=99-", .partial(99...99)),
        Case("bytes=-10", .partial(90...99)),
        Case("bytes=-1", .partial(99...99)),
        Case("bytes=-100", .partial(0...99)),
        Case("bytes=-200", .partial(0...99)),
        Case("bytes=50-500", .partial(50...99)),
        Case("Bytes=0-9", .partial(0...9)),
        Case("  bytes=0-9  ", .partial(0...9)),
        Case("bytes= 0-9 ", .partial(0...9)),
        // Nothing satisfiable: 416.
        Case("bytes=100-", .unsatisfiable),
        Case("bytes=100-200", .unsatisfiable),
        Case("bytes=1000-", .unsatisfiable),
        Case("bytes=-0", .unsatisfiable),
        Case("bytes=0-", length: 0, .unsatisfiable),
        Case("bytes=0-5", length: 0, .unsatisfiable),
        Case("bytes=-5", length: 0, .unsatisfiable),
        Case("bytes=0-", length: 1, .partial(0...0)),
        // Invalid: ignored, the whole representation is served.
        Case("bytes=5-1", .whole),
        Case("bytes=abc", .whole),
        Case("bytes=", .whole),
        Case("bytes=-", .whole),
        Case("bytes=a-5", .whole),
        Case("bytes=5-b", .whole),
        Case("bytes=+5-9", .whole),
        Case("bytes=--5", .whole),
        Case("bytes=0x1-9", .whole),
        Case("bytes=1 2-9", .whole),
        Case("bytes=١-٩", .whole),  // non-ASCII digits
        Case("bytes=9999999999999999999-", .whole),  // too many digits
        Case("items=0-1", .whole),
        Case("bytes 0-1", .whole),
        Case("", .whole),
        // Several ranges: answered with the whole representation.
        Case("bytes=0-1,5-6", .whole),
        Case("bytes=0-1, 5-6", .whole),
        Case("bytes=0-1,", .whole),
        Case("bytes=,0-1", .whole),
    ]

    @Test("parse", arguments: cases)
    func parse(_ c: Case) {
        #expect(ByteRange.parse(c.header.map { HeaderValue($0) }, length: c.length) == c.expected)
    }

    @Test func partialRangesStayInBounds() {
        // Every syntactically valid single range over small lengths yields an in-bounds range or 416.
        for length in 0...12 {
            for first in [nil] + Array(0...14) {
                for last in [nil] + Array(0...14) {
                    if first == nil, last == nil { continue }
                    let header = "bytes=\(first.map(String.init) ?? "")-\(last.map(String.init) ?? "")"
                    switch ByteRange.parse(HeaderValue(header), length: length) {
                    case .partial(let r):
                        #expect(r.lowerBound >= 0 && r.upperBound < length, "\(header) of \(length) → \(r)")
                    case .unsatisfiable:
                        #expect(first.map { $0 >= length } ?? (last == 0 || length == 0), "\(header) of \(length)")
                    case .whole:
                        #expect(first != nil && last != nil && last! < first!, "\(header) of \(length)")
                    }
                }
            }
        }
    }
}

/// IMF-fixdate formatting and parsing (RFC 9110 §5.6.7).
@Suite("HTTP dates")
struct HTTPDateTests {
    static let rfcExample = "Sun, 06 Nov 1994 08:49:37 GMT"

    @Test func rfcExample() {
        #expect(HTTPDate.format(784_111_777) == Self.rfcExample)
        #expect(HTTPDate.parse(HeaderValue(Self.rfcExample)) == 784_111_777)
    }

    @Test func knownValues() {
        let known: [(Int64, String)] = [
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
            (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
            (951_868_799, "Tue, 29 Feb 2000 23:59:59 GMT"),
            (951_868_800, "Wed, 01 Mar 2000 00:00:00 GMT"),
            (1_700_000_000, "Tue, 14 Nov 2023 22:13:20 GMT"),
            (2_147_483_647, "Tue, 19 Jan 2038 03:14:07 GMT"),
            (4_102_444_800, "Fri, 01 Jan 2100 00:00:00 GMT"),
            (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
        ]
        for (seconds, text) in known {
            #expect(HTTPDate.format(seconds) == text)
            #expect(HTTPDate.parse(HeaderValue(text)) == seconds, "\(text)")
        }
    }

    @Test(arguments: [0, 951_782_400, 1_700_000_000, 4_102_444_800] as [Int64])
    func roundTrip(_ seconds: Int64) {
        let text = HTTPDate.format(seconds)
        #expect(text.utf8.count == 29)
        #expect(HTTPDate.parse(HeaderValue(text)) == seconds)
    }

    @Test func seededRoundTripsAgreeWithFoundation() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var rng = SplitMix64(seed: 0x5EED_DA7E)
        for _ in 0..<500 {
            let seconds = Int64.random(in: 0...253_402_300_799, using: &rng)
            let text = HTTPDate.format(seconds)
            #expect(text == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))))
            #expect(HTTPDate.parse(HeaderValue(text)) == seconds, "\(text)")
        }
    }

    @Test func surroundingWhitespaceIsTolerated() {
        #expect(HTTPDate.parse(HeaderValue("  \(Self.rfcExample)\t")) == 784_111_777)
    }

    @Test func leapSecondIsAccepted() {
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT") == 1_483_228_800)
    }

    @Test(arguments: [
        "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850
        "Sun Nov  6 08:49:37 1994",  // asctime
        "garbage",
        "",
        "Sun, 06 Nxv 1994 08:49:37 GMT",  // unknown month
        "Sun, 06 nov 1994 08:49:37 GMT",  // month names are case-sensitive
        "Sun, 06 NOV 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 gmt",
        "Sun, 06 Nov 1994 08:49:37 GMTX",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun 06 Nov 1994 08:49:37 GMT ",
        "Sun, 06 Nov 1994 08-49-37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 0x Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 19x4 08:49:37 GMT",
        "Sun, 06 Nov 1994 +8:49:37 GMT",
    ])
    func rejects(_ text: String) {
        #expect(HTTPDate.parse(HeaderValue(text)) == nil)
    }
}
