import CFolioSystem
import FolioSupport
import Synchronization

/// libdeflate compressors kept for reuse, by level, each with a scratch buffer for its output.
///
/// `libdeflate_alloc_compressor` allocates a few hundred KB (the matchfinder's tables) for every
/// call; a build gzips 10,000 objects of 2 KB, so each paid an allocation and a free of that size
/// around 15 to 30 µs of work. A compressor holds no state between calls (each
/// `libdeflate_deflate_compress` starts afresh), so one reused gives the same bytes. Each thread
/// takes one out of the pool and puts it back; at most one per thread that compressed at once is
/// ever made.
enum DeflateCompressors {
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
    }

    private static let idle = Mutex<[Handle]>([])

    /// `body` with a compressor at `level`, from the pool or new.
    static func with<R>(level: Int32, _ body: (Handle) throws(GzipError) -> R) throws(GzipError) -> R {
        guard let handle = take(level) else {
            throw GzipError(description: "gzip: cannot allocate a compressor (out of memory)")
        }
        defer { idle.withLock { $0.append(handle) } }
        return try body(handle)
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
