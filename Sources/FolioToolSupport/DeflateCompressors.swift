import CFolioSystem
import FolioSupport
import Synchronization

/// libdeflate compressors kept for reuse, by level.
///
/// `libdeflate_alloc_compressor` allocates a few hundred KB (the matchfinder's tables) for every
/// call; a build gzips 10,000 objects of 2 KB, so each paid an allocation and a free of that size
/// around 15 to 30 µs of work. A compressor holds no state between calls (each
/// `libdeflate_deflate_compress` starts afresh), so one reused gives the same bytes. Each thread
/// takes one out of the pool and puts it back; at most one per thread that compressed at once is
/// ever made.
enum DeflateCompressors {
    /// A compressor, owned by whoever took it out of the pool.
    struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        let level: Int32
    }

    private static let idle = Mutex<[Handle]>([])

    /// `body` with a compressor at `level`, from the pool or new; nil when one cannot be allocated.
    static func with<R>(level: Int32, _ body: (OpaquePointer) throws(GzipError) -> R) throws(GzipError) -> R {
        guard let handle = take(level) else {
            throw GzipError(description: "gzip: cannot allocate a compressor (out of memory)")
        }
        defer { idle.withLock { $0.append(handle) } }
        return try body(handle.pointer)
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
