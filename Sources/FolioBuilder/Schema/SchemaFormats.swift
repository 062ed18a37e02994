import FolioPlist
import Foundation

// MARK: - Pointers

/// JSON pointers (RFC 6901) into instances and schemas.
enum SchemaPath {
    /// One step into an instance: an object member or an array item.
    enum Part: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    static func pointer(_ parts: [Part]) -> String {
        parts.map { part in
            switch part {
            case .key(let k): "/" + escape(k)
            case .index(let i): "/\(i)"
            }
        }.joined()
    }

    static func pointer(_ parts: [String]) -> String {
        parts.map { "/" + escape($0) }.joined()
    }

    /// Document order: a parent before its children, items by index, members by key; ties fall to `orElse`.
    static func precedes(_ a: [Part], _ b: [Part], orElse: Bool) -> Bool {
        for (x, y) in zip(a, b) where x != y {
            switch (x, y) {
            case (.index(let i), .index(let j)): return i < j
            case (.key(let k), .key(let l)): return k < l
            case (.index, .key): return true
            case (.key, .index): return false
            }
        }
        return a.count == b.count ? orElse : a.count < b.count
    }
}

// MARK: - Values as JSON

/// How property-list values read as JSON: dates and data are strings, sets arrays, UIDs integers.
enum SchemaValue {
    /// A form in which JSON-equal values are `==` (1 and 1.0 alike, a date and its RFC 3339 text alike).
    static func canonical(_ v: PlistValue) -> PlistValue {
        switch v {
        case .real(let r):
            if let i = Int64(exactly: r) { return .int(i) }
            if let u = UInt64(exactly: r) { return .uint(u) }
            return v
        case .uid(let u): return .integer(u)
        case .date, .data: return .string(stringView(v) ?? "")
        case .array(let a), .set(let a): return .array(a.map(canonical))
        case .dict(let d): return .dict(d.mapValues(canonical))
        default: return v
        }
    }

    /// Whether `v` is of JSON type `type`; a null is the string `"$null"` (``PlistValue/null``),
    /// as the readers publish it and decoders read it, so it is null and not a string.
    static func matches(_ type: JSONType, _ v: PlistValue) -> Bool {
        if v.isNull { return type == .null }
        return switch (type, v) {
        case (.boolean, .bool), (.string, .string), (.string, .date), (.string, .data): true
        case (.integer, .int), (.integer, .uint), (.integer, .uid): true
        case (.integer, .real(let r)): r.isFinite && r == r.rounded()
        case (.number, .int), (.number, .uint), (.number, .uid), (.number, .real): true
        case (.array, .array), (.array, .set), (.object, .dict): true
        default: false
        }
    }

    /// The string a string-like value stands for; nil for a null.
    static func stringView(_ v: PlistValue) -> String? {
        switch v {
        case .string(let s): v.isNull ? nil : s
        case .data(let d): d.base64EncodedString()
        case .date(let d):
            d.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: d.timeIntervalSinceReferenceDate.rounded() != d.timeIntervalSinceReferenceDate))
        default: nil
        }
    }
}

// MARK: - Numbers

/// A JSON number, compared exactly across integers and reals.
enum SchemaNumber: Sendable, CustomStringConvertible {
    case int(Int64)
    case uint(UInt64)
    case real(Double)

    init?(_ v: PlistValue) {
        switch v {
        case .int(let i): self = .int(i)
        case .uint(let u), .uid(let u): self = .uint(u)
        case .real(let r) where r.isFinite: self = .real(r)
        default: return nil
        }
    }

    var description: String {
        switch self {
        case .int(let i): "\(i)"
        case .uint(let u): "\(u)"
        case .real(let r): "\(r)"
        }
    }

    var isPositive: Bool { SchemaNumber.compare(self, .int(0)) > 0 }

