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
