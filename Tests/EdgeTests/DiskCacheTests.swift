import FolioSupport
import FolioToolSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import FolioEdge

/// The tier's two-level store: memory over checksummed files, the index rebuilt at start.
@Suite("the cache store on disk", .serialized)
struct DiskCacheTests {
    static func directory(_ label: String) throws -> String {
        let dir = NSTemporaryDirectory() + "folio-disk-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A 200 for `key` with `size` bytes of body derived from the key, gzip or not.
    static func response(_ key: String, size: Int = 2000, gzip: Bool = false, time: Double = 1_700_000_000) -> StoredResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/x-plist")
        headers.add(name: "Cache-Control", value: "public, max-age=31536000, immutable")
        headers.add(name: "ETag", value: "\"\(key.hashValue & 0xffff)\(gzip ? "-gz" : "")\"")
        headers.add(name: "Vary", value: "Accept-Encoding")
        if gzip { headers.add(name: "Content-Encoding", value: "gzip") }
        var request = HTTPHeaders()
        if gzip { request.add(name: "Accept-Encoding", value: "gzip") }
        let seed = Array((key + (gzip ? "gz" : "")).utf8)
        let body = (0..<size).map { seed[$0 % seed.count] &+ UInt8(truncatingIfNeeded: $0 / seed.count) }
        return StoredResponse(
            key: key, status: 200, reason: "OK", headers: headers, body: ByteBuffer(bytes: body),
            requestTime: time, responseTime: time, requestHeaders: request)
    }

    static func same(_ a: StoredResponse, _ b: StoredResponse) -> Bool {
        a.key == b.key && a.body == b.body && a.headers == b.headers && a.varyValues == b.varyValues && a.responseTime == b.responseTime
            && a.control == b.control && a.lifetime == b.lifetime && a.initialAge == b.initialAge && a.servedHeaders == b.servedHeaders
            && a.preparedHead == b.preparedHead && a.prepared304 == b.prepared304
    }

    static func entryFiles(_ dir: String) -> [String] {
        ((try? FileIO.list(dir)) ?? []).filter { $0.count == 2 }.flatMap { shard in
            ((try? FileIO.list(dir + "/" + shard)) ?? []).map { shard + "/" + $0 }
        }.filter { $0.hasSuffix(".entry") }
    }

    @Test("more than memory holds: every entry comes back from disk, byte for byte; memory stays in its bound")
    func largerThanMemory() throws {
        let dir = try Self.directory("large")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = CacheStore(memoryLimit: 40_000, directory: dir, diskLimit: 10 << 20)
        try store.open()
        let stored = (0..<200).flatMap { i in [Self.response("/objects/\(i).plist"), Self.response("/objects/\(i).plist", gzip: true)] }
        for r in stored { store.store(r) }
        #expect(store.usage.bytes <= 40_000)
        store.flush()
        #expect(store.diskUsage?.entries == 400)
        #expect(Self.entryFiles(dir).count == 400)
        for r in stored {
            let back = store.variants(r.key).first { $0.varyValues == r.varyValues }
            #expect(back.map { Self.same($0, r) } == true, "\(r.key) \(r.varyValues)")
            #expect(store.usage.bytes <= 40_000)
        }
        #expect(store.diskReads.load(ordering: .relaxed) > 0)
    }