    /// Sign and magnitude of the integer part, and whether a fraction remains (reals in range only).
    var wholePart: (negative: Bool, magnitude: UInt64, fraction: Bool)? {
        switch self {
        case .int(let i): return (i < 0, i.magnitude, false)
        case .uint(let u): return (false, u, false)
        case .real(let r):
            let f = r.rounded(.down)
            guard f >= -0x1p63, f < 0x1p64 else { return nil }
            return f < 0 ? (true, UInt64(-f), r > f) : (false, UInt64(f), r > f)
        }
    }

    /// -1, 0 or 1 as `a` is less than, equal to or greater than `b`.
    static func compare(_ a: SchemaNumber, _ b: SchemaNumber) -> Int {
        guard let x = a.wholePart, let y = b.wholePart else {
            let (p, q) = (a.double, b.double)
            return p < q ? -1 : (p > q ? 1 : 0)
        }
        if x.negative != y.negative { return x.negative ? -1 : 1 }
        let sign = x.negative ? -1 : 1
        if x.magnitude != y.magnitude { return x.magnitude < y.magnitude ? -sign : sign }
        // Equal integer parts (floored): the one with a fraction is larger.
        return x.fraction == y.fraction ? 0 : (x.fraction ? 1 : -1)
    }

    var double: Double {
        switch self {
        case .int(let i): Double(i)
        case .uint(let u): Double(u)
        case .real(let r): r
        }
    }

    func isMultiple(of divisor: SchemaNumber) -> Bool {
        if let x = wholePart, let y = divisor.wholePart, !x.fraction, !y.fraction, y.magnitude != 0 {
            return x.magnitude % y.magnitude == 0
        }
        let q = double / divisor.double
        return !q.isFinite || q == q.rounded()
    }
}

// MARK: - Messages

/// How values read in messages.
enum SchemaText {
    static func typePhrase(_ v: PlistValue) -> String {
        if v.isNull { return "null" }
        return switch v {
        case .bool: "a boolean"
        case .int, .uint, .uid: "an integer"
        case .real: "a number"
        case .string, .date, .data: "a string"
        case .array, .set: "an array"
        case .dict: "an object"
        }
    }

    static func article(_ t: JSONType) -> String {
        switch t {
        case .null: "null"
        case .integer, .array, .object: "an \(t.rawValue)"
        default: "a \(t.rawValue)"
        }
    }

    /// The type and a short rendering, e.g. `an integer (42)`.
    static func describe(_ v: PlistValue) -> String {
        switch v {
        case .array(let a), .set(let a): "an array of \(count(a.count, "item"))"
        case .dict(let d): "an object with \(count(d.count, "property"))"
        default: v.isNull ? "null" : "\(typePhrase(v)) (\(render(v)))"
        }
    }

    /// The value as short JSON text, cut at about 60 characters (and at three levels of nesting).
    static func render(_ v: PlistValue) -> String { render(v, depth: 0) }

    static func render(_ v: PlistValue, depth: Int) -> String {
        let text: String
        let inner = { (x: PlistValue) in depth < 3 ? render(x, depth: depth + 1) : "…" }
        switch v {
        case .bool(let b): text = b ? "true" : "false"
        case .string where v.isNull: text = "null"
        case .int, .uint, .uid, .real: text = SchemaNumber(v)?.description ?? "?"
        case .string, .date, .data:
            var out: [UInt8] = []
            JSONPlist.writeString(SchemaValue.stringView(v) ?? "", into: &out)
            text = String(decoding: out, as: UTF8.self)
        case .array(let a), .set(let a): text = "[" + a.prefix(8).map(inner).joined(separator: ", ") + (a.count > 8 ? ", …]" : "]")
        case .dict(let d):
            text = "{" + d.keys.sorted().prefix(8).map { "\"\($0)\": " + inner(d[$0] ?? .bool(false)) }.joined(separator: ", ") + (d.count > 8 ? ", …}" : "}")
        }
        return text.unicodeScalars.count > 60 ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(57))) + "…" : text
    }

    /// `1 item`, `2 items`, `1 property`, `0 properties`.
    static func count(_ n: Int, _ noun: String) -> String {
        n == 1 ? "1 \(noun)" : noun.hasSuffix("y") ? "\(n) \(noun.dropLast())ies" : "\(n) \(noun)s"
    }

    static func list(_ items: [String], conjunction: String) -> String {
        guard let last = items.last else { return "" }
        if items.count == 1 { return last }
        return items.dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }
}

