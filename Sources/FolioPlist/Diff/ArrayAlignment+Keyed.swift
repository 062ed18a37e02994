extension ArrayAlignment {
    /// Matches items by the value of `key`; the matched items on a longest increasing run of new
    /// indexes are kept, the others moved.
    static func keyed(_ a: [PlistValue], _ b: [PlistValue], key: String) -> ArrayAlignment {
        var result = ArrayAlignment()
        result.key = key
        var newIndex: [PlistValue: Int] = [:]
        for (j, item) in b.enumerated() { newIndex[item[key]!] = j }
        var matched: [Pair] = []
        var found = Set<Int>()
        for (i, item) in a.enumerated() {
            if let j = newIndex[item[key]!] {
                matched.append(Pair(i, j))
                found.insert(j)
            } else {
                result.removed.append(i)
            }
        }
        result.added = b.indices.filter { !found.contains($0) }
        let stay = Set(longestIncreasingRun(matched.map(\.new)))
        for (n, pair) in matched.enumerated() {
            if stay.contains(n) { result.kept.append(pair) } else { result.moved.append(pair) }
        }
        return result
    }

    /// The positions in `values` of a longest strictly increasing subsequence (patience sorting).
    package static func longestIncreasingRun(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // positions in `values` ending the best run of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (p, v) in values.enumerated() {
            var lo = 0
            var hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[p] = tails[lo - 1] }
            if lo == tails.count { tails.append(p) } else { tails[lo] = p }
        }
        var run: [Int] = []
        var p = tails.last ?? -1
        while p >= 0 {
            run.append(p)
            p = previous[p]
        }
        return run.reversed()
    }
}
