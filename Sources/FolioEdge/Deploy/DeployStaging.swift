import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// A deploy's refusal: the status it is answered with and what to do, in words.
struct DeployFailure: Error, CustomStringConvertible {
    var status: Int
    var message: String

    init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }

    /// A file-system failure while staging or moving into place: 507 when the disk is full.
    static func file(_ error: Error, doing what: String) -> DeployFailure {
        if let e = error as? FileError, e.errno == ENOSPC || e.errno == EDQUOT {
            return DeployFailure(507, "the edge's disk is full: could not \(what) (\(e)); free space on the edge, then deploy again")
        }
        return DeployFailure(500, "the edge could not \(what): \(error)")
    }
}

/// The paths a deploy may write, relative to the published root.
enum DeployPaths {
    /// Nil when `relative` is a file of a published directory; else why not.
    static func problem(_ relative: String) -> String? {
        if relative.utf8.count > 512 || !isPlainNames(relative) { return "'\(relative)' is not a relative path of plain names" }
        let parts = relative.utf8.split(separator: UInt8(ascii: "/"), maxSplits: 2).map { Substring($0) }
        guard let kind = PublishedHeaders.kind(of: relative) else {
            return "'\(relative)' is not a file of a published directory (objects/, deltas/, manifests/, channels/, manifest, head)"
        }
        if parts[0] == Substring(PublishedLayout.channels), !Channel.isValidName(String(parts[1])) || parts[1] == Substring(Channel.production) {
            return "'\(relative)': '\(parts[1])' is not a channel name"
        }
        if kind == .object, parts.count != 2 || objectHash(relative) == nil {
            return "'\(relative)' is not an object name (objects/SHA256.EXT, .gz or .br)"
        }
        return nil
    }

    /// Whether `relative` is names joined by `/`: none empty, none starting with `.`, none with a
    /// backslash (a byte scan: this runs for each file of a deploy's begin).
    private static func isPlainNames(_ relative: String) -> Bool {
        var atStart = true
        for byte in relative.utf8 {
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "."):
                if atStart { return false }
                atStart = byte == UInt8(ascii: "/")
            case UInt8(ascii: "\\"): return false
            default: atStart = false
            }
        }
        return !atStart
    }

    /// The SHA-256 an object's name gives (of its uncompressed bytes) and its coding.
    static func objectHash(_ relative: String) -> (sha256: String, encoding: String?)? {
        let name = FileIO.lastComponent(of: relative)
        let hash = name.prefix { $0 != "." }
        guard ContentHash.isSHA256Hex(hash), name.count > hash.count + 1 else { return nil }
        return (String(hash), PublishedHeaders.stripEncoding(name).encoding)
    }

    /// The channel a path belongs to: `channels/NAME/…` NAME's, everything else production's.
    static func channel(of relative: String) -> String {
        guard relative.utf8.starts(with: channelsPrefix) else { return Channel.production }
        return String(relative.split(separator: "/")[1])
    }

    private static let channelsPrefix = Array((PublishedLayout.channels + "/").utf8)

    /// A path inside its channel's directory (`channels/beta/head.plist` → `head.plist`).
    static func inChannel(_ relative: String) -> String {
        guard relative.utf8.starts(with: channelsPrefix) else { return relative }
        return String(relative.dropFirst(PublishedLayout.channelPrefix(channel(of: relative)).count))
    }

    /// The order files go into place in, as a local publish writes them: objects, deltas,
    /// versioned manifests, heads, mirrors, channel manifests, production's manifest last.
    static func rank(_ relative: String) -> Int {
        switch PublishedHeaders.kind(of: relative) {
        case .object: return 0
        case .immutable: return relative.contains(PublishedLayout.deltas + "/") ? 1 : 2
        case .mutable, nil:
            let name = FileIO.lastComponent(of: relative)
            if name == PublishedLayout.head { return 3 }
            if name != PublishedLayout.manifest { return 4 }
            return relative == PublishedLayout.manifest ? 6 : 5
        }
    }
}

