/// Byte-level helpers for header values (no Foundation on the request path).
package enum HeaderText {
    @inlinable
    package static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    @inlinable
    package static func trimBytes(_ s: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var s = s
        while let f = s.first, isSpace(f) { s = s.dropFirst() }
        while let l = s.last, isSpace(l) { s = s.dropLast() }
        return s
    }

    /// `s` without leading and trailing spaces and tabs (HTTP's OWS; Foundation's trimming, which
    /// also takes Unicode spaces, cost a quarter of a cache entry's set-up).
    package static func trimmed(_ s: String) -> String { trimmed(Substring(s)) }

    package static func trimmed(_ s: Substring) -> String {
        let utf8 = s.utf8
        guard let start = utf8.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = utf8.lastIndex(where: { !isSpace($0) })!
        return String(s[start...end])
    }

    /// ASCII case-insensitive comparison with a lowercase literal.
    @inlinable
    package static func equalsLowercase(_ s: some Collection<UInt8>, _ lower: StaticString) -> Bool {
        guard s.count == lower.utf8CodeUnitCount else { return false }
        return lower.withUTF8Buffer { l in
            var i = 0
            for b in s {
                let folded = b >= 0x41 && b <= 0x5A ? b | 0x20 : b
                if folded != l[i] { return false }
                i += 1
            }
            return true
        }
    }

    /// The same over a slice of a buffer, the header parsers' case: not generic, so a caller in
    /// another module never takes the unspecialized path (perf found that one at 3% of a 304).
    @inlinable
    package static func equalsLowercase(_ s: Slice<UnsafeRawBufferPointer>, _ lower: StaticString) -> Bool {
        let n = lower.utf8CodeUnitCount
        guard s.count == n else { return false }
        let p = lower.utf8Start
        var i = 0
        var at = s.startIndex
        while i < n {
            let b = s.base[at]
            if (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) != p[i] { return false }
            i += 1
            at += 1
        }
        return true
    }

    /// A q-value: 0, 1, or 0.d{1,3} / 1.0{1,3}; nil when malformed. Spaces inside are skipped.
    @inlinable
    package static func qValue(_ s: some Collection<UInt8>) -> Double? {
        var digits = 0  // the characters seen, spaces left out
        var v = 0.0
        var scale = 0.1
        for b in s where !isSpace(b) {
            digits += 1
            switch digits {
            case 1:
                guard b == UInt8(ascii: "0") || b == UInt8(ascii: "1") else { return nil }
                v = Double(b - 48)
            case 2:
                guard b == UInt8(ascii: ".") else { return nil }
            case 3...5:
                guard b >= 48, b <= 57 else { return nil }
                v += Double(b - 48) * scale
                scale /= 10
            default:
                return nil
            }
        }
        guard digits > 0 else { return nil }
        return v <= 1 ? v : nil
    }
}

/// The request headers that make a GET or HEAD conditional.
package struct Conditions: Equatable, Sendable {
    package var ifMatch: HeaderValue?
    package var ifNoneMatch: HeaderValue?
    package var ifModifiedSince: HeaderValue?
    package var ifUnmodifiedSince: HeaderValue?
    package var ifRange: HeaderValue?
    package var range: HeaderValue?

    /// Conditions from these header values (nil: the header is absent).
    @inlinable
    package init(
        ifMatch: HeaderValue? = nil, ifNoneMatch: HeaderValue? = nil, ifModifiedSince: HeaderValue? = nil,
        ifUnmodifiedSince: HeaderValue? = nil, ifRange: HeaderValue? = nil, range: HeaderValue? = nil
    ) {
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.ifUnmodifiedSince = ifUnmodifiedSince
        self.ifRange = ifRange
        self.range = range
    }

    /// The same with every view copied (see `HeaderValue`).
    @inlinable
    package func owned() -> Conditions {
        Conditions(
            ifMatch: ifMatch?.owned(), ifNoneMatch: ifNoneMatch?.owned(), ifModifiedSince: ifModifiedSince?.owned(),
            ifUnmodifiedSince: ifUnmodifiedSince?.owned(), ifRange: ifRange?.owned(), range: range?.owned())
    }
}
