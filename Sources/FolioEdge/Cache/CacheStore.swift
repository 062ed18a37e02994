import Dispatch
import FolioSupport
import Foundation
import Logging
import NIOHTTP1
import Synchronization

/// The cache's responses, in two tiers. Memory holds a hot set of whole keys bounded by
/// `memoryLimit`; with a directory every entry is also a checksummed file there, the disk
/// bounded by `diskLimit`, and an index in memory says which. Both tiers evict by S3-FIFO. A
/// lookup that misses memory reads the key's files, checks them, and brings them back into
/// memory. Files are written off the event loops, whole and renamed into place; at start the
/// index is rebuilt in the background while lookups probe the disk directly, so start-up does not
/// grow with the cache.
final class CacheStore: Sendable {
    private struct State {
        var memory: MemoryTier
        var disk: DiskTier?
    }

    private enum Plan {
        case done([StoredResponse])
        /// Files to read: all of the key's (`whole`), or the one a request selects.
        case read([(DiskRecord, StoredResponse?)], whole: Bool)
        case probe
    }

    private let state: Mutex<State>
    let directory: String?
    /// Counts of the disk tier: entries read back, and files that failed (torn, missing, or a
    /// write the disk refused).
    let diskReads = Atomic<Int>(0)
    let diskFailures = Atomic<Int>(0)
    private let disk = DispatchQueue(label: "folio-edge.cache-disk")
    /// The directory, open, for reads relative to it (-1 until `open`).
    private let directoryFD = Atomic<Int32>(-1)
    private let indexing = DispatchGroup()
    /// Entry files held open for disk hits.
    private let openFiles: OpenEntryFiles
    /// The memory tier's bound in bytes.
    private let memoryCapacity: Int
    /// Whether the directory's file system is full: entries are then kept in memory only.
    let fullDisk: FullDisk

    /// A cache of `memoryLimit` bytes in memory and, with a directory, `diskLimit` on disk.
    /// `openFiles` bounds the entry files held open (default: `OpenEntryFiles.defaultCapacity`).
    init(memoryLimit: Int, directory: String? = nil, diskLimit: Int = 0, openFiles: Int? = nil, logger: Logger? = nil) {
        self.directory = directory
        fullDisk = FullDisk(directory: directory ?? "", logger: logger)
        memoryCapacity = max(1, memoryLimit)
        self.openFiles = OpenEntryFiles(capacity: directory == nil ? 0 : openFiles ?? OpenEntryFiles.defaultCapacity())
        state = Mutex(State(memory: MemoryTier(capacity: memoryLimit), disk: directory.map { _ in DiskTier(capacity: diskLimit) }))
    }

    deinit {
        let fd = directoryFD.load(ordering: .relaxed)
        if fd >= 0 { close(fd) }
    }

    /// Bytes and entries in memory.
    var usage: (bytes: Int, entries: Int) { state.withLock { ($0.memory.bytes, $0.memory.count) } }

    /// Entry files held open now.
    var openFileCount: Int { openFiles.count }

    /// Bytes and entries on disk (nil without a directory).
    var diskUsage: (bytes: Int, entries: Int)? { state.withLock { s in s.disk.map { ($0.bytes, $0.count) } } }

    // MARK: - Lookups

    /// The variants stored for `key`, most recent first; the key is marked as used. A memory
    /// hit is the store's own array (no copy); a disk hit reads and checks the key's files.
    /// With `selecting`, a disk hit that memory cannot hold reads only the newest variant
    /// those request fields select (the others may be left out of the answer).
    func variants(_ key: String, selecting headers: HTTPHeaders? = nil) -> [StoredResponse] {
        let plan: Plan = state.withLock { s in
            if let list = s.memory.lookup(key) {
                s.disk?.hit(key)
                return .done(list)
            }
            guard s.disk != nil else { return .done([]) }
            guard var records = s.disk!.lookup(key) else { return s.disk!.isIndexing ? .probe : .done([]) }
            let whole = headers == nil || records.count == 1 || records.reduce(0, { $0 + $1.size }) <= memoryCapacity
            if !whole, let headers {
                records = records.first { StoredResponse.varyMatches($0.varyNames, $0.varyValues, headers) }.map { [$0] } ?? []
            }
            let pending = s.disk!.pending
            return .read(records.map { ($0, pending.isEmpty ? nil : pending[$0.name]) }, whole: whole)
        }
        switch plan {
        case .done(let list): return list
        case .read(let items, let whole): return readBack(key, items, whole: whole)
        case .probe: return probe(key)
        }
    }

