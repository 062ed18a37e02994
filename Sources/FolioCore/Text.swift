/// Roman numerals in canonical form (I…MMMCMXCIX).
package enum RomanNumeral {
    private static let table: [(Int, String)] = [
        (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
        (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
    ]

    /// The canonical numeral for 1...3999.
    package static func format(_ n: Int) -> String {
        precondition((1...3999).contains(n), "Roman numerals cover 1...3999")
        var n = n
        var s = ""
        for (value, glyphs) in table {
            while n >= value {
                s += glyphs
                n -= value
            }
        }
        return s
    }

    /// The value of a canonical numeral (case-insensitive), or nil if `s` is not one.
    package static func parse(_ s: some StringProtocol) -> Int? {
        let upper = s.uppercased()
        guard !upper.isEmpty, upper.count <= 15 else { return nil }
        var total = 0
        var previous = Int.max
        for ch in upper {
            let v: Int
            switch ch {
            case "I": v = 1
            case "V": v = 5
            case "X": v = 10
            case "L": v = 50
            case "C": v = 100
            case "D": v = 500
            case "M": v = 1000
            default: return nil
            }
            total += v > previous ? v - 2 * previous : v
            previous = v
        }
        guard (1...3999).contains(total), format(total) == upper else { return nil }
        return total
    }
}

/// UTF-8 validation that says where the first bad byte is.
package enum UTF8Validation {
    /// The offset of the first byte that is not part of well-formed UTF-8, or nil if all is well.
    package static func firstInvalidOffset(_ bytes: [UInt8]) -> Int? { firstInvalid(bytes) }

    /// The same for a slice, the offset counted from the slice's start.
    package static func firstInvalidOffset(_ bytes: ArraySlice<UInt8>) -> Int? { firstInvalid(bytes) }

    /// Specialised in this module for both callers above (a generic called from another module
    /// would not be).
    private static func firstInvalid<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Int? where Bytes.Index == Int {
        let start = bytes.startIndex
        var i = start
        let n = bytes.endIndex
        while i < n {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            let len: Int
            var lo: UInt8 = 0x80
            var hi: UInt8 = 0xBF
            switch b {
            case 0xC2...0xDF: len = 2
            case 0xE0: len = 3; lo = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: len = 3
            case 0xED: len = 3; hi = 0x9F
            case 0xF0: len = 4; lo = 0x90
            case 0xF1...0xF3: len = 4
            case 0xF4: len = 4; hi = 0x8F
            default: return i - start
            }
            guard i + len <= n else { return i - start }
            let b1 = bytes[i + 1]
            guard b1 >= lo, b1 <= hi else { return i - start }
            for k in 2..<len where bytes[i + k] & 0xC0 != 0x80 { return i - start }
            i += len
        }
        return nil
    }

    /// The 1-based line and column (in characters) of byte offset `offset`.
    package static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for b in bytes[0..<min(offset, bytes.count)] {
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
