#if canImport(Glibc)
    import CFolioLinux
    import Glibc
#endif

/// Allocator settings for a short job that allocates a lot, then exits: folio-build.
///
/// A build touches its memory once: it parses, encodes and compresses, and ends. With glibc's
/// defaults most of its kernel time was page faults (15% of all its CPU samples on the 5,000-entry
/// catalog benchmark, about 2,700 faults a run), because every large array is a fresh mapping whose
/// pages are faulted in one at a time, then unmapped when freed, and faulted in again by the
/// next one. So, first thing in the process:
/// - large blocks from the heap instead of fresh mappings, and freed memory kept in it;
/// - the heap grown once by ``reserve`` bytes (address space; pages are only used when
///   touched), and that range marked for transparent huge pages (`MADV_HUGEPAGE`), which the
///   kernel then fills 2 MB at a time instead of 4 KB.
/// Measured on that benchmark: 2,650 → 791 page faults (perf stat); median wall time 36.2 →
/// 32.2 ms over 40 interleaved runs of each. A fresh publish of content/, with small objects,
/// and a no-op rebuild are unchanged within noise. This is what glibc's `glibc.malloc.hugetlb=1`
/// tunable does, applied from inside the process instead of the environment, and only to the
/// main heap.
///
/// Worker threads keep arenas of their own. With one arena for all (`M_ARENA_MAX` 1, which
/// saved 1.3 ms of that benchmark), two threads that allocate at once wait on its lock: in a
/// one-edit rebuild of 20,000 files, the parse and the current manifest's decode on another
/// thread each took about twice as long side by side as alone: the rebuild's median was 448 ms
/// with one arena and 382 ms without (12 interleaved runs).
package enum BatchMemory {
    /// The heap grown up front, in bytes.
    package static let reserve = 64 << 20

    /// Applies the settings; call it once, on the main thread, before other threads start. Where
    /// huge pages are not available the heap is still grown and kept, without the advice.
    package static func prepare() {
        #if canImport(Glibc)
        _ = mallopt(M_MMAP_THRESHOLD, 32 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, -1)
        _ = mallopt(M_TOP_PAD, Int32(reserve))
        // Growing the heap: a block larger than the free space at its top (`keepcost`) makes
        // malloc extend it by the block and the pad together; freed, the block goes back to that
        // free space. (`malloc_usable_size` keeps the optimizer from removing the unused block.)
        let start = UInt(bitPattern: sbrk(0))
        let block = malloc(mallinfo2().keepcost + (1 << 20))
        guard malloc_usable_size(block) > 0 else { return }
        free(block)
        let end = UInt(bitPattern: sbrk(0))
        // sbrk reports failure as (void *)-1: no range to advise then.
        guard start != UInt.max, end != UInt.max else { return }
        let hugePage: UInt = 2 << 20
        let from = (start + hugePage - 1) & ~(hugePage - 1)
        guard end > from, end - from >= hugePage else { return }
        // Refused (no THP in this kernel): the settings above still apply.
        _ = madvise(UnsafeMutableRawPointer(bitPattern: from), Int(end - from), MADV_HUGEPAGE)
        #endif
    }
}
