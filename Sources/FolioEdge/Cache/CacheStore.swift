import Dispatch
import FolioPlist
import FolioSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The cache's responses: every variant of every key in memory, least recently used evicted
/// first once their bytes pass `limit`; with a directory, each entry is also a file there
/// (written off the event loops, atomically), loaded again at start, so the cache survives a
/// restart.
final class CacheStore: Sendable {
    private struct State {
        /// Every key's variants, newest first.
        var entries: [String: [StoredResponse]] = [:]
        /// When each key was last used (a tick), for eviction by key.
        var lastUsed: [String: UInt64] = [:]
        var bytes = 0
        var count = 0
        var tick: UInt64 = 0

        mutating func insert(_ r: StoredResponse) {
            tick += 1
            entries[r.key, default: []].insert(r, at: 0)
            lastUsed[r.key] = tick
            bytes += r.cost
            count += 1
        }

        /// Removes the variants `matching` selects; returns them.
        mutating func remove(_ key: String, where matching: (StoredResponse) -> Bool) -> [StoredResponse] {
            guard var list = entries[key] else { return [] }
            let removed = list.filter(matching)
            guard !removed.isEmpty else { return [] }
            list.removeAll(where: matching)
            if list.isEmpty {
                entries[key] = nil
                lastUsed[key] = nil
            } else {
                entries[key] = list
            }
            for r in removed {
                bytes -= r.cost
                count -= 1
            }
            return removed
        }
    }

    private let state = Mutex(State())
    let limit: Int
    let directory: String?
    private let disk = DispatchQueue(label: "folio-edge.cache-disk")

    init(limit: Int, directory: String?) {
        self.limit = limit
        self.directory = directory
    }

    /// Bytes and entries held.
    var usage: (bytes: Int, entries: Int) { state.withLock { ($0.bytes, $0.count) } }

    /// The variants stored for `key`, most recent first; the key is marked as used. (No copy:
    /// the array is the store's own, shared until the next change.)
    func variants(_ key: String) -> [StoredResponse] {
        state.withLock { s in
            guard let list = s.entries[key] else { return [] }
            s.tick += 1
            s.lastUsed[key] = s.tick
            return list
        }
    }

    /// Stores `response`, replacing the variant with the same selecting values; evicts the least
    /// recently used keys past the limit. A response larger than the limit is not stored.
    func store(_ response: StoredResponse) {
        guard response.cost <= limit else { return }
        var evicted: [StoredResponse] = []
        let replaced: [StoredResponse] = state.withLock { s in
            let replaced = s.remove(response.key) { $0.varyNames == response.varyNames && $0.varyValues == response.varyValues }
            s.insert(response)
            if s.bytes > limit { evicted = Self.evict(&s, downTo: limit - limit / 10, keeping: response.key) }
            return replaced
        }
        guard let directory else { return }
        let write = (Self.fileName(response), try? Self.encode(response))
        let drop = (evicted + replaced).map(Self.fileName).filter { $0 != write.0 }
        disk.async {
            for name in drop { try? FileManager.default.removeItem(atPath: directory + "/" + name) }
            if let bytes = write.1 { try? FileIO.writeAtomically(bytes, to: directory + "/" + write.0, sync: false) }
        }
    }

    /// Removes every variant of `key` (invalidation, purge).
    func remove(_ key: String) {
        removeFiles(state.withLock { $0.remove(key) { _ in true } })
    }

    /// Keys stored, for a purge by prefix.
    func keys(prefix: String) -> [String] {
        state.withLock { s in s.entries.keys.filter { $0.hasPrefix(prefix) } }
    }

    /// Removes (hard) or marks stale (soft) every variant of `key`; returns how many.
    @discardableResult
    func purge(_ key: String, soft: Bool) -> Int {
        let list = state.withLock { $0.entries[key] ?? [] }
        guard soft else {
            remove(key)
            return list.count
        }
        for r in list where !r.markedStale { store(r.markingStale()) }
        return list.count
    }

