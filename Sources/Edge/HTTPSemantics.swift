import Foundation

/// The content codings the edge can serve.
enum ContentCoding: Sendable, Equatable {
    case identity, gzip
}

/// `Accept-Encoding` negotiation (RFC 9110 §12.5.3) with q-values.
enum AcceptEncoding {
    /// The coding to serve, or nil when nothing acceptable exists (406).
    /// Without the header, identity is served; on a tie gzip wins (it is smaller).
    static func choose(_ header: Substring?, hasGzip: Bool) -> ContentCoding? {
        guard let header else { return .identity }
        var gzipQ: Double?
        var identityQ: Double?
        var starQ: Double?
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";")
            guard let rawName = parts.first else { continue }
            let name = rawName.trimmingCharacters(in: .whitespaces).lowercased()
            if name.isEmpty { continue }
            var q = 1.0
            for param in parts.dropFirst() {
                let kv = param.split(separator: "=", maxSplits: 1)
                guard kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "q" else { continue }
                guard let value = Double(kv[1].trimmingCharacters(in: .whitespaces)), (0...1).contains(value) else {
                    q = -1
                    break
                }
                q = value
            }
            if q < 0 { continue }  // a malformed q-value: ignore the item
            switch name {
            case "gzip", "x-gzip": gzipQ = max(gzipQ ?? 0, q)
            case "identity": identityQ = q
            case "*": starQ = q
            default: break
            }
        }
        let g = hasGzip ? (gzipQ ?? starQ ?? 0) : 0
        let i = identityQ ?? starQ ?? 1
        if g > 0, g >= i { return .gzip }
        if i > 0 { return .identity }
        return nil
    }
}

/// One entity-tag from a conditional header.
struct EntityTag: Equatable {
    var opaque: Substring
    var weak: Bool
}

/// Entity-tag lists (`If-Match`, `If-None-Match`): `*` or tags, compared strongly or weakly.
enum EntityTagList {
    case any
    case tags([EntityTag])

    /// Parses a header value; malformed members end the list.
    static func parse(_ value: Substring) -> EntityTagList {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" { return .any }
        var tags: [EntityTag] = []
        var rest = value[...]
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { break }
            var weak = false
            if rest.hasPrefix("W/") {
                weak = true
                rest = rest.dropFirst(2)
            }
            guard rest.first == "\"" else { break }
            let body = rest.dropFirst()
            guard let close = body.firstIndex(of: "\"") else { break }
            tags.append(EntityTag(opaque: body[..<close], weak: weak))
            rest = body[body.index(after: close)...]
        }
        return .tags(tags)
    }

    /// Strong comparison: both tags strong and equal (If-Match, If-Range).
    func matchesStrongly(_ etag: String) -> Bool {
        switch self {
        case .any: return true
        case .tags(let tags): return tags.contains { !$0.weak && $0.opaque == Self.opaque(etag) }
        }
    }

    /// Weak comparison: the opaque parts are equal (If-None-Match).
    func matchesWeakly(_ etag: String) -> Bool {
        switch self {
        case .any: return true
        case .tags(let tags): return tags.contains { $0.opaque == Self.opaque(etag) }
        }
    }

    /// `"abc"` → `abc`.
    static func opaque(_ etag: String) -> Substring {
        etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count >= 2 ? etag.dropFirst().dropLast() : etag[...]
    }
}

/// The request headers that make a GET or HEAD conditional.
struct Conditions {
    var ifMatch: Substring?
    var ifNoneMatch: Substring?
    var ifModifiedSince: Substring?
    var ifUnmodifiedSince: Substring?
    var ifRange: Substring?
    var range: Substring?
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
        guard let ifRange = c.ifRange?.trimmingCharacters(in: .whitespaces) else { return true }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            return EntityTagList.parse(ifRange[...]).matchesStrongly(etag)
        }
        guard let date = HTTPDate.parse(ifRange[...]) else { return false }
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

    static func parse(_ header: Substring?, length: Int) -> ByteRange {
        guard let header else { return .whole }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .whole }
        let specs = trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
        guard specs.count == 1 else { return .whole }  // several ranges: answer with the whole (allowed)
        let spec = specs[0].trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        func number(_ s: Substring) -> Int? {
            guard !s.isEmpty, s.count <= 18, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(s)
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
    static func parse(_ s: Substring) -> Int64? {
        let u = Array(s.trimmingCharacters(in: .whitespaces).utf8)
        guard u.count == 29, u[3] == UInt8(ascii: ","), u[4] == 32, u[7] == 32, u[11] == 32, u[16] == 32,
            u[19] == UInt8(ascii: ":"), u[22] == UInt8(ascii: ":"), u[25] == 32,
            String(decoding: u[26..<29], as: UTF8.self) == "GMT"
        else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for b in u[r] {
                guard b >= 48, b <= 57 else { return nil }
                v = v * 10 + Int(b - 48)
            }
            return v
        }
        guard let day = num(5..<7), let year = num(12..<16), let hour = num(17..<19),
            let minute = num(20..<22), let second = num(23..<25),
            let monthIndex = months.firstIndex(of: String(decoding: u[8..<11], as: UTF8.self)),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let month = monthIndex + 1
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yoe = y - era * 400
        let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let daysSinceEpoch = era * 146097 + doe - 719468
        return Int64(daysSinceEpoch * 86400 + hour * 3600 + minute * 60 + second)
    }
}
