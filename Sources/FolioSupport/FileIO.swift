import Foundation

#if canImport(Glibc)
    import CFolioLinux
#endif

/// A file-system failure: the operation, the path, and the system's reason.
package struct FileError: Error, CustomStringConvertible, Sendable {
    package var operation: String
    package var path: String
    package var errno: Int32
    /// Why, when it is not the system's error.
    package var reason: String?

    package init(_ operation: String, _ path: String, errno: Int32 = Foundation.errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    package init(_ operation: String, _ path: String, reason: String) {
        self.init(operation, path, errno: 0)
        self.reason = reason
    }

    package var description: String {
        "cannot \(operation) \(path): \(reason ?? String(cString: strerror(errno)))"
    }
}

/// Small POSIX file helpers: whole-file reads, atomic writes, directory sync, locks. Linux's
/// shortcuts (O_TMPFILE, syncfs) have a POSIX fallback; on Darwin, durability is F_FULLFSYNC.
package enum FileIO {
    /// Reads the whole file at `path`: straight into the array, sized by `fstat` with a byte to
    /// spare to see the end, then in chunks if the file grew meanwhile (or has no size, as in
    /// /proc). (Read into a buffer and appended, every file was copied twice: a one-edit rebuild
    /// reads 40 MB of manifests and caches.)
    package static func read(_ path: String) throws(FileError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError("open", path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw FileError("stat", path) }
        var failure: Int32 = 0
        let wanted = max(Int(st.st_size), 0) + 1
        var out = [UInt8](unsafeUninitializedCapacity: wanted) { buf, count in
            (count, failure) = fill(UnsafeMutableBufferPointer(rebasing: buf[..<wanted]), from: fd)
        }
        if failure != 0 { throw FileError("read", path, errno: failure) }
        guard out.count == wanted else { return out }
        // Longer than `fstat` said: the rest, a chunk at a time.
        while true {
            var n = 0
            out.append(contentsOf: [UInt8](unsafeUninitializedCapacity: 65536) { buf, count in
                (count, failure) = fill(UnsafeMutableBufferPointer(rebasing: buf[..<65536]), from: fd)
                n = count
            })
            if failure != 0 { throw FileError("read", path, errno: failure) }
            if n < 65536 { return out }
        }
    }

    /// Reads from `fd` until `buf` is full or the file ends: the count read, and errno on failure.
    private static func fill(_ buf: UnsafeMutableBufferPointer<UInt8>, from fd: Int32) -> (Int, Int32) {
        var count = 0
        while count < buf.count {
            let n = Foundation.read(fd, buf.baseAddress! + count, buf.count - count)
            if n < 0 {
                if errno == EINTR { continue }
                return (count, errno)
            }
            if n == 0 { break }
            count += n
        }
        return (count, 0)
    }

    /// Whether something exists at `path`.
    package static func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    /// Up to this many new files an fsync each is cheaper than one `syncfs` of the file system.
    package static let perFileSyncLimit = 16

    /// The size of the regular file at `path`; nil when there is none.
    package static func size(_ path: String) -> Int? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(st.st_size)
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, optionally
    /// fsynced, then renamed over `path`. Readers see the old file or the new one, never a mix.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, sync: Bool = true) throws(FileError) {
        try writeAtomically(to: path, sync: sync) { fd, tmp throws(FileError) in try writeAll(bytes, to: fd, path: tmp) }
    }

    /// ``writeAtomically(_:to:sync:)`` with the content written by `fill` into the open
    /// temporary file (its path given for errors).
    private static func writeAtomically(to path: String, sync: Bool, fill: (Int32, String) throws(FileError) -> Void) throws(FileError) {
        let dir = parent(of: path)
        let name = lastComponent(of: path)
        // Unique per write, so that two threads writing the same path never share a temporary file.
        let tmp = (dir.isEmpty ? "" : dir + "/") + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))-\(name)"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError("create", tmp) }
        var ok = false
        defer {
            if !ok { unlink(tmp) }
        }
        do {
            defer { close(fd) }
            try fill(fd, tmp)
            if sync, !flush(fd) { throw FileError("fsync", tmp) }
        }
        guard rename(tmp, path) == 0 else { throw FileError("rename into place", path) }
        ok = true
    }

    /// Creates `path` with `bytes` and permission `mode`, complete or not at all, and never over
    /// an existing file (it throws EEXIST then): a temporary file, fsynced, then hard-linked.
    package static func createExclusive(_ bytes: [UInt8], at path: String, mode: mode_t) throws(FileError) {
        let dir = parent(of: path)
        let tmp = (dir.isEmpty ? "" : dir + "/") + ".tmp-\(getpid())-\(lastComponent(of: path))"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FileError("create", tmp) }
        defer { unlink(tmp) }
        do {
            defer { close(fd) }
            guard fchmod(fd, mode) == 0 else { throw FileError("chmod", tmp) }
            try writeAll(bytes, to: fd, path: tmp)
            if !flush(fd) { throw FileError("fsync", tmp) }
        }
        guard link(tmp, path) == 0 else { throw FileError("create", path) }
    }

    /// Writes `bytes` as a new file at `path`, atomically: the bytes go into an unnamed file
    /// (O_TMPFILE) in the target directory, which is then linked at `path` in one step. A crash
    /// before the link leaves nothing behind; readers never see a partial file. One directory
    /// operation instead of a create and a rename. When the link fails (`path` exists) or
    /// the file system has no O_TMPFILE, it falls back to `writeAtomically` (a temporary name and
    /// a rename), which replaces an existing file.
    /// With `sync`, the bytes are fsynced before the file gets its name.
    package static func writeNew(_ bytes: [UInt8], to path: String, sync: Bool = false) throws(FileError) {
        let dir = parent(of: path)
        try writeNew(bytes, in: AT_FDCWD, directory: dir.isEmpty ? "." : dir, name: path, path: path, sync: sync)
    }

    /// ``writeNew(_:to:sync:)`` relative to `dirFD` (`AT_FDCWD` for the working directory):
    /// the unnamed file is opened in `directory` and linked as `name`, both relative to it;
    /// `path` is the file's full path, for errors and the fallback.
    fileprivate static func writeNew(
        _ bytes: [UInt8], in dirFD: Int32, directory: String, name: String, path: String, sync: Bool
    ) throws(FileError) {
        try writeNew(in: dirFD, directory: directory, name: name, path: path, sync: sync) { fd, p throws(FileError) in
            try writeAll(bytes, to: fd, path: p)
        }
    }

    /// ``writeNew(_:in:directory:name:path:sync:)`` with the content written by `fill` into the
    /// open new file (a path given for errors); `fill` runs again for the fallback's file.
    fileprivate static func writeNew(
        in dirFD: Int32, directory: String, name: String, path: String, sync: Bool, fill: (Int32, String) throws(FileError) -> Void
    ) throws(FileError) {
        #if canImport(Glibc)
            let fd = openat(dirFD, directory, oTmpFile | O_WRONLY | O_CLOEXEC, 0o644)
            if fd >= 0 {
                defer { close(fd) }
                try fill(fd, path)
                if sync, !flush(fd) { throw FileError("fsync", path) }
                // Linked by its descriptor (AT_EMPTY_PATH: Linux 6.10 and later allow it for a
                // file the caller opened; earlier ones ask for a capability), else through /proc,
                // whose path walk cost a third more system time per file. Any failure (the name
                // exists, no /proc, …) leaves the unnamed file to vanish at close, and the
                // temporary-name path below decides, with its own errors.
                if linkat(fd, "", dirFD, name, atEmptyPath) == 0 { return }
                if errno != EEXIST, linkat(AT_FDCWD, "/proc/self/fd/\(fd)", dirFD, name, AT_SYMLINK_FOLLOW) == 0 { return }
            }
        #endif
        try writeAtomically(to: path, sync: sync, fill: fill)
    }

    /// Creates `name` in `dirFD` under its name (O_EXCL) with the content `fill` writes; a
    /// failure removes the partial file (see ``Directory/create(_:name:sync:)``).
    fileprivate static func create(
        in dirFD: Int32, name: String, path: String, sync: Bool, fill: (Int32, String) throws(FileError) -> Void
    ) throws(FileError) {
        let fd = openat(dirFD, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError("create", path) }
        do throws(FileError) {
            defer { close(fd) }
            try fill(fd, path)
            if sync, !flush(fd) { throw FileError("fsync", path) }
        } catch {
            unlinkat(dirFD, name, 0)
            throw error
        }
    }

    /// Writes into `fd` the file at `source`, a chunk at a time, checking that it is `size` bytes
    /// hashing to `sha256` (a source changed since it was hashed is an error).
    fileprivate static func copyChecked(from source: String, to fd: Int32, path: String, size: Int, sha256: String) throws(FileError) {
        let src = open(source, O_RDONLY | O_CLOEXEC)
        guard src >= 0 else { throw FileError("open", source) }
        defer { close(src) }
        var hasher = ContentHash.Streaming()
        let copied = try readChunks(src, path: source) { chunk throws(FileError) in
            hasher.update(chunk)
            try writeAll(chunk, to: fd, path: path)
        }
        guard copied == size, hasher.finish() == sha256 else {
            throw FileError("publish", source, reason: "it changed while the build was reading it; run the build again")
        }
    }

    /// Writes all of `bytes` to `fd` (short writes and EINTR retried); `path` names it in errors.
    fileprivate static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(FileError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(FileError) in try writeAll(raw, to: fd, path: path) } }.get()
    }

    private static func writeAll(_ raw: UnsafeRawBufferPointer, to fd: Int32, path: String) throws(FileError) {
        var written = 0
        while written < raw.count {
            let n = write(fd, raw.baseAddress! + written, raw.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError("write", path)
            }
            written += n
        }
    }

    /// What ``readChunks(_:path:_:)`` reads at a time.
    package static let chunkSize = 1 << 20

    /// Reads `fd` to its end a chunk at a time, handing each to `body`; returns the bytes read.
    package static func readChunks(
        _ fd: Int32, path: String, _ body: (UnsafeRawBufferPointer) throws(FileError) -> Void
    ) throws(FileError) -> Int {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            let n = Foundation.read(fd, buffer.baseAddress, chunkSize)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError("read", path)
            }
            if n == 0 { return total }
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            total += n
        }
    }

    #if canImport(Glibc)
        /// O_TMPFILE (`__O_TMPFILE | O_DIRECTORY`), a macro Swift does not import.
        private static let oTmpFile: Int32 = 0o20_000_000 | O_DIRECTORY
        /// AT_EMPTY_PATH, which Swift's Glibc module leaves out (`_GNU_SOURCE`).
        private static let atEmptyPath: Int32 = 0x1000
    #endif

    /// Atomically makes `path` another name for the existing file `source` (a hard link under a
    /// temporary name, renamed over `path`): no bytes are copied, so nothing new needs syncing but
    /// the directory. Returns false when the file system cannot link (the caller then copies).
    package static func replaceWithLink(to source: String, at path: String) throws(FileError) -> Bool {
        let dir = parent(of: path)
        let tmp = (dir.isEmpty ? "" : dir + "/") + ".tmp-\(getpid())-link-\(lastComponent(of: path))"
        unlink(tmp)
        guard link(source, tmp) == 0 else { return false }
        guard rename(tmp, path) == 0 else {
            unlink(tmp)
            throw FileError("rename into place", path)
        }
        return true
    }

    /// Flushes `fd`'s data to stable storage: fsync(2), and on Darwin F_FULLFSYNC, which also
    /// empties the drive's cache, as Darwin's fsync(2) page asks of durable writes (fsync where
    /// the file system refuses it). False when it fails.
    static func flush(_ fd: Int32) -> Bool {
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return true }
        #endif
        return fsync(fd) == 0
    }

    /// Flushes a directory's entries (renames, creations) to disk.
    package static func syncDirectory(_ path: String) throws(FileError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError("open directory", path) }
        defer { close(fd) }
        guard flush(fd) else { throw FileError("fsync directory", path) }
    }

    /// Flushes every dirty file on the file system holding `path` (one call instead of many
    /// fsyncs): syncfs(2) on Linux; elsewhere sync(2), which covers every file system, then a
    /// flush of `path` itself (on Darwin F_FULLFSYNC, which empties the drive's cache).
    package static func syncFileSystem(containing path: String) throws(FileError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError("open directory", path) }
        defer { close(fd) }
        #if canImport(Glibc)
            guard syncfs(fd) == 0 else { throw FileError("syncfs", path) }
        #else
            sync()
            guard flush(fd) else { throw FileError("fsync", path) }
        #endif
    }

    /// `path` without its last component, as `NSString.deletingLastPathComponent` gives it ("" for
    /// a name with no slash, "/" for one at the root; trailing slashes ignored). Written here
    /// because Foundation's traps on a one-character relative path (`"b"`) in this toolchain.
    package static func parent(of path: String) -> String {
        var p = Substring(path)
        while p.utf8.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        var head = p[..<slash]
        while head.utf8.count > 1, head.hasSuffix("/") { head = head.dropLast() }
        return head.isEmpty ? "/" : String(head)
    }

    /// The last component of `path` ("/" for the root; trailing slashes ignored).
    package static func lastComponent(of path: String) -> String {
        var p = Substring(path)
        while p.utf8.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        guard p.utf8.count > 1, let slash = p.lastIndex(of: "/") else { return String(p) }
        return String(p[p.index(after: slash)...])
    }

    /// The absolute path with symbolic links resolved; nil when it does not exist.
    package static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    /// Whether `path` is `dir` or lies inside it, with symbolic links resolved (a `path` that does
    /// not exist yet is resolved through its parent).
    package static func isInside(_ path: String, _ dir: String) -> Bool {
        guard let d = resolved(dir) else { return false }
        let parent = parent(of: path)
        guard let p = resolved(path) ?? resolved(parent.isEmpty ? "." : parent).map({ $0 + "/" + lastComponent(of: path) }) else {
            return false
        }
        return p == d || p.hasPrefix(d == "/" ? "/" : d + "/")
    }

    /// Creates `path` and its parents if missing.
    package static func makeDirectory(_ path: String) throws(FileError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else { throw FileError("create directory", path, errno: ENOTDIR) }
            return
        }
        let parent = parent(of: path)
        if !parent.isEmpty, parent != path { try makeDirectory(parent) }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw FileError("create directory", path) }
    }

    /// Removes the folder `path` with the files in it (not subfolders): a staged folder that a
    /// killed process left. Whatever cannot be removed stays.
    package static func removeFolder(_ path: String) {
        for name in (try? list(path)) ?? [] { unlink(path + "/" + name) }
        rmdir(path)
    }

    /// The names in directory `path`, unsorted, without `.` and `..`.
    package static func list(_ path: String) throws(FileError) -> [String] {
        try list(path, prefix: "")
    }

    /// The names in a directory that start with `prefix`; the others are never made into strings
    /// (a directory of 40,000 objects is swept for a few temporary files).
    package static func list(_ path: String, prefix: String) throws(FileError) -> [String] {
        guard let dir = opendir(path) else { throw FileError("list", path) }
        defer { closedir(dir) }
        var names: [String] = []
        let wanted = Array(prefix.utf8CString.dropLast())
        while let entry = readdir(dir) {
            if let name = name(of: entry, ifPrefixed: wanted) { names.append(name) }
        }
        return names
    }

    /// A directory entry's name when it starts with `prefix` (its bytes; empty for any) and is
    /// not `.` or `..`.
    private static func name(of entry: UnsafeMutablePointer<dirent>, ifPrefixed prefix: [CChar]) -> String? {
        let name: String? = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { c in
                guard prefix.isEmpty || strncmp(c, prefix, prefix.count) == 0 else { return nil }
                return String(cString: c)
            }
        }
        return name == "." || name == ".." ? nil : name
    }

    /// The regular files under directory `path`, at any depth, relative to it and unsorted; a
    /// directory that cannot be read adds nothing. Symbolic links are not followed.
    package static func regularFiles(under path: String) -> [String] {
        var out: [String] = []
        collectRegularFiles(path, prefix: "", into: &out)
        return out
    }

    private static func collectRegularFiles(_ dir: String, prefix: String, into out: inout [String]) {
        guard let handle = opendir(dir) else { return }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            guard let name = name(of: entry, ifPrefixed: []) else { continue }
            var type = Int32(entry.pointee.d_type)
            if type == Int32(DT_UNKNOWN) {
                var st = stat()
                guard lstat(dir + "/" + name, &st) == 0 else { continue }
                type = (st.st_mode & S_IFMT) == S_IFDIR ? Int32(DT_DIR) : (st.st_mode & S_IFMT) == S_IFREG ? Int32(DT_REG) : Int32(DT_UNKNOWN)
            }
            if type == Int32(DT_DIR) {
                collectRegularFiles(dir + "/" + name, prefix: prefix + name + "/", into: &out)
            } else if type == Int32(DT_REG) {
                out.append(prefix + name)
            }
        }
    }

    /// Takes an exclusive advisory lock on `path` (created if needed); nil when another process holds it.
    /// The lock lasts until the returned descriptor is closed or the process exits.
    package static func tryLock(_ path: String) throws(FileError) -> Int32? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError("open lock file", path) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            close(fd)
            if e == EWOULDBLOCK { return nil }
            throw FileError("lock", path, errno: e)
        }
        return fd
    }
}

