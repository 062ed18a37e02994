import Glibc
import Synchronization

/// Entry files kept open for reading, with their checked heads decoded, as nginx's
/// `open_file_cache` keeps descriptors: a disk hit on a held file costs one `pread` of the body
/// and its checksum, instead of `openat`, `pread` of the whole file, decoding and `close`.
/// Bounded in count and evicted by CLOCK (a second chance for files read since the hand last
/// passed), which costs a hit one dictionary lookup and a flag.
///
/// A held descriptor reads the file it was opened on, so every rewrite or deletion of a name
/// must `forget` it; the disk queue does so right after the rename or unlink, before the write is
/// marked done. An open that raced a forget is not kept (a generation counter tells), so no
/// later read gets the replaced file. A descriptor is closed when the last reader holding it
/// lets go, never under a read.
final class OpenEntryFiles: Sendable {
    /// One open entry file, closed when released.
    final class File: Sendable {
        let fd: Int32
        let held: CacheEntryFile.Held
        /// Read since the clock's hand last passed it.
        let used = Atomic<Bool>(false)
        init(_ fd: Int32, _ held: CacheEntryFile.Held) { (self.fd, self.held) = (fd, held) }
        deinit { close(fd) }
    }

    private struct State {
        var files: [String: (file: File, slot: Int)] = [:]
        /// The clock: held files by slot, free slots, and the hand.
        var ring: [(name: String, file: File)?] = []
        var free: [Int] = []
        var hand = 0
        /// Bumped by every forget: an open that started before it is not kept.
        var generation: UInt64 = 0

        /// Takes a slot for a new file: a free one, a new one under `capacity`, or the first
        /// the hand finds unread since it last passed (whose file is returned, evicted).
        mutating func slot(capacity: Int) -> (Int, evicted: File?) {
            if let slot = free.popLast() { return (slot, nil) }
            if ring.count < capacity {
                ring.append(nil)
                return (ring.count - 1, nil)
            }
            while true {
                let slot = hand
                hand = (hand + 1) % ring.count
                guard let (name, file) = ring[slot] else { return (slot, nil) }
                if file.used.exchange(false, ordering: .relaxed) { continue }
                files[name] = nil
                ring[slot] = nil
                return (slot, file)
            }
        }

        mutating func remove(_ name: String) -> File? {
            guard let (file, slot) = files.removeValue(forKey: name) else { return nil }
            ring[slot] = nil
            free.append(slot)
            return file
        }
    }

    private let state: Mutex<State>
    let capacity: Int
    /// Called between opening a file and keeping it (tests: a rewrite in that window).
    private let afterOpen: (@Sendable (String) -> Void)?

    init(capacity: Int, afterOpen: (@Sendable (String) -> Void)? = nil) {
        self.capacity = max(0, capacity)
        self.afterOpen = afterOpen
        state = Mutex(State())
    }

    /// Descriptors held now.
    var count: Int { state.withLock { $0.files.count } }

    /// The entry in file `name` of the directory `directoryFD` (of `size` bytes, as the index
    /// says), checked; nil when it is missing or fails (it is then no longer held).
    func read(_ name: String, in directoryFD: Int32, size: Int) -> StoredResponse? {
        let (held, generation) = state.withLock { s -> (File?, UInt64) in
            guard let (file, _) = s.files[name] else { return (nil, s.generation) }
            file.used.store(true, ordering: .relaxed)
            return (file, s.generation)
        }
        if let held {
            if let r = try? CacheEntryFile.read(fd: held.fd, held: held.held, path: name) { return r }
            forget([name])
            return nil
        }
        let fd = openFile(name, in: directoryFD)
        guard fd >= 0 else { return nil }
        guard let (r, entry) = try? CacheEntryFile.readHeld(fd: fd, path: name, expectedSize: size) else {
            close(fd)
            return nil
        }
        afterOpen?(name)
        keep(name, File(fd, entry), generation)
        return r
    }

    /// Linux's O_NOATIME, which Glibc's module does not export (a GNU extension).
    private static let noAccessTime: Int32 = 0o1000000

    /// Opens `name` read-only without touching its access time where the process may.
    private func openFile(_ name: String, in directoryFD: Int32) -> Int32 {
        var fd = openat(directoryFD, name, O_RDONLY | O_CLOEXEC | Self.noAccessTime)
        if fd < 0, errno == EPERM { fd = openat(directoryFD, name, O_RDONLY | O_CLOEXEC) }
        if fd < 0, errno == EMFILE || errno == ENFILE { closeAll() }
        return fd
    }

    /// Holds `file` unless a forget came since `generation` (the file may be the replaced one).
    private func keep(_ name: String, _ file: File, _ generation: UInt64) {
        guard capacity > 0 else { return }
        let evicted = state.withLock { s -> File? in
            guard s.generation == generation, s.files[name] == nil else { return nil }
            let (slot, evicted) = s.slot(capacity: capacity)
            s.ring[slot] = (name, file)
            s.files[name] = (file, slot)
            return evicted
        }
        _ = evicted  // closed here, outside the lock
    }

    /// Lets go of `names` (rewritten or deleted): the next read opens them again.
    func forget(_ names: [String]) {
        let dropped = state.withLock { s -> [File] in
            s.generation &+= 1
            return names.compactMap { s.remove($0) }
        }
        _ = dropped
    }

    /// Lets go of every descriptor (the process ran out of them).
    func closeAll() {
        let dropped = state.withLock { s -> [File] in
            s.generation &+= 1
            let all = s.files.values.map(\.file)
            s = State(generation: s.generation)
            return all
        }
        _ = dropped
    }

    /// How many descriptors to hold: an eighth of the process's limit, at most 4,096 (none when
    /// the limit cannot be read).
    static func defaultCapacity() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return Int(min(UInt64(4096), UInt64(limit.rlim_cur) / 8))
    }

    /// Raises the soft limit on open descriptors to the hard one (as nginx's
    /// `worker_rlimit_nofile` and Go's runtime do): connections and held files share it.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
