import NIOCore
import NIOHTTP1

/// One response in the cache (RFC 9111 §3): what the origin sent (hop-by-hop fields removed),
/// when it was requested and received, and the request fields its `Vary` selects on. Immutable:
/// a revalidation stores a new one in its place.
final class StoredResponse: Sendable {
    /// All but the body: shared by the responses read from one held file (`init(_:body:)`).
    final class Metadata: Sendable {
        let key: String
        let status: Int
        let reason: String
        let headers: HTTPHeaders
        /// Wall-clock seconds when the request was sent and the response received (§4.2.3).
        let requestTime: Double
        let responseTime: Double
        /// The lowercased names `Vary` lists, and the request's combined values for them (nil: absent).
        let varyNames: [String]
        let varyValues: [String?]
        /// The directives that decide freshness in this cache: `CDN-Cache-Control` when present
        /// (RFC 9213), else `Cache-Control`.
        let control: CacheControl
        /// Freshness lifetime and the corrected initial age, in seconds (§4.2.1, §4.2.3).
        let lifetime: Double
        let initialAge: Double
        let etag: String?
        let lastModified: String?
        /// The fields sent with it from the cache: all but `Age` and `Content-Length`, which each
        /// answer sets itself.
        let servedHeaders: HTTPHeaders
        /// A plain hit's head up to its `Age` line: status line, served fields, Content-Length and
        /// `Cache-Status: folio-edge; hit`.
        let preparedHead: ByteBuffer
        /// The same for a 304 to a request whose If-None-Match is this response's ETag (without
        /// the content fields); nil when it has no ETag or is not a 200.
        let prepared304: ByteBuffer?
        /// Set by a soft purge: stale from then on, whatever its directives say.
        let markedStale: Bool
        /// What the fields count for in the size limit.
        let fieldCost: Int

        init(
            key: String, status: Int, reason: String, headers: HTTPHeaders, requestTime: Double, responseTime: Double,
            markedStale: Bool, control: CacheControl, derived: Derived
        ) {
            (self.key, self.status, self.reason, self.headers) = (key, status, reason, headers)
            (self.requestTime, self.responseTime, self.markedStale, self.control) = (requestTime, responseTime, markedStale, control)
            (varyNames, varyValues, lifetime, initialAge) = (derived.varyNames, derived.varyValues, derived.lifetime, derived.initialAge)
            (preparedHead, prepared304) = (derived.preparedHead, derived.prepared304)
            etag = headers.first(name: "etag")
            lastModified = headers.first(name: "last-modified")
            var served = headers
            served.remove(name: "age")
            served.remove(name: "content-length")
            servedHeaders = served
            fieldCost = headers.reduce(256) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        }
    }

    let metadata: Metadata
    let body: ByteBuffer
    /// Bytes this entry holds, for the size limit.
    let cost: Int

    var key: String { metadata.key }
    var status: Int { metadata.status }
    var reason: String { metadata.reason }
    var headers: HTTPHeaders { metadata.headers }
    var requestTime: Double { metadata.requestTime }
    var responseTime: Double { metadata.responseTime }
    var varyNames: [String] { metadata.varyNames }
    var varyValues: [String?] { metadata.varyValues }
    var control: CacheControl { metadata.control }
    var lifetime: Double { metadata.lifetime }
    var initialAge: Double { metadata.initialAge }
    var etag: String? { metadata.etag }
    var lastModified: String? { metadata.lastModified }
    var servedHeaders: HTTPHeaders { metadata.servedHeaders }
    var preparedHead: ByteBuffer { metadata.preparedHead }
    var prepared304: ByteBuffer? { metadata.prepared304 }
    var markedStale: Bool { metadata.markedStale }

    /// What a response's fields decide once, kept with an entry on disk so that reading it back
    /// parses nothing but its `Cache-Control`.
    struct Derived {
        var varyNames: [String]
        var varyValues: [String?]
        var lifetime: Double
        var initialAge: Double
        var preparedHead: ByteBuffer
        var prepared304: ByteBuffer?
    }

