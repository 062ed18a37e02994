/// The cache's hot set: whole keys (every variant) in memory, bounded in bytes and evicted by
/// S3-FIFO. With a disk tier an eviction only drops the memory copy.
struct MemoryTier {
    /// Every held key's variants, newest first.
    private(set) var entries: [String: [StoredResponse]] = [:]
    private var policy: S3FIFO<String>
    private(set) var count = 0

    init(capacity: Int) { policy = S3FIFO(capacity: capacity) }

    var capacity: Int { policy.capacity }
    var bytes: Int { policy.bytes }

    /// The variants of `key`, marked as hit.
    mutating func lookup(_ key: String) -> [StoredResponse]? {
        guard !entries.isEmpty, let list = entries[key] else { return nil }
        policy.hit(key)
        return list
    }

    /// Adds `r` in front of its key's variants, replacing the one with the same selecting values;
    /// returns the replaced variants and the keys evicted for room.
    mutating func insert(_ r: StoredResponse) -> (replaced: [StoredResponse], evicted: [String]) {
        let replaced = remove(r.key) { $0.varyNames == r.varyNames && $0.varyValues == r.varyValues }
        var list = entries[r.key] ?? []
        list.insert(r, at: 0)
        return (replaced, put(r.key, list))
    }

    /// Holds `list` as `key`'s variants (read back from disk) unless the key is held already.
    mutating func adopt(_ key: String, _ list: [StoredResponse]) -> [String] {
        guard entries[key] == nil, !list.isEmpty else { return [] }
        return put(key, list)
    }

    /// Removes the variants of `key` that `matching` selects; returns them.
    mutating func remove(_ key: String, where matching: (StoredResponse) -> Bool) -> [StoredResponse] {
        guard var list = entries[key] else { return [] }
        let removed = list.filter(matching)
        guard !removed.isEmpty else { return [] }
        list.removeAll(where: matching)
        if list.isEmpty {
            count -= removed.count
            entries[key] = nil
            policy.remove(key)
        } else {
            _ = put(key, list)  // smaller: evicts nothing
        }
        return removed
    }

    private mutating func put(_ key: String, _ list: [StoredResponse]) -> [String] {
        count += list.count - (entries[key]?.count ?? 0)
        entries[key] = list
        let evicted = policy.insert(key, size: list.reduce(0) { $0 + $1.cost })
        for k in evicted {
            count -= entries[k]?.count ?? 0
            entries[k] = nil
        }
        return evicted
    }
}
