/// Cache directives (RFC 9111 §5.2) parsed from every `Cache-Control` line of a message (or from
/// `CDN-Cache-Control`, RFC 9213, which has the same syntax). Names are case-insensitive; values
/// may be tokens or quoted strings; a delta-seconds that overflows is 2^31 (§1.2.2); a freshness
/// directive with an invalid value makes the response stale (§4.2.1).
package struct CacheControl: Sendable, Equatable {
    package var maxAge: Int?
    package var sMaxAge: Int?
    package var noStore = false
    /// Unqualified, or qualified with field names (treated as unqualified: revalidate always).
    package var noCache = false
    /// Unqualified `private`; a qualified one names fields a shared cache must not store.
    package var isPrivate = false
    package var privateFields: [String] = []
    package var isPublic = false
    package var mustRevalidate = false
    package var proxyRevalidate = false
    package var mustUnderstand = false
    package var immutable = false
    package var onlyIfCached = false
    /// Request `max-stale`: nil absent, `Int.max` without a value.
    package var maxStale: Int?
    package var minFresh: Int?
    package var staleWhileRevalidate: Int?
    package var staleIfError: Int?
    /// Whether any directive at all was present.
    package var isEmpty = true

    /// The largest delta-seconds a recipient keeps (RFC 9111 §1.2.2).
    package static let deltaLimit = 2_147_483_648

    package init() {}

    /// The directives of every line of a field (`lines`, each value as received); nil when
    /// there is none.
    package init?(lines: [String]) {
        guard !lines.isEmpty else { return nil }
        self.init(parsing: lines.joined(separator: ","))
    }

    package init(parsing text: String) {
        for (rawName, value) in Self.directives(text) {
            isEmpty = false
            let name = rawName.lowercased()
            switch name {
            case "max-age": maxAge = maxAge ?? Self.seconds(value, invalid: 0)
            case "s-maxage": sMaxAge = sMaxAge ?? Self.seconds(value, invalid: 0)
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "private":
                if let value, !value.isEmpty {
                    privateFields += value.split(separator: ",").map { HeaderText.trimmed($0).lowercased() }
                } else {
                    isPrivate = true
                }
            case "public": isPublic = true
            case "must-revalidate": mustRevalidate = true
            case "proxy-revalidate": proxyRevalidate = true
            case "must-understand": mustUnderstand = true
            case "immutable": immutable = true
            case "only-if-cached": onlyIfCached = true
            case "max-stale": maxStale = maxStale ?? (value == nil ? Int.max : Self.seconds(value, invalid: 0))
            case "min-fresh": minFresh = minFresh ?? Self.seconds(value, invalid: 0)
            case "stale-while-revalidate": staleWhileRevalidate = staleWhileRevalidate ?? Self.seconds(value, invalid: nil)
            case "stale-if-error": staleIfError = staleIfError ?? Self.seconds(value, invalid: nil)
            default: break
            }
        }
    }

    /// `CDN-Cache-Control` (RFC 9213): a Structured Field dictionary (RFC 8941). nil when the
    /// field is not a valid one, or a directive has the wrong type, and so must be ignored.
    package init?(structuredField text: String) {
        guard let members = StructuredDictionary.parse(text) else { return nil }
        self.init()
        for (key, item) in members {
            isEmpty = false
            switch key {
            case "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error":
                guard case .integer(let n) = item, n >= 0 else { return nil }
                let v = min(n, Self.deltaLimit)
                switch key {
                case "max-age": maxAge = maxAge ?? v
                case "s-maxage": sMaxAge = sMaxAge ?? v
                case "stale-while-revalidate": staleWhileRevalidate = staleWhileRevalidate ?? v
                default: staleIfError = staleIfError ?? v
                }
            default:
                guard item == .boolean(true) else { continue }
                switch key {
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "private": isPrivate = true
                case "public": isPublic = true
                case "must-revalidate": mustRevalidate = true
                case "proxy-revalidate": proxyRevalidate = true
                case "immutable": immutable = true
                default: break
                }
            }
        }
    }

    /// Splits `a, b=1, c="x, y"` into (name, value) pairs; quoted values are unquoted. (Over
    /// UTF-8 bytes: every delimiter is ASCII.)
    package static func directives(_ text: String) -> [(String, String?)] {
        var text = text
        return text.withUTF8 { b in
            var out: [(String, String?)] = []
            var i = 0
            while i < b.count {
                while i < b.count, HeaderText.isSpace(b[i]) || b[i] == comma { i += 1 }
                guard i < b.count else { break }
                let nameStart = i
                while i < b.count, b[i] != equals, b[i] != comma, !HeaderText.isSpace(b[i]) { i += 1 }
                let nameEnd = i
                var value: String?
                var valid = true
                if i < b.count, b[i] == equals {
                    // No whitespace around "=" (RFC 9111 §5.2): `max-age = 5` is not a max-age.
                    i += 1
                    if i < b.count, HeaderText.isSpace(b[i]) { valid = false }
                    value = i < b.count && b[i] == quote ? quoted(b, &i) : token(b, &i)
                }
                // Anything else up to the next comma makes the directive invalid: skip it.
                let restStart = i
                while i < b.count, b[i] != comma { i += 1 }
                if !b[restStart..<i].allSatisfy(HeaderText.isSpace) { valid = false }
                if nameEnd > nameStart, valid { out.append((String(decoding: b[nameStart..<nameEnd], as: UTF8.self), value)) }
            }
            return out
        }
    }

    private static let comma = UInt8(ascii: ","), equals = UInt8(ascii: "="), quote = UInt8(ascii: "\"")

    /// A quoted string from its opening quote at `i`, unescaped; `i` ends past the closing one.
    private static func quoted(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> String {
        var v: [UInt8] = []
        i += 1
        while i < b.count, b[i] != quote {
            if b[i] == UInt8(ascii: "\\"), i + 1 < b.count { i += 1 }
            v.append(b[i])
            i += 1
        }
        if i < b.count { i += 1 }
        return String(decoding: v, as: UTF8.self)
    }

    /// A token value up to the next comma, without surrounding whitespace.
    private static func token(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> String {
        var start = i
        while i < b.count, b[i] != comma { i += 1 }
        var end = i
        while start < end, HeaderText.isSpace(b[start]) { start += 1 }
        while end > start, HeaderText.isSpace(b[end - 1]) { end -= 1 }
        return String(decoding: b[start..<end], as: UTF8.self)
    }

    /// The `Age` value (the first line of the field): a non-negative integer (the first of
    /// several); nil when absent or invalid.
    package static func age(_ first: String?) -> Int? {
        guard let first else { return nil }
        let v = first.split(separator: ",").first.map { HeaderText.trimmed($0) } ?? ""
        return seconds(v, invalid: nil)
    }

    /// delta-seconds (digits only, clamped to 2^31); `invalid` for anything else.
    package static func seconds(_ value: String?, invalid: Int?) -> Int? {
        guard let value, !value.isEmpty, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return invalid }
        if value.count > 10 { return deltaLimit }
        return min(Int(value) ?? deltaLimit, deltaLimit)
    }
}

/// A Structured Field dictionary (RFC 8941 §3.2, §4.2.2), strictly: members' bare items are
/// kept, parameters checked and dropped, inner lists checked.
package enum StructuredDictionary {
    package enum Item: Equatable {
        case integer(Int)
        case decimal
        case string
        case token
        case bytes
        case boolean(Bool)
        case innerList
    }

    package static func parse(_ text: String) -> [(String, Item)]? {
        var s = Array(text.utf8)[...]
        func skip(_ chars: Set<UInt8>) { while let c = s.first, chars.contains(c) { s = s.dropFirst() } }
        let sp: Set<UInt8> = [32]
        let ows: Set<UInt8> = [32, 9]
        skip(sp)
        var out: [(String, Item)] = []
        while !s.isEmpty {
            guard let key = parseKey(&s) else { return nil }
            var item = Item.boolean(true)
            if s.first == UInt8(ascii: "=") {
                s = s.dropFirst()
                if s.first == UInt8(ascii: "(") {
                    guard parseInnerList(&s) else { return nil }
                    item = .innerList
                } else {
                    guard let i = parseBareItem(&s) else { return nil }
                    item = i
                }
            }
            guard parseParameters(&s) else { return nil }
            out.removeAll { $0.0 == key }
            out.append((key, item))
            skip(ows)
            if s.isEmpty { break }
            guard s.first == UInt8(ascii: ",") else { return nil }
            s = s.dropFirst()
            skip(ows)
            if s.isEmpty { return nil }
        }
        return out
    }

    private static func isLCAlpha(_ c: UInt8) -> Bool { c >= 97 && c <= 122 }
    private static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
    private static func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) >= 97 && (c | 0x20) <= 122 }

    private static func parseKey(_ s: inout ArraySlice<UInt8>) -> String? {
        guard let c = s.first, isLCAlpha(c) || c == UInt8(ascii: "*") else { return nil }
        var key = [c]
        s = s.dropFirst()
        while let c = s.first, isLCAlpha(c) || isDigit(c) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "*") {
            key.append(c)
            s = s.dropFirst()
        }
        return String(decoding: key, as: UTF8.self)
    }

    private static func parseParameters(_ s: inout ArraySlice<UInt8>) -> Bool {
        while s.first == UInt8(ascii: ";") {
            s = s.dropFirst()
            while s.first == 32 { s = s.dropFirst() }
            guard parseKey(&s) != nil else { return false }
            if s.first == UInt8(ascii: "=") {
                s = s.dropFirst()
                guard parseBareItem(&s) != nil else { return false }
            }
        }
        return true
    }

    private static func parseInnerList(_ s: inout ArraySlice<UInt8>) -> Bool {
        s = s.dropFirst()
        while true {
            while s.first == 32 { s = s.dropFirst() }
            guard let c = s.first else { return false }
            if c == UInt8(ascii: ")") {
                s = s.dropFirst()
                return parseParameters(&s)
            }
            guard parseBareItem(&s) != nil, parseParameters(&s) else { return false }
            guard let next = s.first, next == 32 || next == UInt8(ascii: ")") else { return false }
        }
    }

    private static func parseBareItem(_ s: inout ArraySlice<UInt8>) -> Item? {
        guard let c = s.first else { return nil }
        if c == UInt8(ascii: "-") || isDigit(c) {
            var negative = false
            if c == UInt8(ascii: "-") {
                negative = true
                s = s.dropFirst()
            }
            var digits = 0
            var value = 0
            while let d = s.first, isDigit(d) {
                digits += 1
                guard digits <= 15 else { return nil }
                value = value * 10 + Int(d - 48)
                s = s.dropFirst()
            }
            guard digits > 0 else { return nil }
            if s.first == UInt8(ascii: ".") {
                guard digits <= 12 else { return nil }
                s = s.dropFirst()
                var fraction = 0
                while let d = s.first, isDigit(d) {
                    fraction += 1
                    s = s.dropFirst()
                }
                return fraction >= 1 && fraction <= 3 ? .decimal : nil
            }
            return .integer(negative ? -value : value)
        }
        if c == UInt8(ascii: "\"") {
            s = s.dropFirst()
            while let d = s.first {
                s = s.dropFirst()
                if d == UInt8(ascii: "\\") {
                    guard let e = s.first, e == UInt8(ascii: "\"") || e == UInt8(ascii: "\\") else { return nil }
                    s = s.dropFirst()
                } else if d == UInt8(ascii: "\"") {
                    return .string
                } else if d < 0x20 || d > 0x7E {
                    return nil
                }
            }
            return nil
        }
        if isAlpha(c) || c == UInt8(ascii: "*") {
            s = s.dropFirst()
            while let d = s.first, d > 0x20, d < 0x7F, !"\"(),;<=>?@[\\]{}".utf8.contains(d) || d == UInt8(ascii: ":") || d == UInt8(ascii: "/") {
                s = s.dropFirst()
            }
            return .token
        }
        if c == UInt8(ascii: ":") {
            s = s.dropFirst()
            while let d = s.first, isAlpha(d) || isDigit(d) || d == UInt8(ascii: "+") || d == UInt8(ascii: "/") || d == UInt8(ascii: "=") {
                s = s.dropFirst()
            }
            guard s.first == UInt8(ascii: ":") else { return nil }
            s = s.dropFirst()
            return .bytes
        }
        if c == UInt8(ascii: "?") {
            s = s.dropFirst()
            guard let b = s.first, b == 48 || b == 49 else { return nil }
            s = s.dropFirst()
            return .boolean(b == 49)
        }
        return nil
    }
}
