import FolioHTTPCore
import Foundation

/// The content codings the edge can serve.
enum ContentCoding: Sendable, Equatable {
    case identity, gzip, brotli
}

/// `Accept-Encoding` negotiation (RFC 9110 §12.5.3) with q-values.
enum AcceptEncoding {
    /// The coding to serve, or nil when nothing acceptable exists (406).
    /// Without the header, identity is served; on a tie brotli wins, then gzip (the smaller).
    static func choose(_ header: HeaderValue?, hasGzip: Bool, hasBrotli: Bool = false) -> ContentCoding? {
        guard let header else { return .identity }
        return choose(header.bytes, hasGzip: hasGzip, hasBrotli: hasBrotli)
    }

    /// The same over the header's bytes: one pass, nothing allocated.
    static func choose(_ bytes: UnsafeRawBufferPointer, hasGzip: Bool, hasBrotli: Bool = false) -> ContentCoding? {
        var gzipQ: Double?
        var brotliQ: Double?
        var identityQ: Double?
        var starQ: Double?
        let n = bytes.count
        var itemStart = 0
        while itemStart <= n {
            var itemEnd = itemStart
            while itemEnd < n, bytes[itemEnd] != UInt8(ascii: ",") { itemEnd += 1 }
            defer { itemStart = itemEnd + 1 }
            // The coding name, up to the first ';', then its parameters.
            var nameEnd = itemStart
            while nameEnd < itemEnd, bytes[nameEnd] != UInt8(ascii: ";") { nameEnd += 1 }
            let name = HeaderText.trimBytes(bytes[itemStart..<nameEnd])
            if name.isEmpty { continue }
            var q = 1.0
            var paramStart = nameEnd + 1
            while paramStart <= itemEnd {
                var paramEnd = paramStart
                while paramEnd < itemEnd, bytes[paramEnd] != UInt8(ascii: ";") { paramEnd += 1 }
                defer { paramStart = paramEnd + 1 }
                let p = HeaderText.trimBytes(bytes[paramStart..<paramEnd])
                guard p.count >= 2, p[p.startIndex] | 0x20 == UInt8(ascii: "q"), p[p.startIndex + 1] == UInt8(ascii: "=") else {
                    continue
                }
                guard let value = HeaderText.qValue(p.dropFirst(2)) else {
                    q = -1
                    break
                }
                q = value
            }
            if q < 0 { continue }  // a malformed q-value: ignore the item
            if HeaderText.equalsLowercase(name, "gzip") || HeaderText.equalsLowercase(name, "x-gzip") {
                gzipQ = max(gzipQ ?? 0, q)
            } else if HeaderText.equalsLowercase(name, "br") {
                brotliQ = q
            } else if HeaderText.equalsLowercase(name, "identity") {
                identityQ = q
            } else if name.count == 1, name.first == UInt8(ascii: "*") {
                starQ = q
            }
        }
        let b = hasBrotli ? (brotliQ ?? starQ ?? 0) : 0
        let g = hasGzip ? (gzipQ ?? starQ ?? 0) : 0
        let i = identityQ ?? starQ ?? 1
        if b > 0, b >= g, b >= i { return .brotli }
        if g > 0, g >= i { return .gzip }
        if i > 0 { return .identity }
        return nil
    }
}

/// Entity-tag lists (`If-Match`, `If-None-Match`): `*` or tags, compared strongly or weakly.
/// Scanned as bytes, lazily: matching stops at the first hit; a malformed member ends the list.
struct EntityTagList {
    let value: HeaderValue

    static func parse(_ value: HeaderValue) -> EntityTagList { EntityTagList(value: value) }

    /// Strong comparison: both tags strong and equal (If-Match, If-Range).
    func matchesStrongly(_ etag: String) -> Bool { matches(etag, weakAllowed: false) }

    /// Weak comparison: the opaque parts are equal (If-None-Match).
    func matchesWeakly(_ etag: String) -> Bool { matches(etag, weakAllowed: true) }

    private func matches(_ etag: String, weakAllowed: Bool) -> Bool {
        var etag = etag
        return etag.withUTF8 { mine in
            Self.scan(value.bytes, opaque: Self.opaque(UnsafeRawBufferPointer(mine)), weakAllowed: weakAllowed)
        }
    }

    /// The bytes between the quotes of `"abc"`.
    static func opaque(_ etag: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard etag.count >= 2, etag[0] == UInt8(ascii: "\""), etag[etag.count - 1] == UInt8(ascii: "\"") else { return etag }
        return UnsafeRawBufferPointer(rebasing: etag[1..<(etag.count - 1)])
    }

    private static func scan(_ list: UnsafeRawBufferPointer, opaque: UnsafeRawBufferPointer, weakAllowed: Bool) -> Bool {
        var i = 0
        let n = list.count
        @inline(__always) func skipSpace() {
            while i < n, list[i] == 0x20 || list[i] == 0x09 { i += 1 }
        }
        skipSpace()
        if i < n, list[i] == UInt8(ascii: "*") {
            var j = i + 1
            while j < n, list[j] == 0x20 || list[j] == 0x09 { j += 1 }
            if j == n { return true }
        }
        while true {
            while i < n, list[i] == 0x20 || list[i] == 0x09 || list[i] == UInt8(ascii: ",") { i += 1 }
            guard i < n else { return false }
            var weak = false
            if i + 1 < n, list[i] == UInt8(ascii: "W"), list[i + 1] == UInt8(ascii: "/") {
                weak = true
                i += 2
            }
            guard i < n, list[i] == UInt8(ascii: "\"") else { return false }
            let start = i + 1
            guard start < n, let q = memchr(list.baseAddress! + start, Int32(UInt8(ascii: "\"")), n - start) else { return false }
            let end = UnsafeRawPointer(q) - list.baseAddress!
            if (weakAllowed || !weak), end - start == opaque.count,
                opaque.count == 0 || memcmp(list.baseAddress! + start, opaque.baseAddress!, opaque.count) == 0
            {
                return true
            }
            i = end + 1
        }
    }
}

