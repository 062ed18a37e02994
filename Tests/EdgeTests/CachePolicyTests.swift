import NIOCore
import NIOHTTP1
import Testing

@testable import FolioEdge

/// The cache tier's reading of RFC 9111, 9110 §5.6.7, 9213 and 8941, over plain values.
@Suite("cache policy")
struct CachePolicyTests {
    static func headers(_ pairs: [(String, String)]) -> HTTPHeaders { HTTPHeaders(pairs) }

    static func stored(
        _ pairs: [(String, String)], status: Int = 200, received: Double = 1_000_000, request: [(String, String)] = []
    ) -> StoredResponse {
        StoredResponse(
            key: "/k", status: status, reason: "OK", headers: headers(pairs), body: ByteBuffer(string: "body"),
            requestTime: received, responseTime: received, requestHeaders: headers(request))
    }

    @Test("Cache-Control: lines combined, names case-insensitive, quoted values, first of duplicates, strict '='")
    func cacheControl() {
        let c = CacheControl(Self.headers([("Cache-Control", "Max-Age=60, no-cache=\"Set-Cookie, X\""), ("cache-control", "s-maxage=\"10\", max-age=5, PRIVATE")]))!
        #expect(c.maxAge == 60)
        #expect(c.sMaxAge == 10)
        #expect(c.noCache && c.isPrivate)
        #expect(CacheControl(parsing: "max-age =60").maxAge == nil)
        #expect(CacheControl(parsing: "max-age= 60").maxAge == nil)
        // An invalid value makes the response stale (RFC 9111 §4.2.1).
        #expect(CacheControl(parsing: "max-age=60 junk").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=-1").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=99999999999999").maxAge == CacheControl.deltaLimit)
        #expect(CacheControl(parsing: "max-stale").maxStale == Int.max)
        #expect(CacheControl(parsing: "private=\"a, b\"").privateFields == ["a", "b"])
        #expect(!CacheControl(parsing: "private=\"a\"").isPrivate)
    }

    @Test("CDN-Cache-Control is a Structured Field: an invalid one, or a wrongly typed directive, is ignored")
    func cdnCacheControl() {
        #expect(CacheControl(structuredField: "max-age=600, stale-if-error=30")?.maxAge == 600)
        #expect(CacheControl(structuredField: "no-store")?.noStore == true)
        #expect(CacheControl(structuredField: "no-store=?0")?.noStore == false)
        #expect(CacheControl(structuredField: "max-age=10000, &&&&&") == nil)
        #expect(CacheControl(structuredField: "max-age=\"10000\"") == nil)
        #expect(CacheControl(structuredField: "max-age=1.5") == nil)
        #expect(CacheControl(structuredField: "max-age=10;a=1, x=(1 2);b") != nil)
        #expect(CacheControl(structuredField: "max-age=10,") == nil)
        let both = Self.headers([("Cache-Control", "max-age=5"), ("CDN-Cache-Control", "max-age=500")])
        #expect(CachePolicy.control(both).maxAge == 500)
        let broken = Self.headers([("Cache-Control", "max-age=5"), ("CDN-Cache-Control", "max-age=\"500\"")])
        #expect(CachePolicy.control(broken).maxAge == 5)
    }

    @Test("dates: IMF-fixdate, RFC 850 and asctime; wrong case accepted; dashes in a fixdate and other junk are not dates")
    func dates() {
        let t: Int64 = 784_111_777
        #expect(CacheFields.date("Sun, 06 Nov 1994 08:49:37 GMT") == t)
        #expect(CacheFields.date("Sunday, 06-Nov-94 08:49:37 GMT") == t)
        #expect(CacheFields.date("Sun Nov  6 08:49:37 1994") == t)
        #expect(CacheFields.date("sun, 06 NOV 1994 08:49:37 gmt") == t)
        #expect(CacheFields.date("Sun, 06-Nov-1994 08:49:37 GMT") == nil)
        #expect(CacheFields.date("Sun, 06 Nov 1994 08.49.37 GMT") == nil)
        #expect(CacheFields.date("0") == nil)
    }

