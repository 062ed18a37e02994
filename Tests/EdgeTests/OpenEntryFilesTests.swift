import FolioSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

@testable import FolioEdge

/// Entry files held open for disk hits: a held file never answers for a name written again,
/// purged or damaged, and the descriptors stay in their bound.
@Suite("entry files held open", .serialized)
struct OpenEntryFilesTests {
    typealias Disk = DiskCacheTests

    /// A store whose every hit is read from disk (no memory tier).
    static func diskOnly(_ dir: String, openFiles: Int? = nil) throws -> CacheStore {
        let store = CacheStore(memoryLimit: 0, directory: dir, diskLimit: 10 << 20, openFiles: openFiles)
        try store.open()
        store.waitUntilIndexed()
        return store
    }

    static var gzipRequest: HTTPHeaders { ["Accept-Encoding": "gzip"] }

    @Test("a held file answers until its name is written again (a newer response, a soft purge) or purged")
    func rewrittenAndPurged() throws {
        let dir = try Disk.directory("held")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Self.diskOnly(dir)
        let first = Disk.response("/a", size: 3000, time: 1_700_000_000)
        store.store(first)
        store.flush()
        for _ in 0..<3 { #expect(store.variants("/a").first.map { Disk.same($0, first) } == true) }
        #expect(store.openFileCount == 1)
        #expect(store.usage.entries == 0, "nothing is kept in memory")

        let newer = Disk.response("/a", size: 1500, time: 1_700_000_100)
        store.store(newer)
        store.flush()
        #expect(store.variants("/a").first.map { Disk.same($0, newer) } == true)

        store.purge("/a", soft: true)
        store.flush()
        #expect(store.variants("/a").first?.markedStale == true)

        store.purge("/a", soft: false)
        store.flush()
        #expect(store.variants("/a").isEmpty)
        #expect(store.openFileCount == 0)
        #expect(Disk.entryFiles(dir).isEmpty)
        #expect(store.diskFailures.load(ordering: .relaxed) == 0)
    }

    @Test("a body byte flipped in place in a held file is a miss: the file is dropped and deleted")
    func damagedInPlace() throws {
        let dir = try Disk.directory("held-damage")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Self.diskOnly(dir)
        let r = Disk.response("/d", size: 4000)
        store.store(r)
        store.flush()
        #expect(store.variants("/d").first.map { Disk.same($0, r) } == true)
        #expect(store.openFileCount == 1)
        // In place, not renamed over: the held descriptor sees the change.
        let path = dir + "/" + DiskTier.name(r)
        let fd = Glibc.open(path, O_WRONLY)
        try #require(fd >= 0)
        var size = stat()
        fstat(fd, &size)
        var byte: UInt8 = 0x5a
        #expect(pwrite(fd, &byte, 1, size.st_size - 7) == 1)
        close(fd)

        #expect(store.variants("/d").isEmpty)
        store.flush()
        #expect(!FileIO.exists(path))
        #expect(store.openFileCount == 0)
        #expect(store.diskFailures.load(ordering: .relaxed) == 1)
        #expect(store.diskUsage?.entries == 0)
    }

    @Test("at most the bound of files is held, evicted by CLOCK; every read is still the entry stored")
    func bounded() throws {
        let dir = try Disk.directory("held-bound")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Self.diskOnly(dir, openFiles: 8)
        let stored = (0..<50).map { Disk.response("/o/\($0)", size: 100 + $0 * 37) }
        for r in stored { store.store(r) }
        store.flush()
        var rng = SystemRandomNumberGenerator()
        for round in 0..<3 {
            for r in stored.shuffled(using: &rng) {
                #expect(store.variants(r.key).first.map { Disk.same($0, r) } == true, "round \(round): \(r.key)")
                #expect(store.openFileCount <= 8)
            }
        }
        #expect(store.openFileCount == 8)
        #expect(store.diskReads.load(ordering: .relaxed) == 150)
    }

    @Test("with memory too small for the key, a request reads only the variant it selects; a lookup without one reads all")
    func selectedVariantOnly() throws {
        let dir = try Disk.directory("held-vary")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Self.diskOnly(dir)
        let plain = Disk.response("/v"), gzip = Disk.response("/v", gzip: true, time: 1_700_000_050)
        store.store(plain)
        store.store(gzip)
        store.flush()
        let selected = store.variants("/v", selecting: Self.gzipRequest)
        #expect(selected.count == 1 && selected.first.map { Disk.same($0, gzip) } == true)
        #expect(store.diskReads.load(ordering: .relaxed) == 1)
        let identity = store.variants("/v", selecting: HTTPHeaders())
        #expect(identity.count == 1 && identity.first.map { Disk.same($0, plain) } == true)
        #expect(store.variants("/v", selecting: ["Accept-Encoding": "br"]).isEmpty)
        #expect(store.variants("/v").count == 2)
        #expect(store.diskReads.load(ordering: .relaxed) == 4)

        // With room in memory the whole key is read and kept, as before.
        let roomy = CacheStore(memoryLimit: 1 << 20, directory: dir, diskLimit: 10 << 20)
        try roomy.open()
        roomy.waitUntilIndexed()
        #expect(roomy.variants("/v", selecting: Self.gzipRequest).count == 2)
        #expect(roomy.usage.entries == 2)
    }

    @Test("a file rewritten and forgotten between a reader's open and its keeping is not kept: the next read opens the new one")
    func rewriteBetweenOpenAndKeep() throws {
        let dir = try Disk.directory("held-race")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let old = CacheEntryFile.encode(Disk.response("/r", size: 700))
        let new = Disk.response("/r", size: 900, time: 1_700_000_100)
        try FileIO.makeDirectory(dir + "/ab")
        try FileIO.writeAtomically(old, to: dir + "/ab/r.entry", sync: false)
        let directoryFD = Glibc.open(dir, O_RDONLY | O_DIRECTORY)
        defer { close(directoryFD) }
        let files = Mutex<OpenEntryFiles?>(nil)
        let opened = Atomic<Int>(0)
        let held = OpenEntryFiles(capacity: 4) { name in
            // On the first open only: what the disk queue does for a store, rename then forget.
            guard opened.add(1, ordering: .relaxed).oldValue == 0 else { return }
            try? FileIO.writeAtomically(CacheEntryFile.encode(new), to: dir + "/" + name, sync: false)
            files.withLock { $0 }?.forget([name])
        }
        files.withLock { $0 = held }
        #expect(held.read("ab/r.entry", in: directoryFD, size: old.count)?.responseTime == 1_700_000_000, "the old entry, read before the rewrite")
        #expect(held.count == 0, "not kept: a forget came after it was opened")
        #expect(held.read("ab/r.entry", in: directoryFD, size: CacheEntryFile.encode(new).count).map { Disk.same($0, new) } == true)
        #expect(held.count == 1)
    }

    @Test("letting go of every descriptor (out of them) leaves reads working")
    func closeAll() throws {
        let dir = try Disk.directory("held-close")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = Disk.response("/c")
        let bytes = CacheEntryFile.encode(r)
        try FileIO.makeDirectory(dir + "/ab")
        try FileIO.writeAtomically(bytes, to: dir + "/ab/c.entry", sync: false)
        let directoryFD = Glibc.open(dir, O_RDONLY | O_DIRECTORY)
        defer { close(directoryFD) }
        let files = OpenEntryFiles(capacity: 4)
        #expect(files.read("ab/c.entry", in: directoryFD, size: bytes.count).map { Disk.same($0, r) } == true)
        #expect(files.count == 1)
        files.closeAll()
        #expect(files.count == 0)
        #expect(files.read("ab/c.entry", in: directoryFD, size: bytes.count).map { Disk.same($0, r) } == true)
        #expect(files.read("ab/missing.entry", in: directoryFD, size: bytes.count) == nil)
        #expect(files.count == 1)
    }
}