// MARK: - Patterns

/// A compiled `pattern` (ICU regex, an unanchored search) whose matching work is bounded.
final class SchemaPattern: @unchecked Sendable {  // NSRegularExpression is immutable and thread-safe.
    /// Progress callbacks (~0.3 ms of backtracking each) allowed for one search and for one validation run.
    static let searchBudget = 100
    static let runBudget = 1_000

    let source: String
    let regex: NSRegularExpression

    init?(_ source: String) {
        guard let regex = try? NSRegularExpression(pattern: source) else { return nil }
        self.source = source
        self.regex = regex
    }

    /// Whether the pattern occurs in `s`; nil when the budget ran out first.
    func search(_ s: String, budget: inout Int) -> Bool? {
        guard budget > 0 else { return nil }
        let allowed = min(budget, SchemaPattern.searchBudget)
        var found = false, calls = 0
        regex.enumerateMatches(in: s, options: [.reportProgress], range: NSRange(location: 0, length: s.utf16.count)) { match, _, stop in
            if match != nil {
                found = true
                stop.pointee = true
            } else {
                calls += 1
                if calls >= allowed { stop.pointee = true }
            }
        }
        budget -= calls
        return found ? true : (calls >= allowed ? nil : false)
    }
}

// MARK: - Formats

/// The formats checked as assertions; others are annotations only.
enum SchemaFormat: String, Sendable {
    case dateTime = "date-time"
    case uri
    case email

    var expectation: String {
        switch self {
        case .dateTime: "a date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)"
        case .uri: "an absolute URI with a scheme (e.g. https://example.com/page)"
        case .email: "an email address (e.g. name@example.com)"
        }
    }

    func accepts(_ s: String) -> Bool {
        switch self {
        case .dateTime: SchemaFormat.isDateTime(Array(s.utf8))
        case .uri: SchemaFormat.isURI(Array(s.utf8))
        case .email: SchemaFormat.isEmail(Array(s.utf8))
        }
    }

    /// The decimal number in `b[range]`, when every byte there is a digit.
    static func digits(_ b: [UInt8], _ range: Range<Int>) -> Int? {
        guard range.upperBound <= b.count else { return nil }
        var n = 0
        for c in b[range] {
            guard c >= 0x30, c <= 0x39 else { return nil }
            n = n * 10 + Int(c - 0x30)
        }
        return n
    }

