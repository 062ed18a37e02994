extension ArrayAlignment {
    /// Aligns by a longest common subsequence; between matched items, old and new items pair up
    /// in place (changed), the rest are removed or added, and a removed item equal to an added
    /// one is a move.
    static func sequence(_ a: [PlistValue], _ b: [PlistValue]) -> ArrayAlignment {
        var result = ArrayAlignment()
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let x = Array(a[prefix..<(a.count - suffix)])
        let y = Array(b[prefix..<(b.count - suffix)])
        var matches = (0..<prefix).map { Pair($0, $0) }
        let middle: [Pair]
        if x.count * y.count <= cellLimit {
            middle = lcs(x, y)
        } else {
            middle = greedy(x, y)
            result.approximate = true
        }
        matches += middle.map { Pair($0.old + prefix, $0.new + prefix) }
        matches += (0..<suffix).map { Pair(a.count - suffix + $0, b.count - suffix + $0) }
        result.fillGaps(matches, a, b)
        return result
    }

    /// Kept, removed and added items from the matched ones; then removed items equal to added
    /// ones become moves.
    mutating func fillGaps(_ matches: [Pair], _ a: [PlistValue], _ b: [PlistValue]) {
        var i = 0
        var j = 0
        for m in matches + [Pair(a.count, b.count)] {
            let paired = min(m.old - i, m.new - j)
            kept += (0..<paired).map { Pair(i + $0, j + $0) }
            removed += Array((i + paired)..<m.old)
            added += Array((j + paired)..<m.new)
            if m.old < a.count { kept.append(m) }
            (i, j) = (m.old + 1, m.new + 1)
        }
        pairMoves(a, b)
    }

    /// A removed item equal to an added item is one move.
    mutating func pairMoves(_ a: [PlistValue], _ b: [PlistValue]) {
        guard !removed.isEmpty, !added.isEmpty else { return }
        var addedAt: [PlistValue: [Int]] = [:]
        for j in added.reversed() { addedAt[b[j], default: []].append(j) }
        var stillRemoved: [Int] = []
        var taken = Set<Int>()
        for i in removed {
            if let j = addedAt[a[i]]?.popLast() {
                moved.append(Pair(i, j))
                taken.insert(j)
            } else {
                stillRemoved.append(i)
            }
        }
        removed = stillRemoved
        added.removeAll { taken.contains($0) }
    }

    /// A longest common subsequence by dynamic programming over `x.count × y.count` cells.
    static func lcs(_ x: [PlistValue], _ y: [PlistValue]) -> [Pair] {
        let n = x.count
        let m = y.count
        guard n > 0, m > 0 else { return [] }
        let hx = x.map(\.hashValue)
        let hy = y.map(\.hashValue)
        // The LCS is at most min(n, m) ≤ √cellLimit, which fits 16 bits.
        var table = [UInt16](repeating: 0, count: (n + 1) * (m + 1))
        func at(_ i: Int, _ j: Int) -> Int { i * (m + 1) + j }
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                table[at(i, j)] = hx[i] == hy[j] && x[i] == y[j] ? table[at(i + 1, j + 1)] + 1 : max(table[at(i + 1, j)], table[at(i, j + 1)])
            }
        }
        var pairs: [Pair] = []
        var i = 0
        var j = 0
        while i < n, j < m {
            if hx[i] == hy[j], x[i] == y[j] {
                pairs.append(Pair(i, j))
                i += 1
                j += 1
            } else if table[at(i + 1, j)] >= table[at(i, j + 1)] {
                i += 1
            } else {
                j += 1
            }
        }
        return pairs
    }

    /// A common subsequence in O(n log n) (patience): items unique on both sides, matched, and
    /// the longest run of them in order on both.
    static func greedy(_ x: [PlistValue], _ y: [PlistValue]) -> [Pair] {
        var count: [PlistValue: (old: Int, new: Int, at: Int)] = [:]
        for (i, v) in x.enumerated() { count[v, default: (0, 0, 0)].old += 1; count[v]!.at = i }
        for v in y where count[v] != nil { count[v]!.new += 1 }
        var pairs: [Pair] = []
        for (j, v) in y.enumerated() {
            if let c = count[v], c.old == 1, c.new == 1 { pairs.append(Pair(c.at, j)) }
        }
        pairs.sort { $0.old < $1.old }
        return longestIncreasingRun(pairs.map(\.new)).map { pairs[$0] }
    }
}
