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
    private struct Entry {
        var response: StoredResponse
        var lastUsed: UInt64
    }

    private struct State {
        var entries: [String: [Entry]] = [:]
        var bytes = 0
        var count = 0
        var tick: UInt64 = 0
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

    /// The variants stored for `key`, most recent first; each is marked as used.
    func variants(_ key: String) -> [StoredResponse] {
        state.withLock { s in
            guard var list = s.entries[key] else { return [] }
            s.tick += 1
            for i in list.indices { list[i].lastUsed = s.tick }
            s.entries[key] = list
            return list.map(\.response).sorted { $0.responseTime > $1.responseTime }
        }
    }

    /// Stores `response`, replacing the variant with the same selecting values; evicts the least
    /// recently used entries past the limit. A response larger than the limit is not stored.
    func store(_ response: StoredResponse) {
        guard response.cost <= limit else { return }
        var evicted: [StoredResponse] = []
        var replaced: [StoredResponse] = []
        state.withLock { s in
            s.tick += 1
            var list = s.entries[response.key] ?? []
            list.removeAll { e in
                let same = e.response.varyNames == response.varyNames && e.response.varyValues == response.varyValues
                if same { replaced.append(e.response) }
                return same
            }
            for r in replaced {
                s.bytes -= r.cost
                s.count -= 1
            }
            list.append(Entry(response: response, lastUsed: s.tick))
            s.entries[response.key] = list
            s.bytes += response.cost
            s.count += 1
            if s.bytes > limit { evicted = Self.evict(&s, downTo: limit - limit / 10) }
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
        let removed: [StoredResponse] = state.withLock { s in
            guard let list = s.entries.removeValue(forKey: key) else { return [] }
            for e in list {
                s.bytes -= e.response.cost
                s.count -= 1
            }
            return list.map(\.response)
        }
        removeFiles(removed)
    }

    /// Keys stored, for a purge by prefix.
    func keys(prefix: String) -> [String] {
        state.withLock { s in s.entries.keys.filter { $0.hasPrefix(prefix) } }
    }

    /// Removes (hard) or marks stale (soft) every variant of `key`; returns how many.
    @discardableResult
    func purge(_ key: String, soft: Bool) -> Int {
        guard soft else {
            let n = state.withLock { $0.entries[key]?.count ?? 0 }
            remove(key)
            return n
        }
        let list = state.withLock { $0.entries[key]?.map(\.response) ?? [] }
        for r in list where !r.markedStale { store(r.markingStale()) }
        return list.count
    }

    /// Removes one stored response if it is still there.
    func remove(_ response: StoredResponse) {
        let found: Bool = state.withLock { s in
            guard var list = s.entries[response.key], let i = list.firstIndex(where: { $0.response === response }) else { return false }
            list.remove(at: i)
            s.entries[response.key] = list.isEmpty ? nil : list
            s.bytes -= response.cost
            s.count -= 1
            return true
        }
        if found { removeFiles([response]) }
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

    private static func evict(_ s: inout State, downTo target: Int) -> [StoredResponse] {
        var all: [(key: String, used: UInt64, response: StoredResponse)] = []
        for (key, list) in s.entries { for e in list { all.append((key, e.lastUsed, e.response)) } }
        all.sort { $0.used < $1.used }
        var out: [StoredResponse] = []
        for victim in all where s.bytes > target {
            s.entries[victim.key]?.removeAll { $0.response === victim.response }
            if s.entries[victim.key]?.isEmpty == true { s.entries[victim.key] = nil }
            s.bytes -= victim.response.cost
            s.count -= 1
            out.append(victim.response)
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
        loaded.sort { $0.responseTime > $1.responseTime }
        var dropped: [StoredResponse] = []
        state.withLock { s in
            for r in loaded {
                guard s.bytes + r.cost <= limit else {
                    dropped.append(r)
                    continue
                }
                s.tick += 1
                s.entries[r.key, default: []].append(Entry(response: r, lastUsed: s.tick))
                s.bytes += r.cost
                s.count += 1
            }
        }
        removeFiles(dropped)
        return loaded.count - dropped.count
    }
}
