/// Byte-level helpers for header values (no Foundation on the request path).
package enum HeaderText {
    /// tchar (RFC 9110 §5.6.2) as a bit set over the bytes 0–127.
    @inlinable static var tokenBitsLow: UInt64 { 0x03ff_6cfa_0000_0000 }
    @inlinable static var tokenBitsHigh: UInt64 { 0x57ff_ffff_c7ff_fffe }

    /// Whether `b` may be in a token (a field name, a method).
    @inlinable @inline(__always)
    package static func isTokenChar(_ b: UInt8) -> Bool {
        b < 64 ? (tokenBitsLow >> UInt64(b)) & 1 != 0 : b < 128 && (tokenBitsHigh >> UInt64(b - 64)) & 1 != 0
    }

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