extension FileIO {
    /// A directory held open, to write many new files into it without looking its path up for
    /// each one (20,000 objects: a fifth of a fresh build's system time went to path lookups).
    package final class Directory: Sendable {
        package let path: String
        private let fd: Int32

        package init(_ path: String) throws(FileError) {
            fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw FileError("open directory", path) }
            self.path = path
        }

        deinit { close(fd) }

        /// Whether the directory has an entry `name`.
        package func contains(_ name: String) -> Bool { faccessat(fd, name, F_OK, 0) == 0 }

        /// Writes the new file `name` as ``FileIO/writeNew(_:to:sync:)`` does: complete under its
        /// name or not there at all.
        package func writeNew(_ bytes: [UInt8], name: String, sync: Bool = false) throws(FileError) {
            try FileIO.writeNew(bytes, in: fd, directory: ".", name: name, path: path + "/" + name, sync: sync)
        }

        /// Creates the new file `name` with `bytes` straight under its name (never over an
        /// existing file), without ``writeNew(_:name:sync:)``'s unnamed file and link: for a
        /// folder no reader sees before it is complete (a staged folder renamed into place). A
        /// failure removes what was written.
        package func create(_ bytes: [UInt8], name: String, sync: Bool = false) throws(FileError) {
            try FileIO.create(in: fd, name: name, path: path + "/" + name, sync: sync) { out, p throws(FileError) in
                try FileIO.writeAll(bytes, to: out, path: p)
            }
        }

        /// ``copyNew(from:name:size:sha256:sync:)`` as ``create(_:name:sync:)`` writes.
        package func createCopy(from source: String, name: String, size: Int, sha256: String, sync: Bool = false) throws(FileError) {
            try FileIO.create(in: fd, name: name, path: path + "/" + name, sync: sync) { out, p throws(FileError) in
                try FileIO.copyChecked(from: source, to: out, path: p, size: size, sha256: sha256)
            }
        }

        /// Copies the file at `source` in as the new file `name`, a chunk at a time (never whole
        /// in memory), as ``writeNew(_:name:sync:)`` writes one: complete under its name or not
        /// there, named only once checked to be `size` bytes hashing to `sha256`. A source that
        /// changed since it was hashed is an error, and nothing gets the name.
        package func copyNew(from source: String, name: String, size: Int, sha256: String, sync: Bool = false) throws(FileError) {
            try FileIO.writeNew(in: fd, directory: ".", name: name, path: path + "/" + name, sync: sync) { out, p throws(FileError) in
                try FileIO.copyChecked(from: source, to: out, path: p, size: size, sha256: sha256)
            }
        }
    }
}