/// One deploy's staging directory (`ROOT/.deploy/ID`): files arrive here, checked, and move
/// into the published root only at the commit.
struct DeployStaging: Sendable {
    let root: String
    let id: String

    /// Where deploys stage their files.
    static func base(_ root: String) -> String { root + "/.deploy" }

    var directory: String { Self.base(root) + "/" + id }

    /// Creates the (empty) staging directory.
    func create() throws(DeployFailure) {
        do {
            try FileIO.makeDirectory(Self.base(root))
            try FileIO.makeDirectory(directory)
        } catch { throw DeployFailure.file(error, doing: "create the staging directory \(directory)") }
    }

    /// Removes the staging directory and everything in it. It is first renamed aside, so an
    /// abort and an upload that ends after it (each removes the staging) never remove the same
    /// tree at once: two removals of one tree each fail on the files the other took.
    func remove() {
        guard let aside = setAside() else { return }
        Self.delete(aside)
    }

    /// ``remove()`` with the deletion on another thread, after the staging is set aside: a
    /// commit answers without waiting for the replaced files' blocks to be freed.
    func removeSoon() {
        guard let aside = setAside() else { return }
        DispatchQueue.global(qos: .utility).async { Self.delete(aside) }
    }

    /// The staging directory renamed aside, under a name no other removal takes; nil when it is gone.
    private func setAside() -> String? {
        let aside = Self.base(root) + "/.removing-" + id + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return rename(directory, aside) == 0 ? aside : nil
    }

    private static func delete(_ aside: String) {
        for _ in 0..<3 where FileIO.exists(aside) { try? FileManager.default.removeItem(atPath: aside) }
    }

    /// Keeps the file at `path`, which the move into place is about to replace, linked in the
    /// staging until the staging is removed: the replacing rename then frees no blocks. Freeing
    /// them can wait on the disk (with `discard`, ext4 trims a freed file's blocks synchronously:
    /// 4–8 ms a file on this VM, most of a small deploy's commit). Nothing is kept for a new path.
    func keepReplaced(_ path: String, _ index: Int) {
        _ = link(path, directory + "/.replaced-\(index)")
    }

    /// Stores one arriving file: an object only when its bytes hash to its name. One the edge
    /// `made` from bytes it checked (an object a delta rebuilt to its entry's digest, a variant
    /// of a plain object the commit checks) is not decoded and hashed again.
    func store(_ relative: String, _ bytes: [UInt8], made: Bool = false) throws(DeployFailure) {
        if let problem = DeployPaths.problem(relative) { throw DeployFailure(400, problem) }
        if !made, relative.hasPrefix(PublishedLayout.objects + "/"), let name = DeployPaths.objectHash(relative) {
            try Self.verify(relative, bytes, sha256: name.sha256, encoding: name.encoding)
        }
        let path = directory + "/" + relative
        do {
            try Self.makeDirectories(directory, FileIO.parent(of: relative))
            // Made durable by the plan or the commit (``makeDurableSoon(_:)``, ``DeployCommit``). An
            // unnamed file linked in: one directory operation; a file sent again replaces it.
            try FileIO.writeNew(bytes, to: path, sync: false)
        } catch { throw DeployFailure.file(error, doing: "stage \(relative)") }
    }

    /// Stages `relative` as a second name of the staged file `existing`, which the caller staged
    /// with `bytes` (one inode, one write and one fsync fewer); stores `bytes` as
    /// ``store(_:_:)`` does when `existing` is not staged at that size or cannot be linked.
    func stageLink(_ relative: String, to existing: String, bytes: [UInt8]) throws(DeployFailure) {
        let source = directory + "/" + existing
        guard FileIO.size(source) == bytes.count else { return try store(relative, bytes) }
        if let problem = DeployPaths.problem(relative) { throw DeployFailure(400, problem) }
        let path = directory + "/" + relative
        do {
            try Self.makeDirectories(directory, FileIO.parent(of: relative))
            unlink(path)
            guard link(source, path) == 0 else { return try store(relative, bytes) }
        } catch { throw DeployFailure.file(error, doing: "stage \(relative)") }
    }

