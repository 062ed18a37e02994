import FolioSupport

/// Where one stored variant lives on disk, as the in-memory index knows it.
struct DiskRecord: Equatable {
    /// The file, relative to the cache directory: `ab/<key hash>.<variant hash>.entry`.
    var name: String
    var size: Int
    /// Tells a record from a newer one under the same name.
    var responseTime: Double
    /// The request values that select it, for the fields its `Vary` names: a hit reads only
    /// the file it needs.
    var varyNames: [String]
    var varyValues: [String?]

    init(name: String, size: Int, responseTime: Double, varyNames: [String], varyValues: [String?]) {
        (self.name, self.size, self.responseTime, self.varyNames, self.varyValues) = (name, size, responseTime, varyNames, varyValues)
    }

    init(name: String, size: Int, _ r: StoredResponse) {
        self.init(name: name, size: size, responseTime: r.responseTime, varyNames: r.varyNames, varyValues: r.varyValues)
    }
}

/// The disk tier's index: every key's variants on disk, with sizes, bounded in bytes and
/// evicted by S3-FIFO. It holds no entry's bytes; `CacheStore` reads and writes the files.
struct DiskTier {
    private(set) var variants: [String: [DiskRecord]] = [:]
    private var policy: S3FIFO<String>
    /// Responses queued for writing, by file name: read from here until their file is there.
    private(set) var pending: [String: StoredResponse] = [:]
    /// While the index is rebuilt at start (nil after): names and keys removed since, which the
    /// rebuild must not bring back.
    private var removedWhileIndexing: Set<String>? = []
    private var keysRemovedWhileIndexing: Set<String> = []

    /// What became of a file the rebuild found.
    enum Adoption {
        /// Recorded; the files of the keys evicted for it.
        case adopted(evicted: [String])
        /// Already recorded (written or found since).
        case known
        /// Removed since the start: its file is to be deleted.
        case removed
    }
    private(set) var count = 0

    init(capacity: Int) { policy = S3FIFO(capacity: capacity) }

    var capacity: Int { policy.capacity }
    var bytes: Int { policy.bytes }
    var isIndexing: Bool { removedWhileIndexing != nil }

    // MARK: - Names

    /// A key's file names start with its hash; each variant adds the hash of its selecting values.
    static func keyHash(_ key: String) -> String { String(ContentHash.sha256Hex(Array(key.utf8)).prefix(32)) }

    static func name(_ r: StoredResponse) -> String { name(key: r.key, varyNames: r.varyNames, varyValues: r.varyValues) }

    static func name(key: String, varyNames: [String], varyValues: [String?]) -> String {
        var id = ""
        for (n, v) in zip(varyNames, varyValues) { id += "\(n): \(v ?? "\u{0}")\n" }
        let keyHash = keyHash(key)
        return "\(keyHash.prefix(2))/\(keyHash).\(ContentHash.sha256Hex(Array(id.utf8)).prefix(16)).entry"
    }

    // MARK: - Lookups and changes

    mutating func lookup(_ key: String) -> [DiskRecord]? {
        guard let list = variants[key] else { return nil }
        policy.hit(key)
        return list
    }

    mutating func hit(_ key: String) { policy.hit(key) }

    /// Records `r`, about to be written as file `name` of `size` bytes; returns the files of the
    /// keys evicted.
    mutating func insert(_ r: StoredResponse, name: String, size: Int) -> [String] {
        let record = DiskRecord(name: name, size: size, r)
        pending[record.name] = r
        removedWhileIndexing?.remove(record.name)
        return put(r.key, record)
    }

    /// The write of `r` as `name` is done (or failed: then the record goes, unless newer).
    mutating func written(_ name: String, _ r: StoredResponse, ok: Bool) {
        guard pending[name] === r else { return }
        pending[name] = nil
        if !ok { _ = remove(r.key, name: name, responseTime: r.responseTime) }
    }

    /// A file found by the index rebuild (or a probe): recorded unless known or removed since.
    mutating func adopt(_ key: String, _ record: DiskRecord) -> Adoption {
        // Known first: a key purged and stored again keeps its new file, not the others.
        if variants[key]?.contains(where: { $0.name == record.name }) == true { return .known }
        if removedWhileIndexing?.contains(record.name) == true || keysRemovedWhileIndexing.contains(key) { return .removed }
        return .adopted(evicted: put(key, record))
    }

    /// Removes every variant of `key`; returns their files.
    mutating func remove(_ key: String) -> [String] {
        // Files of the key the rebuild has not reached (or that a queued write is still to
        // make) must not come back.
        if isIndexing { keysRemovedWhileIndexing.insert(key) }
        guard let list = variants.removeValue(forKey: key) else { return [] }
        policy.remove(key)
        count -= list.count
        let names = list.map(\.name)
        for n in names { forget(n) }
        return names
    }

    /// Removes the variant `name` of `key` if it is the one received at `responseTime` (nil: any).
    mutating func remove(_ key: String, name: String, responseTime: Double?) -> Bool {
        guard var list = variants[key], let i = list.firstIndex(where: { $0.name == name }) else {
            forget(name)
            return false
        }
        if let responseTime, list[i].responseTime != responseTime { return false }
        list.remove(at: i)
        forget(name)
        if list.isEmpty { _ = remove(key) } else { _ = set(key, list) }
        return true
    }

    mutating func finishIndexing() {
        removedWhileIndexing = nil
        keysRemovedWhileIndexing = []
    }

    func isKnown(_ name: String) -> Bool { pending[name] != nil || variants.values.contains { $0.contains { $0.name == name } } }

    // MARK: - Private

    private mutating func put(_ key: String, _ record: DiskRecord) -> [String] {
        var list = variants[key] ?? []
        list.removeAll { $0.name == record.name }
        list.insert(record, at: 0)
        return set(key, list)
    }

    private mutating func set(_ key: String, _ list: [DiskRecord]) -> [String] {
        count += list.count - (variants[key]?.count ?? 0)
        variants[key] = list
        var names: [String] = []
        for k in policy.insert(key, size: list.reduce(0) { $0 + $1.size }) { names += remove(k) }
        return names
    }

    private mutating func forget(_ name: String) {
        removedWhileIndexing?.insert(name)
    }
}