    /// Removes one stored response if it is still there.
    func remove(_ response: StoredResponse) {
        removeFiles(state.withLock { $0.remove(response.key) { $0 === response } })
    }

    private func removeFiles(_ responses: [StoredResponse]) {
        guard let directory, !responses.isEmpty else { return }
        let names = responses.map(Self.fileName)
        disk.async {
            for name in names { try? FileManager.default.removeItem(atPath: directory + "/" + name) }
        }
    }

    /// Waits until every disk write queued so far is done (tests, shutdown).
    func flush() { disk.sync {} }

    /// Drops whole keys, least recently used first, until the bytes are at most `target`.
    private static func evict(_ s: inout State, downTo target: Int, keeping kept: String) -> [StoredResponse] {
        var out: [StoredResponse] = []
        for (key, _) in s.lastUsed.sorted(by: { $0.value < $1.value }) where s.bytes > target && key != kept {
            out += s.remove(key) { _ in true }
        }
        return out
    }

    // MARK: - On disk

    /// One entry as a binary plist (FolioPlist's Codable encoder).
    private struct DiskEntry: Codable {
        var key: String
        var status: Int
        var reason: String
        var headers: [[String]]
        var body: Data
        var requestTime: Double
        var responseTime: Double
        /// The selecting request fields (name, value) that were present.
        var varyRequest: [[String]]
        /// Soft-purged.
        var stale: Bool?
    }

    static func fileName(_ r: StoredResponse) -> String {
        var id = r.key
        for (n, v) in zip(r.varyNames, r.varyValues) { id += "\n\(n): \(v ?? "\u{0}")" }
        return ContentHash.sha256Hex(Array(id.utf8)) + ".entry"
    }

    private static func encode(_ r: StoredResponse) throws -> [UInt8] {
        let entry = DiskEntry(
            key: r.key, status: r.status, reason: r.reason, headers: r.headers.map { [$0.name, $0.value] },
            body: Data(r.body.readableBytesView), requestTime: r.requestTime, responseTime: r.responseTime,
            varyRequest: zip(r.varyNames, r.varyValues).compactMap { n, v in v.map { [n, $0] } }, stale: r.markedStale ? true : nil)
        return try PlistEncoder().encode(entry)
    }

    private static func decode(_ bytes: [UInt8]) throws -> StoredResponse {
        let e = try PlistDecoder().decode(DiskEntry.self, from: bytes)
        var headers = HTTPHeaders()
        for pair in e.headers where pair.count == 2 { headers.add(name: pair[0], value: pair[1]) }
        var request = HTTPHeaders()
        for pair in e.varyRequest where pair.count == 2 { request.add(name: pair[0], value: pair[1]) }
        return StoredResponse(
            key: e.key, status: e.status, reason: e.reason, headers: headers, body: ByteBuffer(bytes: e.body),
            requestTime: e.requestTime, responseTime: e.responseTime, requestHeaders: request, markedStale: e.stale ?? false)
    }

    /// Loads the entries in the directory (creating it if needed), newest first, up to the
    /// limit; files that do not decode are removed. Returns how many were loaded.
    @discardableResult
    func load() throws -> Int {
        guard let directory else { return 0 }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var loaded: [StoredResponse] = []
        for name in try FileIO.list(directory) where name.hasSuffix(".entry") {
            let path = directory + "/" + name
            if let bytes = try? FileIO.read(path), let r = try? Self.decode(bytes), Self.fileName(r) == name {
                loaded.append(r)
            } else {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
        // The newest are kept when the limit is smaller than what is on disk; they are inserted
        // oldest first, so each key's newest variant ends up first and most recently used.
        loaded.sort { $0.responseTime > $1.responseTime }
        var kept: [StoredResponse] = []
        var dropped: [StoredResponse] = []
        var bytes = 0
        for r in loaded {
            if bytes + r.cost <= limit {
                kept.append(r)
                bytes += r.cost
            } else {
                dropped.append(r)
            }
        }
        state.withLock { s in
            for r in kept.reversed() { s.insert(r) }
        }
        removeFiles(dropped)
        return kept.count
    }
}