    /// Keys stored, for a purge by prefix.
    func keys(prefix: String) -> [String] {
        state.withLock { s in
            var keys = Set(s.memory.entries.keys.filter { $0.hasPrefix(prefix) })
            if let disk = s.disk { keys.formUnion(disk.variants.keys.filter { $0.hasPrefix(prefix) }) }
            return Array(keys)
        }
    }

    // MARK: - Changes

    /// Stores `response`, replacing the variant with the same selecting values, in memory when
    /// it fits and on disk when there is one; evicts past the limits. A response larger than
    /// both is not stored.
    func store(_ response: StoredResponse) {
        let encoded = directory != nil ? CacheEntryFile.encode(response) : nil
        let name = directory != nil ? DiskTier.name(response) : ""
        var staleFiles: [String] = []
        let deletes: [String]? = state.withLock { s in
            let onDisk = encoded.map { $0.count <= s.disk!.capacity && !fullDisk.isFull } ?? false
            if response.cost <= s.memory.capacity {
                _ = s.memory.insert(response)
            } else {
                _ = s.memory.remove(response.key) { $0.varyNames == response.varyNames && $0.varyValues == response.varyValues }
            }
            if onDisk { return s.disk!.insert(response, name: name, size: encoded!.count) }
            // Too large for the disk: the variant it replaces must not come back from there.
            if s.disk?.remove(response.key, name: name, responseTime: nil) == true { staleFiles = [name] }
            return nil
        }
        delete(staleFiles)
        guard let directory, let deletes, let encoded else { return }
        disk.async { [self] in
            for n in deletes { unlink(directory + "/" + n) }
            let ok = write(encoded, name: name, in: directory)
            // Before the write is done: from then on reads open the new file.
            openFiles.forget(deletes + [name])
            if !ok { diskFailures.add(1, ordering: .relaxed) }
            state.withLock { $0.disk!.written(name, response, ok: ok) }
        }
    }

    /// Removes every variant of `key` (invalidation, purge).
    func remove(_ key: String) {
        let names = state.withLock { s in
            _ = s.memory.remove(key) { _ in true }
            return s.disk?.remove(key) ?? []
        }
        delete(names)
    }

    /// Removes one stored response if it is still there.
    func remove(_ response: StoredResponse) {
        let name = DiskTier.name(response)
        let gone = state.withLock { s in
            _ = s.memory.remove(response.key) { $0 === response }
            return s.disk?.remove(response.key, name: name, responseTime: response.responseTime) ?? false
        }
        if gone { delete([name]) }
    }

    /// Removes (hard) or marks stale (soft) every variant of `key`; returns how many.
    @discardableResult
    func purge(_ key: String, soft: Bool) -> Int {
        guard soft else {
            // Counted from the index: a purge of everything reads no files.
            let count = state.withLock { s in max(s.memory.entries[key]?.count ?? 0, s.disk?.variants[key]?.count ?? 0) }
            remove(key)
            return count
        }
        let list = variants(key)
        for r in list where !r.markedStale { store(r.markingStale()) }
        return list.count
    }

    /// Waits until every disk write queued so far is done (tests, shutdown).
    func flush() { disk.sync {} }

    /// Waits until the index of the disk tier is rebuilt (tests, benchmarks).
    func waitUntilIndexed() { indexing.wait() }

    // MARK: - Disk

    /// Creates the directory if needed, and rebuilds the index from its files in the background.
    func open() throws {
        guard let directory else { return }
        try FileIO.makeDirectory(directory)
        guard access(directory, W_OK) == 0 else { throw FileError("write to", directory) }
        directoryFD.store(Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ordering: .relaxed)
        indexing.enter()
        DispatchQueue(label: "folio-edge.cache-index").async { [self] in
            rebuildIndex(directory)
            state.withLock { $0.disk?.finishIndexing() }
            indexing.leave()
        }
    }