    convenience init(
        key: String, status: Int, reason: String, headers: HTTPHeaders, body: ByteBuffer,
        requestTime: Double, responseTime: Double, requestHeaders: HTTPHeaders, markedStale: Bool = false
    ) {
        let control = CachePolicy.control(headers)
        let derived = Self.derive(
            status: status, reason: reason, headers: headers, bodyLength: body.readableBytes, responseTime: responseTime,
            requestTime: requestTime, requestHeaders: requestHeaders, control: control, markedStale: markedStale)
        self.init(
            key: key, status: status, reason: reason, headers: headers, body: body, requestTime: requestTime,
            responseTime: responseTime, markedStale: markedStale, control: control, derived: derived)
    }

    /// An entry read back from disk with what was derived when it was stored.
    init(
        key: String, status: Int, reason: String, headers: HTTPHeaders, body: ByteBuffer, requestTime: Double,
        responseTime: Double, markedStale: Bool, control: CacheControl? = nil, derived: Derived
    ) {
        metadata = Metadata(
            key: key, status: status, reason: reason, headers: headers, requestTime: requestTime, responseTime: responseTime,
            markedStale: markedStale, control: control ?? CachePolicy.control(headers), derived: derived)
        self.body = body
        cost = metadata.fieldCost + body.readableBytes
    }

    /// `template` with `body`: an entry whose head is held in memory and whose body was read
    /// from its file again.
    init(_ template: StoredResponse, body: ByteBuffer) {
        metadata = template.metadata
        self.body = body
        cost = metadata.fieldCost + body.readableBytes
    }

    var derived: Derived {
        Derived(varyNames: varyNames, varyValues: varyValues, lifetime: lifetime, initialAge: initialAge, preparedHead: preparedHead, prepared304: prepared304)
    }

    private static func derive(
        status: Int, reason: String, headers: HTTPHeaders, bodyLength: Int, responseTime: Double, requestTime: Double,
        requestHeaders: HTTPHeaders, control: CacheControl, markedStale: Bool
    ) -> Derived {
        let varyNames = CacheFields.vary(headers)
        let varyValues = varyNames.map { CacheFields.combined(requestHeaders, $0).map(Self.normalize) }
        let lifetime = markedStale ? 0 : CachePolicy.freshnessLifetime(status: status, headers: headers, control: control, received: responseTime)
        // Dates have whole seconds: the apparent age is counted in whole seconds too, or a
        // response received 0.9 s into the second of its Date would start 0.9 s old.
        let dateValue = CacheFields.date(headers.first(name: "date")).map(Double.init) ?? responseTime
        let apparentAge = max(0, responseTime.rounded(.down) - dateValue)
        let responseDelay = max(0, responseTime - requestTime)
        let correctedAgeValue = Double(CacheControl.age(headers) ?? 0) + responseDelay
        let (head, notModified) = prepared(status: status, reason: reason, headers: headers, bodyLength: bodyLength)
        return Derived(
            varyNames: varyNames, varyValues: varyValues, lifetime: lifetime, initialAge: max(apparentAge, correctedAgeValue),
            preparedHead: head, prepared304: notModified)
    }

    /// A plain hit's head up to `Age`, and the same for a 304 when it is a 200 with an ETag.
    private static func prepared(status: Int, reason: String, headers: HTTPHeaders, bodyLength: Int) -> (ByteBuffer, ByteBuffer?) {
        let served = headers.filter { !($0.name.lowercased() == "age" || $0.name.lowercased() == "content-length") }
        var prepared = ByteBuffer()
        prepared.writeString("HTTP/1.1 \(status) \(reason)\r\n")
        for (name, value) in served where name.lowercased() != "connection" {
            prepared.writeString("\(name): \(value)\r\n")
        }
        if status != 204, status != 304, status >= 200 { prepared.writeString("Content-Length: \(bodyLength)\r\n") }
        prepared.writeString("Cache-Status: folio-edge; hit\r\n")
        guard status == 200, headers.first(name: "etag") != nil else { return (prepared, nil) }
        var notModified = ByteBuffer()
        notModified.writeString("HTTP/1.1 304 Not Modified\r\n")
        for (name, value) in served where !CachePolicy.omittedFrom304.contains(name.lowercased()) {
            notModified.writeString("\(name): \(value)\r\n")
        }
        notModified.writeString("Cache-Status: folio-edge; hit\r\n")
        return (prepared, notModified)
    }

