/// S3-FIFO eviction (Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023),
/// by bytes: a small FIFO takes new keys (a tenth of the capacity), a main FIFO holds those seen
/// again, and a ghost FIFO remembers keys recently evicted from the small one. A key leaving the
/// small FIFO moves to the main one if it was hit there, else it becomes a ghost; a ghost stored
/// again goes straight to the main FIFO; the main FIFO gives a key with hits another turn (one
/// hit fewer) and evicts the others. One-hit wonders leave quickly, which is what plain LRU gets
/// wrong on skewed traffic; every operation is O(1) amortized, and a hit is a counter bump.
struct S3FIFO<Key: Hashable> {
    private enum Queue { case small, main }

    private struct Record {
        var size: Int
        var queue: Queue
        /// Hits since it entered its queue, at most 3.
        var frequency: UInt8
        /// The position of its live slot in its queue (older slots of the same key are skipped).
        var ticket: UInt64
    }

    private struct FIFO {
        private var slots: [(key: Key, ticket: UInt64)] = []
        private var head = 0
        var isEmpty: Bool { head == slots.count }
        var slotCount: Int { slots.count - head }

        /// Drops the slots `isLive` rejects (keys removed or moved since they were pushed).
        mutating func compact(_ isLive: (Key, UInt64) -> Bool) {
            slots = slots[head...].filter { isLive($0.key, $0.ticket) }
            head = 0
        }

        mutating func push(_ key: Key, _ ticket: UInt64) { slots.append((key, ticket)) }

        mutating func pop() -> (key: Key, ticket: UInt64)? {
            guard head < slots.count else { return nil }
            let slot = slots[head]
            head += 1
            if head > 1024, head * 2 > slots.count {
                slots.removeFirst(head)
                head = 0
            }
            return slot
        }
    }

    let capacity: Int
    private var records: [Key: Record] = [:]
    private var small = FIFO()
    private var main = FIFO()
    /// Keys evicted from the small FIFO, oldest first, and their live tickets.
    private var ghostOrder = FIFO()
    private var ghosts: [Key: UInt64] = [:]
    private var nextTicket: UInt64 = 0
    private(set) var smallBytes = 0
    private(set) var mainBytes = 0

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var bytes: Int { smallBytes + mainBytes }
    var count: Int { records.count }
    /// The keys held.
    var keys: [Key] { Array(records.keys) }

    func contains(_ key: Key) -> Bool { records[key] != nil }

    /// Notes a hit on `key` (nothing when it is not held).
    mutating func hit(_ key: Key) {
        guard let r = records[key], r.frequency < 3 else { return }
        records[key]!.frequency = r.frequency + 1
    }

    /// Holds `key` at `size` bytes (a held key keeps its place and gets the new size); returns the
    /// keys evicted to make room, never `key` itself.
    mutating func insert(_ key: Key, size: Int) -> [Key] {
        if let r = records[key] {
            records[key]!.size = size
            adjust(r.queue, by: size - r.size)
        } else {
            let toMain = ghosts.removeValue(forKey: key) != nil
            let queue: Queue = toMain ? .main : .small
            let ticket = take()
            records[key] = Record(size: size, queue: queue, frequency: 0, ticket: ticket)
            toMain ? main.push(key, ticket) : small.push(key, ticket)
            adjust(queue, by: size)
            compactIfSparse()
        }
        return evict(keeping: key)
    }

    /// Forgets `key` (a purge, or an entry found gone); returns whether it was held.
    @discardableResult
    mutating func remove(_ key: Key) -> Bool {
        guard let r = records.removeValue(forKey: key) else { return false }
        adjust(r.queue, by: -r.size)
        return true
    }

    // MARK: - Eviction

    private mutating func evict(keeping kept: Key) -> [Key] {
        var out: [Key] = []
        while bytes > capacity {
            let fromSmall = smallBytes >= capacity / 10 || main.isEmpty
            guard let victim = fromSmall ? evictSmall(keeping: kept) ?? evictMain(keeping: kept) : evictMain(keeping: kept) ?? evictSmall(keeping: kept)
            else { break }
            out.append(victim)
        }
        return out
    }

    /// The oldest of the small FIFO: to the main one if hit, else evicted (and remembered).
    private mutating func evictSmall(keeping kept: Key) -> Key? {
        var skippedKept: (Key, UInt64)?
        defer { if let (key, ticket) = skippedKept { small.push(key, ticket) } }
        while let (key, ticket) = small.pop() {
            guard let r = records[key], r.ticket == ticket, r.queue == .small else { continue }
            if key == kept {
                skippedKept = (key, ticket)
                continue
            }
            if r.frequency > 0 {
                move(key, r, to: .main)
                continue
            }
            remove(key)
            remember(key)
            return key
        }
        return nil
    }

    /// The oldest of the main FIFO: another turn if hit since its last one, else evicted.
    private mutating func evictMain(keeping kept: Key) -> Key? {
        var turns = 0
        while let (key, ticket) = main.pop() {
            guard let r = records[key], r.ticket == ticket, r.queue == .main else { continue }
            turns += 1
            if (r.frequency > 0 || key == kept) && turns <= 4 * records.count + 8 {
                let t = take()
                records[key]!.ticket = t
                records[key]!.frequency = r.frequency > 0 ? r.frequency - 1 : 0
                main.push(key, t)
                continue
            }
            if key == kept {
                main.push(key, ticket)
                return nil
            }
            remove(key)
            return key
        }
        return nil
    }

    private mutating func move(_ key: Key, _ r: Record, to queue: Queue) {
        let t = take()
        adjust(r.queue, by: -r.size)
        records[key] = Record(size: r.size, queue: queue, frequency: 0, ticket: t)
        adjust(queue, by: r.size)
        queue == .main ? main.push(key, t) : small.push(key, t)
    }

    /// Ghosts are bounded by the main FIFO's count (at least 1024), oldest forgotten first.
    private mutating func remember(_ key: Key) {
        let t = take()
        ghosts[key] = t
        ghostOrder.push(key, t)
        let bound = max(1024, records.count)
        while ghosts.count > bound, let (old, ticket) = ghostOrder.pop() {
            if ghosts[old] == ticket { ghosts[old] = nil }
        }
    }

    /// Removed keys leave their slots behind until popped: with no eviction to pop them (a cache
    /// below its capacity, purged and refilled), the queues are compacted once mostly dead.
    private mutating func compactIfSparse() {
        let bound = 2 * records.count + 1024
        let live = records
        if small.slotCount > bound { small.compact { live[$0]?.ticket == $1 } }
        if main.slotCount > bound { main.compact { live[$0]?.ticket == $1 } }
    }

    private mutating func take() -> UInt64 {
        nextTicket += 1
        return nextTicket
    }

    private mutating func adjust(_ queue: Queue, by delta: Int) {
        switch queue {
        case .small: smallBytes += delta
        case .main: mainBytes += delta
        }
    }
}