    /// RFC 3339 `date-time`: `full-date "T" full-time`, T and Z in either case; 60 seconds only at 23:59 UTC.
    static func isDateTime(_ b: [UInt8]) -> Bool {
        guard b.count >= 20, let year = digits(b, 0..<4), b[4] == 0x2D, let month = digits(b, 5..<7), b[7] == 0x2D,
            let day = digits(b, 8..<10), b[10] | 0x20 == 0x74, let hour = digits(b, 11..<13), b[13] == 0x3A,
            let minute = digits(b, 14..<16), b[16] == 0x3A, let second = digits(b, 17..<19)
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), day >= 1, day <= days[month - 1], hour <= 23, minute <= 59, second <= 60 else { return false }
        var i = 19
        if b[i] == 0x2E {
            i += 1
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            guard i > start, i < b.count else { return false }
        }
        var offset = 0
        if b[i] | 0x20 == 0x7A {
            i += 1
        } else {
            guard b[i] == 0x2B || b[i] == 0x2D, let oh = digits(b, i + 1..<i + 3), i + 3 < b.count, b[i + 3] == 0x3A,
                let om = digits(b, i + 4..<i + 6), oh <= 23, om <= 59
            else { return false }
            offset = (oh * 60 + om) * (b[i] == 0x2B ? 1 : -1)
            i += 6
        }
        guard i == b.count else { return false }
        return second < 60 || ((hour * 60 + minute - offset) % 1440 + 1440) % 1440 == 1439
    }

    static func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    static func isHex(_ c: UInt8) -> Bool { isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66) }

    /// RFC 3986 absolute URI: a scheme, then only URI characters, valid %XX escapes, one `#` at most, `[ ]` only in the authority.
    static func isURI(_ b: [UInt8]) -> Bool {
        guard let colon = b.firstIndex(of: 0x3A), colon > 0, isAlpha(b[0]),
            b[1..<colon].allSatisfy({ isAlpha($0) || isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E })
        else { return false }
        let rest = Array(b[(colon + 1)...])
        let hasAuthority = rest.starts(with: [0x2F, 0x2F])
        let authorityEnd = hasAuthority ? (rest[2...].firstIndex { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 } ?? rest.count) : 0
        let allowed = Set("-._~!$&'()*+,;=:@/?".utf8)
        var fragments = 0
        var i = 0
        while i < rest.count {
            let c = rest[i]
            if c == 0x25 {
                guard i + 2 < rest.count, isHex(rest[i + 1]), isHex(rest[i + 2]) else { return false }
                i += 3
                continue
            }
            if c == 0x23 { fragments += 1 }
            let bracketOK = (c == 0x5B || c == 0x5D) && i < authorityEnd
            guard isAlpha(c) || isDigit(c) || allowed.contains(c) || c == 0x23 || bracketOK, fragments <= 1 else { return false }
            i += 1
        }
        return true
    }

    /// RFC 5321 `Mailbox`: a dot-string or quoted local part, `@`, and a hostname or an address literal.
    static func isEmail(_ b: [UInt8]) -> Bool {
        guard b.count <= 254, let at = b.lastIndex(of: 0x40), at > 0, at <= 64, at + 1 < b.count else { return false }
        let local = Array(b[..<at]), domain = Array(b[(at + 1)...])
        let localOK: Bool
        if local.count >= 2, local.first == 0x22, local.last == 0x22 {
            localOK = isQuotedContent(Array(local.dropFirst().dropLast()))
        } else {
            let atext = Set("!#$%&'*+-/=?^_`{|}~".utf8)
            localOK = local.split(separator: 0x2E, omittingEmptySubsequences: false).allSatisfy { atom in
                !atom.isEmpty && atom.allSatisfy { isAlpha($0) || isDigit($0) || atext.contains($0) }
            }
        }
        return localOK && (isHostname(domain) || isAddressLiteral(domain))
    }

    static func isQuotedContent(_ q: [UInt8]) -> Bool {
        var i = 0
        while i < q.count {
            if q[i] == 0x5C {
                guard i + 1 < q.count, q[i + 1] >= 0x20, q[i + 1] <= 0x7E else { return false }
                i += 2
            } else {
                guard q[i] >= 0x20, q[i] <= 0x7E, q[i] != 0x22 else { return false }
                i += 1
            }
        }
        return true
    }

    static func isHostname(_ d: [UInt8]) -> Bool {
        guard d.count <= 253 else { return false }
        return d.split(separator: 0x2E, omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.first != 0x2D && label.last != 0x2D
                && label.allSatisfy { isAlpha($0) || isDigit($0) || $0 == 0x2D }
        }
    }

    static func isAddressLiteral(_ d: [UInt8]) -> Bool {
        guard d.count >= 3, d.first == 0x5B, d.last == 0x5D else { return false }
        let inner = String(decoding: d.dropFirst().dropLast(), as: UTF8.self)
        if inner.lowercased().hasPrefix("ipv6:") {
            let v6 = inner.dropFirst(5)
            return !v6.isEmpty && v6.contains(":") && v6.utf8.allSatisfy { isHex($0) || $0 == 0x3A || $0 == 0x2E }
        }
        let parts = inner.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { p in
            p.count <= 3 && p.utf8.allSatisfy(isDigit) && (Int(p).map { $0 <= 255 } ?? false)
        }
    }
}