    /// The same response, stale from now on (a soft purge).
    func markingStale() -> StoredResponse {
        StoredResponse(
            key: key, status: status, reason: reason, headers: headers, body: body, requestTime: requestTime,
            responseTime: responseTime, requestHeaders: selectingHeaders, markedStale: true)
    }

    /// The request fields this response was selected by (its `Vary` fields that were present).
    var selectingHeaders: HTTPHeaders {
        var request = HTTPHeaders()
        for (n, v) in zip(varyNames, varyValues) { if let v { request.add(name: n, value: v) } }
        return request
    }

    /// Seconds since the origin generated (or validated) this response (§4.2.3).
    func currentAge(now: Double) -> Double { initialAge + max(0, now - responseTime) }

    /// Whether this response was selected by a request with `headers` (§4.1): every field its
    /// Vary names has the same normalized value (or is absent in both); `Vary: *` never matches.
    func varyMatches(_ headers: HTTPHeaders) -> Bool { Self.varyMatches(varyNames, varyValues, headers) }

    /// Whether a response stored for a request whose `varyNames` fields had `varyValues` is
    /// selected by a request with `headers`.
    static func varyMatches(_ varyNames: [String], _ varyValues: [String?], _ headers: HTTPHeaders) -> Bool {
        if varyNames.isEmpty { return true }
        if varyNames.contains("*") { return false }
        for (name, stored) in zip(varyNames, varyValues) {
            let lines = headers[name]
            // One line with nothing to normalize (the common `Accept-Encoding: gzip`): as is.
            if lines.count == 1, let stored, !lines[0].utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == 32 || $0 == 9 }) {
                if lines[0] != stored { return false }
                continue
            }
            if (lines.isEmpty ? nil : Self.normalize(lines.joined(separator: ", "))) != stored { return false }
        }
        return true
    }

    /// Combined values compared with runs of whitespace collapsed and around commas removed.
    static func normalize(_ value: String) -> String {
        value.split(separator: ",").map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") }
            .joined(separator: ",")
    }
}

/// RFC 9111 rules for a shared cache, over plain values.
enum CachePolicy {
    /// Status codes a cache may reuse with heuristic freshness (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Methods whose responses this cache stores: GET (HEAD responses only refresh stored GETs).
    static func isCacheableMethod(_ method: HTTPMethod) -> Bool { method == .GET }

