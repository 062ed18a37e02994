import CFolioSystem
import FolioSupport
import Synchronization

/// libdeflate compressors kept for reuse, by level, each with a scratch buffer for its output.
///
/// `libdeflate_alloc_compressor` allocates a few hundred KB (the matchfinder's tables) for every
/// call; a build gzips 10,000 objects of 2 KB, so each paid an allocation and a free of that size
/// around 15 to 30 µs of work. A compressor holds no state between calls (each
/// `libdeflate_deflate_compress` starts afresh), so one reused gives the same bytes. Each thread
/// takes one out of the pool and puts it back; at most ``kept`` of a level stay in the pool
/// (a long-running edge does not hold one for every thread that ever compressed).
enum DeflateCompressors {
    /// The most idle compressors of one level kept: one per core.
    static let kept = Parallel.cores

    /// A compressor and its scratch output, owned by whoever took it out of the pool.
    final class Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        let level: Int32
        private(set) var scratch: UnsafeMutablePointer<UInt8>
        private(set) var capacity: Int

        init(pointer: OpaquePointer, level: Int32) {
            self.pointer = pointer
            self.level = level
            capacity = 64 * 1024
            scratch = .allocate(capacity: capacity)
        }

        /// The scratch buffer, at least `count` bytes long.
        func scratch(_ count: Int) -> UnsafeMutableBufferPointer<UInt8> {
            if count > capacity {
                scratch.deallocate()
                capacity = count
                scratch = .allocate(capacity: count)
            }
            return UnsafeMutableBufferPointer(start: scratch, count: count)
        }

        deinit {
            scratch.deallocate()
            libdeflate_free_compressor(pointer)
        }
    }

    private static let idle = Mutex<[Handle]>([])

    /// `body` with a compressor at `level`, from the pool or new.
    static func with<R>(level: Int32, _ body: (Handle) throws(GzipError) -> R) throws(GzipError) -> R {
        guard let handle = take(level) else {
            throw GzipError(description: "gzip: cannot allocate a compressor (out of memory)")
        }
        defer { give(handle) }
        return try body(handle)
    }

    /// How many idle compressors of `level` the pool holds.
    static func idleCount(level: Int32) -> Int { idle.withLock { pool in pool.count { $0.level == level } } }

    /// Puts `handle` back, unless the pool already keeps enough of its level (then it is freed).
    private static func give(_ handle: Handle) {
        idle.withLock { pool in
            if pool.count(where: { $0.level == handle.level }) < kept { pool.append(handle) }
        }
    }

    private static func take(_ level: Int32) -> Handle? {
        let pooled = idle.withLock { pool -> Handle? in
            guard let i = pool.lastIndex(where: { $0.level == level }) else { return nil }
            return pool.remove(at: i)
        }
        if let pooled { return pooled }
        return libdeflate_alloc_compressor(level).map { Handle(pointer: $0, level: level) }
    }
}