    /// The most staged files made durable one fsync each (on several threads, whose fsyncs the
    /// file system's journal takes together); past it, one sync of the whole file system. That
    /// sync also writes every other program's unwritten data on it: after an rsync of 3 MB, it
    /// took a 10,000-entry edit deploy from 0.1 s to 0.4 s.
    static let perFileSyncLimit = 1024

    /// Makes the files and directories at `paths` durable: an fsync each for up to
    /// ``perFileSyncLimit``, one file-system sync for more (a first deploy of a large site).
    func makeDurable(paths: [String]) throws(DeployFailure) {
        do {
            guard paths.count <= Self.perFileSyncLimit else { return try FileIO.syncFileSystem(containing: directory) }
            let results = Parallel.map(paths, threads: 8) { Self.sync($0) }
            for case .failure(let error) in results { throw error }
        } catch { throw DeployFailure.file(error, doing: "make the deployed files durable") }
    }

    /// Those of `files` not in `durable` as the same inode (staged again since, or never synced).
    func notDurable(_ files: [String], durable: [String: UInt64]) -> [String] {
        files.filter { relative in durable[relative].map { $0 != Self.inode(directory + "/" + relative) } ?? true }
    }

    /// Starts making the staged `files` durable on other threads, while the deploy goes on; the
    /// files it made durable, each with its inode. None past ``perFileSyncLimit`` (the commit
    /// syncs the file system then), and none that failed (the commit syncs them and says why).
    func makeDurableSoon(_ files: [String]) -> Pending<[String: UInt64]> {
        let directory = directory
        return Pending {
            guard files.count <= Self.perFileSyncLimit else { return [:] }
            let results = Parallel.map(files, threads: 8) { relative in (relative, try? Self.sync(directory + "/" + relative).get()) }
            return Dictionary(results.compactMap { relative, inode in inode.map { (relative, $0) } }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// Opens, fsyncs and closes the file at `path`; its inode.
    private static func sync(_ path: String) -> Result<UInt64, FileError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(FileError("open", path)) }
        defer { close(fd) }
        var st = stat()
        guard fsync(fd) == 0, fstat(fd, &st) == 0 else { return .failure(FileError("fsync", path)) }
        return .success(UInt64(st.st_ino))
    }

    private static func inode(_ path: String) -> UInt64? {
        var st = stat()
        return stat(path, &st) == 0 ? UInt64(st.st_ino) : nil
    }

    /// Refuses an object whose bytes (decompressed, for a variant) do not hash to its name.
    static func verify(_ relative: String, _ bytes: [UInt8], sha256: String, encoding: String?) throws(DeployFailure) {
        let plain: [UInt8]
        do {
            switch encoding {
            case "gzip": plain = try Gzip.decompress(bytes, maxSize: DeployRequest.maxBody)
            case "br": plain = try Brotli.decompress(bytes, maxSize: DeployRequest.maxBody)
            default: plain = bytes
            }
        } catch {
            throw DeployFailure(422, "\(relative): \(bytes.count) bytes that do not decompress (\(error)): truncated or corrupt; deploy again")
        }
        let actual = ContentHash.sha256Hex(plain)
        guard actual == sha256 else {
            throw DeployFailure(
                422, "\(relative): its \(plain.count) bytes hash to \(actual), not to the hash its name gives: corrupt or misnamed; rebuild and deploy again")
        }
    }

    /// Creates `relative` (a directory path) and its parents under `base`.
    /// `base` itself must exist: a staging directory an abort removed is not made again by a
    /// file still arriving for it.
    static func makeDirectories(_ base: String, _ relative: String) throws(FileError) {
        var path = base
        for part in relative.split(separator: "/") {
            path += "/" + part
            guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw FileError("create directory", path) }
        }
    }

    /// Every file staged, relative, in the order they go into place.
    func files() -> [String] {
        let files = FileIO.regularFiles(under: directory).filter { !FileIO.lastComponent(of: $0).hasPrefix(".") }
        return files.map { (rank: DeployPaths.rank($0), path: $0) }.sorted { ($0.rank, $0.path) < ($1.rank, $1.path) }.map(\.path)
    }
}