    /// Methods that invalidate the target (§4.4): everything but the safe methods.
    static func isUnsafe(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .HEAD, .OPTIONS, .TRACE: false
        default: true
        }
    }

    /// `CDN-Cache-Control` when present and non-empty, else `Cache-Control`, else nothing.
    static func control(_ headers: HTTPHeaders) -> CacheControl {
        let cdnLines = headers["cdn-cache-control"]
        if !cdnLines.isEmpty, let cdn = CacheControl(structuredField: cdnLines.joined(separator: ", ")), !cdn.isEmpty { return cdn }
        return CacheControl(headers) ?? CacheControl()
    }

    /// Freshness lifetime in seconds for a shared cache (§4.2.1, §4.2.2): s-maxage, max-age,
    /// Expires − Date, else 10% of the time since Last-Modified (at most a day) for a status that
    /// allows heuristics.
    static func freshnessLifetime(status: Int, headers: HTTPHeaders, control: CacheControl, received: Double) -> Double {
        if let s = control.sMaxAge { return Double(s) }
        if let m = control.maxAge { return Double(m) }
        if let expiresText = headers.first(name: "expires") {
            // An invalid Expires (e.g. "0") means already expired.
            guard let expires = CacheFields.date(expiresText) else { return 0 }
            let date = CacheFields.date(headers.first(name: "date")) ?? Int64(received)
            return Double(max(0, expires - date))
        }
        if heuristicallyCacheable.contains(status) || control.isPublic,
            let lm = CacheFields.date(headers.first(name: "last-modified"))
        {
            let date = CacheFields.date(headers.first(name: "date")) ?? lm
            return min(86_400, Double(max(0, date - lm)) / 10)
        }
        return 0
    }

    /// Why a response to `request` may not be stored (§3), or nil when it may.
    static func whyNotStorable(
        method: HTTPMethod, requestHeaders: HTTPHeaders, requestControl: CacheControl,
        status: Int, headers: HTTPHeaders
    ) -> String? {
        guard isCacheableMethod(method) else { return "method" }
        guard status >= 200, status != 206, status != 304 else { return "status" }
        let control = control(headers)
        if control.mustUnderstand, !heuristicallyCacheable.contains(status) && status != 200 { return "must-understand" }
        if requestControl.noStore || (control.noStore && !control.mustUnderstand) { return "no-store" }
        if control.isPrivate { return "private" }
        if CacheFields.vary(headers).contains("*") { return "vary-star" }
        if requestHeaders.contains(name: "authorization"), !(control.mustRevalidate || control.isPublic || control.sMaxAge != nil) {
            return "authorization"
        }
        let explicit = control.maxAge != nil || control.sMaxAge != nil || headers.contains(name: "expires")
        guard explicit || control.isPublic || heuristicallyCacheable.contains(status) else { return "no-freshness" }
        return nil
    }

    /// Whether a stored response may be sent without asking the origin, for a request with
    /// `requestControl` (§4.2, §5.2.1): fresh enough, or stale within what the request accepts.
    static func isUsable(_ stored: StoredResponse, requestControl: CacheControl, now: Double) -> Bool {
        if stored.control.noCache { return false }
        let age = stored.currentAge(now: now)
        if let maxAge = requestControl.maxAge, age > Double(maxAge) { return false }
        if let minFresh = requestControl.minFresh, stored.lifetime - age < Double(minFresh) { return false }
        if age < stored.lifetime { return true }
        if forbidsStale(stored) { return false }
        if let maxStale = requestControl.maxStale {
            return maxStale == Int.max || age - stored.lifetime <= Double(maxStale)
        }
        return false
    }

    /// must-revalidate, proxy-revalidate and s-maxage forbid a shared cache to serve it stale.
    static func forbidsStale(_ stored: StoredResponse) -> Bool {
        stored.control.mustRevalidate || stored.control.proxyRevalidate || stored.control.sMaxAge != nil
    }

    /// Whether a stale response may be served now while one background request revalidates it.
    static func allowsStaleWhileRevalidate(_ stored: StoredResponse, now: Double) -> Bool {
        guard !forbidsStale(stored), !stored.control.noCache, let window = stored.control.staleWhileRevalidate else { return false }
        let age = stored.currentAge(now: now)
        return age >= stored.lifetime && age - stored.lifetime <= Double(window)
    }

    /// Whether a stale response may stand in for an error or an unreachable origin (RFC 5861).
    static func allowsStaleIfError(_ stored: StoredResponse, requestControl: CacheControl, now: Double) -> Bool {
        guard !forbidsStale(stored) else { return false }
        let staleness = stored.currentAge(now: now) - stored.lifetime
        let window = max(stored.control.staleIfError ?? -1, requestControl.staleIfError ?? -1)
        return window >= 0 && staleness <= Double(window)
    }

    /// Fields a 304 from the cache leaves out: those that describe the body it does not send.
    static let omittedFrom304: Set<String> = ["content-length", "content-type", "content-encoding", "content-range", "transfer-encoding", "connection"]

    /// Fields a 304 or a HEAD response must not replace in the stored response (§3.2): the
    /// stored body's length (hop-by-hop fields are already gone).
    static let notUpdated: Set<String> = ["content-length"]

    /// The stored fields updated with those of a newer response (a 304 or a HEAD's 200) (§3.2).
    static func updatedHeaders(_ stored: HTTPHeaders, with newer: HTTPHeaders) -> HTTPHeaders {
        let replaced = Set(newer.map { $0.name.lowercased() }).subtracting(notUpdated)
        var out = HTTPHeaders()
        for (name, value) in stored where !replaced.contains(name.lowercased()) { out.add(name: name, value: value) }
        for (name, value) in newer where replaced.contains(name.lowercased()) { out.add(name: name, value: value) }
        return out
    }
}
