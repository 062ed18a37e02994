/// How the items of an old array line up with a new one's: kept (equal, or changed in place),
/// removed, added and moved.
///
/// Arrays of dictionaries that share an identifying field (``identifyingKeys``, the first one
/// every item on both sides carries, with unique scalar values) are matched by that field;
/// other arrays by a longest common subsequence after trimming their common prefix and suffix.
/// Past ``cellLimit`` cells the subsequence is found greedily (``approximate``), so a huge
/// array costs linear time and may report more changes than the fewest.
package struct ArrayAlignment: Sendable, Equatable {
    /// An old index and a new index.
    package struct Pair: Sendable, Equatable {
        package var old: Int
        package var new: Int
        package init(_ old: Int, _ new: Int) {
            self.old = old
            self.new = new
        }
    }

    /// Items in the same order on both sides, increasing in both indexes.
    package var kept: [Pair] = []
    /// Old indexes, increasing.
    package var removed: [Int] = []
    /// New indexes, increasing.
    package var added: [Int] = []
    /// Items that changed position relative to the kept ones.
    package var moved: [Pair] = []
    /// The field the items were matched by, if any.
    package var key: String?
    /// Whether the sequence was too long for an exact alignment.
    package var approximate = false

    /// Fields that identify an item of an array of dictionaries, tried in this order.
    package static let identifyingKeys = ["id", "number", "path", "key", "name", "locale", "code", "slug", "url", "title"]
    /// The largest table the exact alignment fills (old × new middle items).
    package static let cellLimit = 10_000_000

    package init() {}

    /// Aligns `a` (old) with `b` (new).
    package static func align(_ a: [PlistValue], _ b: [PlistValue]) -> ArrayAlignment {
        if let key = commonKey(a, b) { return keyed(a, b, key: key) }
        return sequence(a, b)
    }

    /// The first identifying field every item carries with a unique scalar value on each side.
    package static func commonKey(_ a: [PlistValue], _ b: [PlistValue]) -> String? {
        guard !a.isEmpty, !b.isEmpty else { return nil }
        return identifyingKeys.first { key in isKey(key, a) && isKey(key, b) }
    }

    static func isKey(_ key: String, _ items: [PlistValue]) -> Bool {
        var seen = Set<PlistValue>()
        for item in items {
            guard case .dict(let d) = item, let v = d[key], v.isScalarKey, seen.insert(v).inserted else { return false }
        }
        return true
    }
}

extension PlistValue {
    /// Whether the value can identify an array item: a string or an integer.
    var isScalarKey: Bool {
        switch self {
        case .string, .int, .uint: return true
        default: return false
        }
    }
}
