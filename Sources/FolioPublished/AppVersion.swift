/// An app version as publishers and app stores write it: one to four dot-separated numbers
/// (`3`, `3.2`, `3.2.1`, `2024.11.0.7`), compared number by number, missing ones as 0
/// (`3.2` == `3.2.0` < `3.10`).
package struct AppVersion: Sendable, Comparable, CustomStringConvertible {
    package let parts: [Int]
    package let description: String

    /// Nil for anything else (`3.2-beta`, `v3`, an empty part, a number over 9 digits).
    package init?(_ text: String) {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(pieces.count) else { return nil }
        var parts: [Int] = []
        for p in pieces {
            guard (1...9).contains(p.count), p.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(p) else { return nil }
            parts.append(n)
        }
        self.parts = parts
        description = text
    }

    package static func < (a: AppVersion, b: AppVersion) -> Bool {
        for i in 0..<max(a.parts.count, b.parts.count) {
            let (x, y) = (i < a.parts.count ? a.parts[i] : 0, i < b.parts.count ? b.parts[i] : 0)
            if x != y { return x < y }
        }
        return false
    }

    package static func == (a: AppVersion, b: AppVersion) -> Bool { !(a < b) && !(b < a) }

    /// What the builder and the manifest reader say about a text that is not one.
    package static func problem(_ text: String) -> String {
        "'\(text)' is not an app version: give one to four numbers separated by dots, like 3.2 or 3.2.1"
    }
}