/// What the preconditions decide (RFC 9110 §13.2.2).
enum PreconditionOutcome: Equatable {
    case proceed
    case notModified
    case failed
}

enum Preconditions {
    /// Evaluates If-Match, If-Unmodified-Since, If-None-Match and If-Modified-Since in the RFC's order.
    static func evaluate(_ c: Conditions, isGetOrHead: Bool, etag: String, lastModified: Int64) -> PreconditionOutcome {
        if let ifMatch = c.ifMatch {
            if !EntityTagList.parse(ifMatch).matchesStrongly(etag) { return .failed }
        } else if let ius = c.ifUnmodifiedSince, let date = HTTPDate.parse(ius) {
            if lastModified > date { return .failed }
        }
        if let inm = c.ifNoneMatch {
            if EntityTagList.parse(inm).matchesWeakly(etag) { return isGetOrHead ? .notModified : .failed }
        } else if isGetOrHead, let ims = c.ifModifiedSince, let date = HTTPDate.parse(ims) {
            if lastModified <= date { return .notModified }
        }
        return .proceed
    }

    /// Whether a Range header may be honoured given If-Range (strong ETag or exact date match).
    static func rangeApplies(_ c: Conditions, etag: String, lastModified: Int64) -> Bool {
        guard let ifRange = c.ifRange else { return true }
        let t = HeaderText.trimBytes(ifRange.bytes[...])
        if t.first == UInt8(ascii: "\"") || t.first == UInt8(ascii: "W") {
            return EntityTagList.parse(ifRange).matchesStrongly(etag)
        }
        guard let date = HTTPDate.parse(ifRange) else { return false }
        return date == lastModified
    }
}

/// Single byte ranges (RFC 9110 §14).
enum ByteRange: Equatable {
    /// No usable Range: serve the whole representation with 200.
    case whole
    /// One satisfiable range: serve 206.
    case partial(ClosedRange<Int>)
    /// Nothing satisfiable: 416.
    case unsatisfiable

    static func parse(_ header: HeaderValue?, length: Int) -> ByteRange {
        guard let header else { return .whole }
        let trimmed = HeaderText.trimBytes(header.bytes[...])
        guard trimmed.count >= 6, HeaderText.equalsLowercase(trimmed.prefix(6), "bytes=") else { return .whole }
        let set = trimmed.dropFirst(6)
        // Several ranges: answer with the whole (allowed).
        guard !set.contains(UInt8(ascii: ",")) else { return .whole }
        let spec = HeaderText.trimBytes(set)
        guard let dash = spec.firstIndex(of: UInt8(ascii: "-")) else { return .whole }
        let first = spec[..<dash]
        let last = spec[(dash + 1)...]
        func number(_ s: Slice<UnsafeRawBufferPointer>) -> Int? {
            guard !s.isEmpty, s.count <= 18, s.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return s.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        if first.isEmpty {
            guard let suffix = number(last) else { return .whole }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .partial(max(0, length - suffix)...(length - 1))
        }
        guard let start = number(first) else { return .whole }
        var end = length - 1
        if !last.isEmpty {
            guard let e = number(last), e >= start else { return .whole }
            end = min(e, length - 1)
        }
        guard start < length else { return .unsatisfiable }
        return .partial(start...end)
    }
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the HTTP date format.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(tm.tm_wday)]), \(two(tm.tm_mday)) \(months[Int(tm.tm_mon)]) \(tm.tm_year + 1900) "
            + "\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)) GMT"
    }

    /// Seconds since 1970 for an IMF-fixdate; nil for anything else (which the caller ignores).
    static func parse(_ value: HeaderValue) -> Int64? {
        let u = HeaderText.trimBytes(value.bytes[...])
        guard u.count == 29 else { return nil }
        let o = u.startIndex
        func at(_ k: Int) -> UInt8 { u[o + k] }
        guard at(3) == UInt8(ascii: ","), at(4) == 32, at(7) == 32, at(11) == 32, at(16) == 32,
            at(19) == UInt8(ascii: ":"), at(22) == UInt8(ascii: ":"), at(25) == 32,
            at(26) == UInt8(ascii: "G"), at(27) == UInt8(ascii: "M"), at(28) == UInt8(ascii: "T")
        else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for k in r {
                let b = at(k)
                guard b >= 48, b <= 57 else { return nil }
                v = v * 10 + Int(b - 48)
            }
            return v
        }
        let monthName = u[(o + 8)..<(o + 11)]
        guard let day = num(5..<7), let year = num(12..<16), let hour = num(17..<19),
            let minute = num(20..<22), let second = num(23..<25),
            let monthIndex = months.firstIndex(where: { $0.utf8.elementsEqual(monthName) }),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return epochSeconds(year: year, month: monthIndex + 1, day: day, hour, minute, second)
    }

    /// Seconds since 1970 for a UTC civil date and time (days from civil, proleptic Gregorian).
    static func epochSeconds(year: Int, month: Int, day: Int, _ hour: Int, _ minute: Int, _ second: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Int64((era * 146097 + doe - 719468) * 86400 + hour * 3600 + minute * 60 + second)
    }
}