    @Test("a restart: lookups answer at once by probing while the index is rebuilt; then the index has every entry")
    func restart() throws {
        let dir = try Self.directory("restart")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = CacheStore(memoryLimit: 1 << 20, directory: dir, diskLimit: 10 << 20)
        try first.open()
        let stored = (0..<300).map { Self.response("/o/\($0)") }
        for r in stored { first.store(r) }
        first.flush()
        // Leftovers of a crash: a temporary file mid-write, and an entry of the earlier format.
        try FileIO.writeAtomically([1, 2, 3], to: dir + "/ab/.tmp-999-x.entry", sync: false)
        try FileIO.writeAtomically([1, 2, 3], to: dir + "/" + String(repeating: "0", count: 64) + ".entry", sync: false)
        let second = CacheStore(memoryLimit: 1 << 20, directory: dir, diskLimit: 10 << 20)
        try second.open()
        let early = second.variants("/o/7")
        #expect(early.count == 1 && Self.same(early[0], stored[7]))
        second.waitUntilIndexed()
        second.flush()
        #expect(second.diskUsage?.entries == 300)
        for r in stored { #expect(second.variants(r.key).first.map { Self.same($0, r) } == true) }
        #expect(!FileIO.exists(dir + "/ab/.tmp-999-x.entry"))
        #expect(!FileIO.exists(dir + "/" + String(repeating: "0", count: 64) + ".entry"))
    }

    @Test("a round trip keeps what the fields decided: directives, lifetime, age, selecting values, prepared heads")
    func roundTrip() throws {
        let dir = try Self.directory("trip")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var headers = HTTPHeaders()
        headers.add(name: "Cache-Control", value: "no-cache, private=\"Set-Cookie\", s-maxage=60, stale-while-revalidate=30, must-understand")
        headers.add(name: "CDN-Cache-Control", value: "max-age=90, stale-if-error=600")
        headers.add(name: "Date", value: "Tue, 14 Nov 2023 22:13:10 GMT")
        headers.add(name: "Age", value: "7")
        headers.add(name: "Vary", value: "Accept-Encoding, Accept-Language")
        headers.add(name: "Content-Length", value: "3")
        var request = HTTPHeaders()
        request.add(name: "Accept-Language", value: "fr,  en")
        let r = StoredResponse(
            key: "/t", status: 203, reason: "Non-Authoritative", headers: headers, body: ByteBuffer(bytes: [1, 2, 3]),
            requestTime: 1_700_000_000, responseTime: 1_700_000_001.5, requestHeaders: request, markedStale: true)
        let first = CacheStore(memoryLimit: 1 << 20, directory: dir, diskLimit: 1 << 20)
        try first.open()
        first.store(r)
        first.flush()
        let second = CacheStore(memoryLimit: 1 << 20, directory: dir, diskLimit: 1 << 20)
        try second.open()
        let back = try #require(second.variants("/t").first)
        #expect(Self.same(back, r) && back.markedStale && back.status == 203 && back.reason == "Non-Authoritative")
        #expect(back.control.maxAge == 90 && back.control.staleIfError == 600, "CDN-Cache-Control decides: \(back.control)")
    }

    @Test("a damaged file is never an answer: a flipped body byte, a truncation, another key's entry under its name")
    func damage() throws {
        let dir = try Self.directory("damage")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = CacheStore(memoryLimit: 1 << 20, directory: dir, diskLimit: 10 << 20)
        try first.open()
        let a = Self.response("/a"), b = Self.response("/b"), c = Self.response("/c"), d = Self.response("/d")
        for r in [a, b, c, d] { first.store(r) }
        first.flush()
        let path = { (r: StoredResponse) in dir + "/" + DiskTier.name(r) }
        var bytes = try FileIO.read(path(a))
        bytes[bytes.count - 10] ^= 0x01
        try FileIO.writeAtomically(bytes, to: path(a), sync: false)
        let whole = try FileIO.read(path(b))
        try FileIO.writeAtomically(Array(whole.prefix(whole.count - 100)), to: path(b), sync: false)
        try FileIO.writeAtomically(try FileIO.read(path(d)), to: path(c), sync: false)

        let second = CacheStore(memoryLimit: 1 << 20, directory: dir, diskLimit: 10 << 20)
        try second.open()
        second.waitUntilIndexed()
        #expect(second.variants("/a").isEmpty)
        #expect(second.variants("/b").isEmpty)
        #expect(second.variants("/c").isEmpty)
        #expect(second.variants("/d").first.map { Self.same($0, d) } == true)
        second.flush()
        #expect(!FileIO.exists(path(a)) && !FileIO.exists(path(b)) && !FileIO.exists(path(c)))
        #expect(second.diskFailures.load(ordering: .relaxed) >= 1)
        #expect(second.diskUsage?.entries == 1)
    }

    @Test("the disk bound: S3-FIFO evicts files past --cache-size; a purge while the index is rebuilt stays purged")
    func diskBoundAndPurge() throws {
        let dir = try Self.directory("bound")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = CacheStore(memoryLimit: 10_000, directory: dir, diskLimit: 100_000)
        try store.open()
        for i in 0..<200 { store.store(Self.response("/k/\(i)")) }
        store.flush()
        let usage = try #require(store.diskUsage)
        #expect(usage.bytes <= 100_000 && usage.entries < 200 && usage.entries > 20)
        #expect(Self.entryFiles(dir).count == usage.entries)

        let held = store.keys(prefix: "/k/")
        let victim = try #require(held.first)
        let renewed = try #require(held.dropFirst().first)
        // Purged, and purged then stored again (identity only): its old gzip variant stays gone.
        let gzip = Self.response(renewed, gzip: true)
        try FileIO.writeAtomically(CacheEntryFile.encode(gzip), to: dir + "/" + DiskTier.name(gzip), sync: false)
        let kept = Self.entryFiles(dir).count - 1
        let again = CacheStore(memoryLimit: 10_000, directory: dir, diskLimit: 100_000)
        try again.open()
        again.remove(victim)
        again.remove(renewed)
        let fresh = Self.response(renewed, time: 1_700_000_100)
        again.store(fresh)
        again.waitUntilIndexed()
        again.flush()
        #expect(again.variants(victim).isEmpty)
        let back = again.variants(renewed)
        #expect(back.count == 1 && back.first.map { Self.same($0, fresh) } == true, "\(back.map(\.varyValues))")
        // The extra gzip file may be indexed before its purge and push one entry out.
        let entries = try #require(again.diskUsage?.entries)
        #expect((kept - 2...kept - 1).contains(entries), "\(entries) of \(kept)")
        #expect(Self.entryFiles(dir).count == entries)
    }

    @Test("a full disk: writes the disk refuses are counted and forgotten; what is served stays whole")
    func fullDisk() throws {
        let dir = try Self.directory("full")
        defer {
            _ = Subprocess.run(["/bin/umount", dir])
            try? FileManager.default.removeItem(atPath: dir)
        }
        let mounted = Subprocess.run(["/bin/mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir])
        try #require(mounted?.status == 0, "mounting a small tmpfs needs root: \(String(decoding: mounted?.output ?? [], as: UTF8.self))")
        let store = CacheStore(memoryLimit: 20_000, directory: dir, diskLimit: 10 << 20)
        try store.open()
        let stored = (0..<100).map { Self.response("/big/\($0)", size: 10_000) }
        for r in stored { store.store(r) }
        store.flush()
        #expect(store.diskFailures.load(ordering: .relaxed) > 0)
        let usage = try #require(store.diskUsage)
        #expect(usage.entries == Self.entryFiles(dir).count && usage.entries < 100)
        for r in stored {
            for back in store.variants(r.key) { #expect(Self.same(back, r)) }
        }
    }
}