    /// The key's variants from their files (or the queue), into memory when they are all of
    /// them (`whole`); a file that fails is dropped from the index and deleted.
    private func readBack(_ key: String, _ items: [(DiskRecord, StoredResponse?)], whole: Bool) -> [StoredResponse] {
        guard directory != nil else { return [] }
        var list: [StoredResponse] = []
        var failed: [DiskRecord] = []
        for (record, queued) in items {
            if let queued {
                list.append(queued)
            } else if let r = readHeld(record.name, key: key, size: record.size) {
                list.append(r)
            } else {
                failed.append(record)
            }
        }
        diskReads.add(list.count, ordering: .relaxed)
        if !failed.isEmpty { diskFailures.add(failed.count, ordering: .relaxed) }
        list.sort { $0.responseTime > $1.responseTime }
        let adopt = whole && !list.isEmpty && list.reduce(0, { $0 + $1.cost }) <= memoryCapacity
        guard adopt || !failed.isEmpty else { return list }
        let dropped = state.withLock { s in
            let dropped = failed.filter { s.disk?.remove(key, name: $0.name, responseTime: $0.responseTime) == true }.map(\.name)
            if adopt { _ = s.memory.adopt(key, list) }
            return dropped
        }
        delete(dropped)
        return list
    }

    /// While the index is rebuilt: the key's files, looked for by name.
    private func probe(_ key: String) -> [StoredResponse] {
        guard let directory else { return [] }
        let hash = DiskTier.keyHash(key)
        let shard = String(hash.prefix(2))
        let names = (try? FileIO.list(directory + "/" + shard, prefix: hash)) ?? []
        let found = names.filter { $0.hasSuffix(".entry") }.compactMap { name -> (DiskRecord, StoredResponse)? in
            let full = shard + "/" + name
            guard let (r, size) = readEntry(directory, full, key: key, size: nil) else { return nil }
            return (DiskRecord(name: full, size: size, r), r)
        }
        guard !found.isEmpty else { return [] }
        var deletes: [String] = []
        let kept = state.withLock { s in
            found.filter { record, _ in
                switch s.disk?.adopt(key, record) {
                case .adopted(let evicted)?:
                    deletes += evicted
                    return true
                case .removed?:
                    deletes.append(record.name)
                    return false
                case .known?, nil: return true
                }
            }
        }
        delete(deletes)
        return kept.isEmpty ? [] : readBack(key, kept.map { ($0.0, $0.1) }, whole: true)
    }

    /// The entry in file `name`, read through a held descriptor, if it is whole and for `key`.
    private func readHeld(_ name: String, key: String, size: Int) -> StoredResponse? {
        guard let r = openFiles.read(name, in: directoryFD.load(ordering: .relaxed), size: size), r.key == key else { return nil }
        return r
    }

    /// The entry in file `name` if it is whole and for `key`. (Its variant is not checked
    /// against the name: the request's fields select among variants whatever the file is called.)
    private func readEntry(_ directory: String, _ name: String, key: String, size: Int?) -> (StoredResponse, size: Int)? {
        let fd = directoryFD.load(ordering: .relaxed)
        guard let (r, size) = try? CacheEntryFile.read(directory + "/" + name, relative: name, in: fd, expectedSize: size), r.key == key
        else { return nil }
        return (r, size)
    }

    /// Indexes the directory's entries and deletes its leftovers (those the index does not know
    /// by then: a leftover's name may have been written again since).
    private func rebuildIndex(_ directory: String) {
        DiskIndexScan.run(
            directory,
            found: { key, record in
                switch state.withLock({ $0.disk?.adopt(key, record) }) {
                case .adopted(let evicted)?: delete(evicted)
                case .removed?: delete([record.name])
                case .known?, nil: break
                }
            },
            discard: { names in
                guard !names.isEmpty else { return }
                disk.async { [self] in
                    let unknown = state.withLock { s in names.filter { !(s.disk?.isKnown($0) ?? false) } }
                    for n in unknown { unlink(directory + "/" + n) }
                    openFiles.forget(unknown)
                }
            })
    }

    private func write(_ bytes: [UInt8], name: String, in directory: String) -> Bool {
        let shard = directory + "/" + name.prefix(2)
        if !FileIO.exists(shard) { try? FileIO.makeDirectory(shard) }
        do {
            try FileIO.writeAtomically(bytes, to: directory + "/" + name, sync: false)
            fullDisk.wrote()
            return true
        } catch {
            if error.errno == ENOSPC || error.errno == EDQUOT { fullDisk.refused() }
            return false
        }
    }

    private func delete(_ names: [String]) {
        guard let directory, !names.isEmpty else { return }
        disk.async { [openFiles] in
            for n in names { unlink(directory + "/" + n) }
            openFiles.forget(names)
        }
    }
}