    @Test("freshness: s-maxage over max-age over Expires - Date over 10% of Last-Modified, only for heuristic statuses")
    func freshness() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        func lifetime(_ pairs: [(String, String)], status: Int = 200) -> Double {
            let h = Self.headers(pairs)
            return CachePolicy.freshnessLifetime(status: status, headers: h, control: CachePolicy.control(h), received: 784_111_777)
        }
        #expect(lifetime([("Cache-Control", "max-age=60, s-maxage=5")]) == 5)
        #expect(lifetime([("Cache-Control", "max-age=60"), ("Expires", "Sun, 06 Nov 1994 09:49:37 GMT"), ("Date", date)]) == 60)
        #expect(lifetime([("Expires", "Sun, 06 Nov 1994 09:49:37 GMT"), ("Date", date)]) == 3600)
        #expect(lifetime([("Expires", "0"), ("Date", date)]) == 0)
        #expect(lifetime([("Last-Modified", "Sun, 06 Nov 1994 06:49:37 GMT"), ("Date", date)]) == 720)
        #expect(lifetime([("Last-Modified", "Sun, 06 Nov 1994 06:49:37 GMT"), ("Date", date)], status: 302) == 0)
        #expect(lifetime([("Date", date)]) == 0)
    }

    @Test("age: Age header plus delays, in whole seconds from Date")
    func age() {
        let r = StoredResponse(
            key: "/", status: 200, reason: "OK",
            headers: Self.headers([("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Age", "30")]), body: ByteBuffer(),
            requestTime: 784_111_777.2, responseTime: 784_111_777.9, requestHeaders: [:])
        #expect(abs(r.currentAge(now: 784_111_787.9) - 40.7) < 0.001)
        #expect(CacheControl.age(Self.headers([("Age", "7200.0")])) == nil)
        #expect(CacheControl.age(Self.headers([("Age", "12, 30")])) == 12)
    }

    @Test("storing: no-store, private, Vary: *, Authorization without public, statuses without freshness")
    func storable() {
        func why(_ pairs: [(String, String)], status: Int = 200, request: [(String, String)] = [], method: HTTPMethod = .GET) -> String? {
            let r = Self.headers(request)
            return CachePolicy.whyNotStorable(
                method: method, requestHeaders: r, requestControl: CacheControl(r) ?? CacheControl(), status: status, headers: Self.headers(pairs))
        }
        #expect(why([("Cache-Control", "max-age=60")]) == nil)
        #expect(why([("Cache-Control", "max-age=60")], method: .POST) == "method")
        #expect(why([("Cache-Control", "no-store, max-age=60")]) == "no-store")
        #expect(why([("Cache-Control", "max-age=60")], request: [("Cache-Control", "no-store")]) == "no-store")
        #expect(why([("Cache-Control", "private, max-age=60")]) == "private")
        #expect(why([("Cache-Control", "max-age=60"), ("Vary", "a, *")]) == "vary-star")
        #expect(why([("Cache-Control", "max-age=60")], request: [("Authorization", "x")]) == "authorization")
        #expect(why([("Cache-Control", "max-age=60, public")], request: [("Authorization", "x")]) == nil)
        #expect(why([], status: 302) == "no-freshness")
        #expect(why([("Cache-Control", "max-age=60")], status: 206) == "status")
    }

    @Test("reuse: fresh, request max-age/min-fresh/max-stale, no-cache, must-revalidate forbids stale")
    func reuse() {
        let now = 1_000_100.0
        let fresh = Self.stored([("Cache-Control", "max-age=200")])
        #expect(CachePolicy.isUsable(fresh, requestControl: CacheControl(), now: now))
        #expect(!CachePolicy.isUsable(fresh, requestControl: CacheControl(parsing: "max-age=50"), now: now))
        #expect(!CachePolicy.isUsable(fresh, requestControl: CacheControl(parsing: "min-fresh=150"), now: now))
        let stale = Self.stored([("Cache-Control", "max-age=50")])
        #expect(!CachePolicy.isUsable(stale, requestControl: CacheControl(), now: now))
        #expect(CachePolicy.isUsable(stale, requestControl: CacheControl(parsing: "max-stale=60"), now: now))
        #expect(!CachePolicy.isUsable(stale, requestControl: CacheControl(parsing: "max-stale=10"), now: now))
        let strict = Self.stored([("Cache-Control", "max-age=50, must-revalidate")])
        #expect(!CachePolicy.isUsable(strict, requestControl: CacheControl(parsing: "max-stale"), now: now))
        #expect(!CachePolicy.isUsable(Self.stored([("Cache-Control", "max-age=200, no-cache")]), requestControl: CacheControl(), now: now))
        let swr = Self.stored([("Cache-Control", "max-age=50, stale-while-revalidate=100")])
        #expect(CachePolicy.allowsStaleWhileRevalidate(swr, now: now))
        #expect(!CachePolicy.allowsStaleWhileRevalidate(swr, now: now + 100))
        #expect(!fresh.markingStale().lifetime.isLess(than: 0) && !CachePolicy.isUsable(fresh.markingStale(), requestControl: CacheControl(), now: now))
    }

    @Test("Vary: selected by normalized values of the named request fields; absent matches absent")
    func vary() {
        let r = Self.stored([("Vary", "Accept-Language, X-Absent"), ("Cache-Control", "max-age=60")], request: [("Accept-Language", "en,  fr")])
        #expect(r.varyMatches(Self.headers([("accept-language", "en, fr")])))
        #expect(r.varyMatches(Self.headers([("Accept-Language", "en"), ("Accept-Language", "fr")])))
        #expect(!r.varyMatches(Self.headers([("Accept-Language", "fr, en")])))
        #expect(!r.varyMatches(Self.headers([("Accept-Language", "en, fr"), ("X-Absent", "1")])))
        #expect(!r.varyMatches(Self.headers([])))
    }

    @Test("a 304 updates stored fields but not Content-Length")
    func update() {
        let merged = CachePolicy.updatedHeaders(
            Self.headers([("Content-Length", "4"), ("ETag", "\"a\""), ("X-Old", "1"), ("Cache-Control", "max-age=1")]),
            with: Self.headers([("Content-Length", "0"), ("Cache-Control", "max-age=99"), ("X-New", "2")]))
        #expect(merged["content-length"] == ["4"])
        #expect(merged["cache-control"] == ["max-age=99"])
        #expect(merged["x-old"] == ["1"] && merged["x-new"] == ["2"] && merged["etag"] == ["\"a\""])
    }
}
