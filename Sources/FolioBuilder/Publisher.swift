import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// What a publish did, for the closing summary.
package struct PublishResult: Sendable {
    package var previousVersion: Int?
    package var version: Int
    package var changed: Bool
    package var added = 0
    package var modified = 0
    package var removed = 0
    package var objectsWritten = 0
    package var rawBytes = 0
    package var gzipBytes = 0
    /// Set when the version was published again only to renew or change its signature, or
    /// when it drops the signature the previous version had.
    package var signingNote: String?
    /// Deltas written from earlier versions to this one, and their bytes as served.
    package var deltas = DeltaWriter.Summary()

    package func summary(elapsedMilliseconds: String) -> String {
        let notes = (changed ? previousVersion.map { ["was \($0)"] } ?? [] : []) + (signingNote.map { [$0] } ?? [])
        let head = changed
            ? "published version \(version)" + (notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))")
            : "up to date at version \(version): nothing changed, no new version"
        let deltaText = deltas.written > 0 ? "\(deltas.written) deltas (\(deltas.bytes) bytes); " : ""
        return "\(head): \(added) added, \(modified) changed, \(removed) removed; "
            + "\(objectsWritten) objects written; \(deltaText)\(rawBytes) bytes raw, \(gzipBytes) bytes gzipped; \(elapsedMilliseconds) ms"
    }
}

/// What a publish puts in its manifest besides the entries, and how it is written.
package struct PublishOptions: Sendable {
    package var createdAt: Date
    package var sourceRevision: String?
    package var notice: String?
    package var minimumAppVersion: String?
    package var maintenanceUntil: Date?
    /// Mark the version (or the release) critical (`--critical`).
    package var critical = false
    package var reproducible = false
    package var signing: ReleaseSigning?
    package var deltaHistory = DeltaWriter.defaultHistory
    /// Publish the entries as a staged or targeted release over the channel's current default
    /// entries (`--rollout`, `--target`) instead of as its new default.
    package var release: ReleaseOptions?

    package init(createdAt: Date, sourceRevision: String? = nil, reproducible: Bool = false) {
        self.createdAt = createdAt
        self.sourceRevision = sourceRevision
        self.reproducible = reproducible
    }
}

/// The audience of a release a publish makes (`--rollout`, `--target`).
package struct ReleaseOptions: Sendable, Equatable {
    package var rolloutBasisPoints = 10_000
    package var conditions: [ReleaseCondition] = []

    package init(rolloutBasisPoints: Int = 10_000, conditions: [ReleaseCondition] = []) {
        self.rolloutBasisPoints = rolloutBasisPoints
        self.conditions = conditions
    }
}

/// One publish into a channel of a root directory, holding the root's lock from the first
/// object to the last rename.
///
/// Order: objects (then one file-system sync), deltas, the versioned manifest, `head.plist`,
/// `manifest.plist` by rename (the commit point), then its mirrors `manifest.plist.gz`,
/// `manifest.plist.br` and `manifest.json`. Killed at any instant, the channel's `manifest.plist` and `head.plist` name
/// only objects and deltas that are complete on disk. Objects are the root's, shared by every
/// channel; the rest is the channel's (``PublishedLayout/channelRoot(_:_:)``).
package final class PublishSession {
    package let root: String
    /// The channel published into, and its directory.
    package let channel: String
    package let channelDir: String
    private let lockFD: Int32
    /// `manifest.plist` as found, if any, and its bytes (a ``SignedManifest`` when signed).
    package let current: Manifest?
    package let currentBytes: [UInt8]?
    /// The highest version ever published here (current or under `manifests/`).
    package let highestVersion: Int
    private var objectsWritten = 0
    /// New entries in `objects/` not yet made durable: its fsync is paired with the manifests
    /// directory's, before the commit point.
    private var objectsDirectoryDirty = false
    /// `objects/` was made by this publish: no object can be there yet, so none is looked for.
    private let objectsWereAbsent: Bool
    /// The brotli quality of `manifest.plist.br` and the deltas' `.br`; nil writes none.
    package var brotliQuality: Int32?
    /// Versioned manifests read ahead for the deltas (``ManifestPrefetch``).
    private let prefetched: ManifestPrefetch?

    package static let lockName = PublishedLayout.builderLock

    /// `objectsAsLeft` is the stamp of `objects/` as the last completed build left it (its build
    /// cache's): a folder with that stamp has had no entry added since, so no temporary file of
    /// a killed build is looked for among its tens of thousands of objects.
    package init(root: String, channel: String = Channel.production, prefetched: ManifestPrefetch? = nil, objectsAsLeft: FileStamp? = nil) throws {
        self.root = root
        self.channel = channel
        channelDir = PublishedLayout.channelRoot(root, channel)
        self.prefetched = prefetched
        objectsWereAbsent = !FileIO.exists(PublishedLayout.path(root, PublishedLayout.objects))
        try FileIO.makeDirectory(PublishedLayout.path(root, PublishedLayout.objects))
        lockFD = try Self.lock(root: root)
        Self.removeTemporaryFiles(root: root, channelDir: channelDir, objectsAsLeft: objectsAsLeft)
        do {
            if let read = prefetched?.take(path: PublishedLayout.path(channelDir, PublishedLayout.manifest)) {
                (current, currentBytes) = (read.manifest, read.bytes)
            } else {
                (current, currentBytes) = try Self.readCurrent(channelDir)
            }
        } catch {
            close(lockFD)
            throw error
        }
        var highest = current?.version ?? 0
        // A channel's directories are made by its first commit: a failed publish leaves none.
        for name in (try? FileIO.list(PublishedLayout.path(channelDir, PublishedLayout.manifests))) ?? [] {
            if let v = PublishedLayout.version(ofManifestFile: name) { highest = max(highest, v) }
        }
        highestVersion = highest
    }

    deinit { close(lockFD) }

    /// Temporary files left by a build that was killed are never referenced: removed. Creating
    /// one changes its folder's modification time, so `objects/` is listed only when its stamp
    /// is not `objectsAsLeft` (listing 40,000 objects took about 15 ms of a rebuild).
    static func removeTemporaryFiles(root: String, channelDir: String, objectsAsLeft: FileStamp? = nil) {
        let objects = PublishedLayout.path(root, PublishedLayout.objects)
        let unchanged = objectsAsLeft != nil && FileStamp.read(objects) == objectsAsLeft
        let dirs = [root, channelDir, PublishedLayout.path(channelDir, PublishedLayout.manifests), PublishedLayout.path(channelDir, PublishedLayout.deltas)]
            + (unchanged ? [] : [objects])
        for dir in Set(dirs) {
            for name in (try? FileIO.list(dir, prefix: ".tmp-")) ?? [] where unlink(dir + "/" + name) != 0 && (errno == EISDIR || errno == EPERM) {
                FileIO.removeFolder(dir + "/" + name)  // a staged `objects/` (``writeStaged(_:)``)
            }
        }
    }

    /// The channel's `manifest.plist` and its bytes; nil for a first publish.
    static func readCurrent(_ dir: String) throws -> (Manifest?, [UInt8]?) {
        let path = PublishedLayout.path(dir, PublishedLayout.manifest)
        guard FileIO.exists(path) else { return (nil, nil) }
        do {
            let bytes = try FileIO.read(path)
            return (try Manifest.quicklyDecoded(bytes) ?? Manifest(bytes: bytes), bytes)
        } catch {
            throw BuildError("\(path) is unreadable (\(error)); restore it from \(dir)/manifests/ or delete it")
        }
    }

    /// Takes the output's lock (the descriptor holds it until closed); busy is an error.
    package static func lock(root: String) throws -> Int32 {
        guard let fd = try FileIO.tryLock(root + "/" + lockName) else {
            throw BuildError("another folio-build is publishing to \(root)/ right now; wait for it and run again")
        }
        return fd
    }

    /// Above this many new files one `syncfs` is cheaper than an fsync each.
    package static let perFileSyncLimit = FileIO.perFileSyncLimit

    /// A file `writeObjects` writes into `objects/`: bytes, or a source file copied in.
    typealias ObjectFile = (name: String, bytes: [UInt8], copy: (path: String, size: Int, sha256: String)?)

    /// Writes every object (and gzip variant) not already present, then makes them durable: an
    /// fsync each for a few files, one file-system sync for many.
    package func writeObjects(_ artifacts: [Artifact]) throws {
        let dir = try FileIO.Directory(PublishedLayout.path(root, PublishedLayout.objects))
        var seen = Set<String>()
        var pending: [ObjectFile] = []
        // By index: a loop over the artifacts copied each of 20,000 to look at one field.
        for i in artifacts.indices where artifacts[i].reused == nil {
            let a = artifacts[i]
            let name = a.sha256 + "." + a.objectExtension
            guard seen.insert(name).inserted else { continue }
            if objectsWereAbsent || !dir.contains(name) { pending.append((name, a.bytes, a.sourceFile.map { ($0.path, $0.size, a.sha256) })) }
            if let gz = a.gzip, objectsWereAbsent || a.replaceGzip || !dir.contains(name + ".gz") { pending.append((name + ".gz", gz, nil)) }
            if let br = a.brotli, objectsWereAbsent || a.replaceBrotli || !dir.contains(name + ".br") { pending.append((name + ".br", br, nil)) }
        }
        guard !pending.isEmpty else { return }
        let perFile = pending.count <= Self.perFileSyncLimit
        let staged = !perFile && objectsWereAbsent ? try writeStaged(pending) : false
        if !staged { try write(pending, into: dir, sync: perFile) }
        objectsWritten = pending.count
        if !perFile { try FileIO.syncFileSystem(containing: dir.path) }
        objectsDirectoryDirty = true
    }

    /// Writes `files` into `dir`, each complete under its name or not there, on all cores (the
    /// writes and fsyncs of different files overlap).
    private func write(_ files: [ObjectFile], into dir: FileIO.Directory, sync: Bool) throws {
        let written = Parallel.map(files) { file in
            Result { () throws(FileError) in
                if let copy = file.copy {
                    try dir.copyNew(from: copy.path, name: file.name, size: copy.size, sha256: copy.sha256, sync: sync)
                } else {
                    try dir.writeNew(file.bytes, name: file.name, sync: sync)
                }
            }
        }
        for result in written { try result.get() }
    }

    /// A first publish's many objects: created straight under their names in a new folder,
    /// which then takes the place of the empty `objects/` in one rename (no unnamed file and
    /// link per object: 20,000 files in about 170 instead of 300 ms of a core on tmpfs). The
    /// file-system sync that follows covers the rename. A build killed before the rename leaves
    /// only the folder, never referenced, which the next publish removes. False (nothing
    /// written) when the folder cannot be made or cannot replace `objects/`.
    private func writeStaged(_ files: [ObjectFile]) throws -> Bool {
        let staged = PublishedLayout.path(root, ".tmp-objects-\(getpid())")
        FileIO.removeFolder(staged)
        guard mkdir(staged, 0o755) == 0, let dir = try? FileIO.Directory(staged) else { return false }
        let written = Parallel.map(files) { file in
            Result { () throws(FileError) in
                if let copy = file.copy {
                    try dir.createCopy(from: copy.path, name: file.name, size: copy.size, sha256: copy.sha256)
                } else {
                    try dir.create(file.bytes, name: file.name)
                }
            }
        }
        do {
            for result in written { try result.get() }
        } catch {
            FileIO.removeFolder(staged)
            throw error
        }
        guard rename(staged, PublishedLayout.path(root, PublishedLayout.objects)) == 0 else {
            FileIO.removeFolder(staged)
            return false
        }
        return true
    }

    /// Makes the new entries of `objects/` (and, with `manifests`, of `manifests/`) durable;
    /// the two directory fsyncs run at once, so they wait for one journal commit, not two.
    private func syncDirectories(manifests: Bool) throws {
        let (objects, root, channelDir) = (objectsDirectoryDirty, self.root, self.channelDir)
        let (a, b) = Parallel.both(
            { Result { () throws(FileError) in if objects { try FileIO.syncDirectory(PublishedLayout.path(root, PublishedLayout.objects)) } } },
            { Result { () throws(FileError) in if manifests { try FileIO.syncDirectory(PublishedLayout.path(channelDir, PublishedLayout.manifests)) } } })
        try a.get()
        try b.get()
        objectsDirectoryDirty = false
    }

    /// Publishes a manifest for `artifacts` (see ``publish(manifest:objects:options:)``): as the
    /// channel's new default entries, or with `options.release` as a release over them.
    package func publish(_ artifacts: [Artifact], _ options: PublishOptions) throws -> PublishResult {
        // A closure, not the key path `\.entry`: that copied each artifact first (5 ms for 20,000).
        let manifest = try proposed(artifacts.map { $0.entry }, options)
        var byHash: [String: [UInt8]] = [:]
        // By index: copying each of 20,000 artifacts to look at two fields took 5 ms.
        for i in artifacts.indices where artifacts[i].reused == nil && artifacts[i].sourceFile == nil {
            byHash[artifacts[i].sha256] = artifacts[i].bytes
        }
        return try publish(manifest: manifest, objects: byHash, options: options)
    }

    /// The next version's manifest with the current one's history, channel and cache hints.
    package func nextManifest(entries: [Manifest.Entry], _ options: PublishOptions) -> Manifest {
        // The publish history continues; a first publish (or one after a folio-build that did not
        // record histories) starts one.
        let history = current?.history
            ?? PublishHistory.make(createdAt: options.createdAt, entries: entries.sorted { $0.path < $1.path }, reproducible: options.reproducible)
        var m = Manifest(
            version: highestVersion + 1, createdAt: options.createdAt, sourceRevision: options.sourceRevision, history: history,
            notice: options.notice, expiresAt: options.signing?.expiry(from: options.signing?.now ?? options.createdAt), entries: entries)
        m.channel = channel == Channel.production ? nil : channel
        m.maintenanceUntil = options.maintenanceUntil
        m.minimumAppVersion = options.minimumAppVersion
        m.critical = options.critical
        return m
    }

    /// The manifest a build proposes: its entries as the new defaults (and no releases), or as a
    /// release over the current defaults that replaces any release for the same audience.
    package func proposed(_ entries: [Manifest.Entry], _ options: PublishOptions) throws -> Manifest {
        var m = nextManifest(entries: entries, options)
        guard let audience = options.release else { return m }
        guard let current else {
            throw BuildError("--rollout and --target publish a release over the channel's current version, and \(channel) has none yet: publish once without them")
        }
        (m.entries, m.cacheHints, m.minimumAppVersion, m.critical) = (current.entries, current.cacheHints, current.minimumAppVersion, current.critical)
        var release = Release(
            id: m.version, rolloutBasisPoints: audience.rolloutBasisPoints, conditions: audience.conditions, from: current.entries, to: entries)
        guard !release.entries.isEmpty || !release.removed.isEmpty else {
            throw BuildError("nothing to release: the content equals \(channel)'s version \(current.version); publish a change with --rollout")
        }
        release.critical = options.critical
        release.minimumAppVersion = options.minimumAppVersion
        // The same release published again keeps its id (and so every install's bucket) and its halt.
        if let same = current.releases.first(where: { $0.sameAudience(as: release) && $0.entries == release.entries && $0.removed == release.removed }) {
            release.id = same.id
            release.halted = same.halted
        }
        m.releases = [release] + current.releases.filter { !$0.sameAudience(as: release) }
        return m
    }

    /// Publishes `proposed` unless its content equals the current manifest's; always repairs the
    /// current manifest's mirrors. With `options.signing`, the manifest is signed, and a version
    /// whose content is unchanged is published again when its signature must be renewed (see
    /// ``ReleaseSigning/needsResigning(_:)``). Deltas are written from the last `deltaHistory`
    /// versions (none, and no `head.plist`, with 0); `objects` are new objects' bytes by SHA-256.
    package func publish(manifest proposed: Manifest, objects: [String: [UInt8]], options: PublishOptions) throws -> PublishResult {
        let signing = options.signing
        var manifest = proposed
        let contentChanged = current.map { !$0.sameContent(as: manifest) || $0.history == nil } ?? true
        let signingChanged = signing.map { $0.needsResigning(currentBytes) } ?? (current?.expiresAt != nil)
        let changed = contentChanged || signingChanged
        if let current, !changed { manifest = current }
        // The counts are made on another thread while the manifest is encoded.
        let (summarized, current, objectCount, isSigned) = (manifest, current, objectsWritten, signing != nil)
        let summary = Pending {
            Self.summarize(summarized, current: current, objectsWritten: objectCount, changed: changed, contentChanged: contentChanged, signed: isSigned)
        }
        // Nothing changed and every mirror was written after the manifest: nothing to repair.
        if !changed, mirrorsAreCurrent(signed: manifest.expiresAt != nil, head: options.deltaHistory > 0) { return summary.value }
        // The bytes served as manifest.plist: the plain manifest, or the signed one.
        let signed = changed ? signing?.sign(manifest) : nil
        let plist = changed ? (signed?.bytes ?? manifest.binaryPlist) : currentBytes ?? manifest.binaryPlist
        var result = summary.value
        // The other mirrors are made on a thread of their own while the gzip mirror and the
        // deltas are made and the version is written (without waiting for the gzip mirror: they
        // filled the second core while the first waited, 30 ms of a one-edit rebuild).
        let (quality, expires, made, channelDir) = (brotliQuality, manifest.expiresAt != nil, manifest, channelDir)
        let mirrors = Pending {
            // The mirror this builder wrote for the current manifest: taken only while its record
            // names the current manifest.plist (read after the commit point, it is not).
            let previousJSON = current.flatMap { current in ManifestMirrorRecord.currentJSON(channelDir: channelDir).map { ($0, current) } }
            return Result { () throws(PlistError) in
                try ManifestMirrors(manifest: made, plist: plist, signed: signed, expires: expires, brotliQuality: quality, previous: previousJSON)
            }
        }
        let sha = ContentHash.sha256Hex(plist)
        let (gzip, deltas, prepared) = try gzipAndPrepare(manifest, plist, sha, objects: objects, history: options.deltaHistory, changed: changed)
        let withHead = options.deltaHistory > 0
        result.deltas = try writeVersion(changed ? manifest : nil, (plist, sha), gzipSize: gzip.count, deltas, prepared, withHead: withHead)
        try writeMirrors(manifest, (plist, sha), mirrors: try mirrors.value.get(), gzip: gzip, changed: changed, deltas: deltas, withHead: withHead)
        return result
    }

    /// The deltas into a changed `manifest` and the commit; for an unchanged one (nil), the
    /// objects made durable if any was written.
    private func writeVersion(
        _ manifest: Manifest?, _ served: (plist: [UInt8], sha: String), gzipSize: Int, _ deltas: DeltaWriter, _ prepared: DeltaWriter.Prepared?,
        withHead: Bool
    ) throws -> DeltaWriter.Summary {
        guard let manifest else {
            if objectsDirectoryDirty { try syncDirectories(manifests: false) }
            return DeltaWriter.Summary()
        }
        let summary = try prepared.map { try deltas.write($0, targetGzipSize: gzipSize) } ?? DeltaWriter.Summary()
        let head = withHead ? deltas.head(for: manifest, bytes: served.plist, sha256: served.sha, gzipSize: gzipSize) : nil
        try commit(manifest, served.plist, head: head)
        deltas.recordSHAs(version: manifest.version, sha256: served.sha)
        return summary
    }

    /// The manifest gzipped (level 9, and 6 past 128 KB: a 20,000-entry manifest in a third of
    /// the time) while the deltas from the last `history` versions into a `changed` one are made
    /// (they need its size only to judge themselves); the writer also makes the head.
    private func gzipAndPrepare(
        _ manifest: Manifest, _ plist: [UInt8], _ sha: String, objects: [String: [UInt8]], history: Int, changed: Bool
    ) throws -> ([UInt8], DeltaWriter, DeltaWriter.Prepared?) {
        let (channelDir, currentBytes, prefetched) = (channelDir, currentBytes, prefetched)
        let (gzip, (deltas, prepared)) = Parallel.both(
            { Result { () throws(GzipError) in
                let chunks = prefetched?.gzipMirror(path: PublishedLayout.path(channelDir, PublishedLayout.manifestGzip))
                return try Self.gzipManifest(plist, current: currentBytes, channelDir: channelDir, prefetched: chunks) } },
            { () -> (DeltaWriter, DeltaWriter.Prepared?) in
                let read = history > 0 ? prefetched?.recentVersions() ?? [:] : [:]
                var deltas = DeltaWriter(root: channelDir, objectsRoot: root, history: max(0, history), version: manifest.version, prefetched: read)
                deltas.brotliQuality = brotliQuality
                guard changed, history > 0 else { return (deltas, nil) }
                let previous = current.flatMap { current in currentBytes.map { (current, $0) } }
                let store = prefetched?.printStore()
                return (deltas, deltas.prepare(target: manifest, targetBytes: plist, targetSHA256: sha, objects: objects, previous: previous, store: store))
            })
        return (try gzip.get(), deltas, prepared)
    }

    /// `plist` gzipped as ``Gzip/compress(_:level:)`` does it, taking the chunks whose bytes did
    /// not change from the gzip mirror in `channelDir` when that is one of the `current`
    /// manifest's bytes (``GzipChunks``): a one-entry edit of a 20,000-entry manifest deflates a
    /// few of its chunks. The same bytes either way.
    /// `prefetched` are the mirror's chunks found already (``ManifestPrefetch``).
    static func gzipManifest(
        _ plist: [UInt8], current currentBytes: [UInt8]?, channelDir: String, prefetched: GzipChunks? = nil
    ) throws(GzipError) -> [UInt8] {
        let level = Steps.gzipLevel(plist.count)
        guard plist.count > Gzip.chunkSize, let currentBytes else { return try Gzip.compress(plist, level: level) }
        func recovered() -> GzipChunks? {
            if let prefetched, prefetched.level == level, prefetched.input == currentBytes { return prefetched }
            guard let mirror = try? FileIO.read(PublishedLayout.path(channelDir, PublishedLayout.manifestGzip)) else { return nil }
            return GzipChunks(recovering: mirror, of: currentBytes, level: level)
        }
        guard let previous = recovered() else { return try Gzip.compress(plist, level: level) }
        return try Gzip.compress(plist, level: level, reusing: previous).member
    }

    /// The counts of a publish: what changed between the current manifest and `manifest`, as an
    /// install on each one's newest release sees it, and the signing note.
    private static func summarize(
        _ manifest: Manifest, current: Manifest?, objectsWritten: Int, changed: Bool, contentChanged: Bool, signed: Bool
    ) -> PublishResult {
        var result = PublishResult(previousVersion: current?.version, version: manifest.version, changed: changed)
        if changed, let current {
            if !signed, current.expiresAt != nil {
                result.signingNote = "unsigned; the previous version was signed"
            } else if signed, !contentChanged {
                result.signingNote = current.expiresAt == nil ? "now signed" : "signature renewed"
            }
        }
        result.objectsWritten = objectsWritten
        func newest(_ m: Manifest) -> Manifest { m.applying(release: m.releases.first { !$0.halted }?.id) }
        let view = newest(manifest)
        for e in view.entries {
            result.rawBytes += e.size
            result.gzipBytes += e.gzipSize ?? e.size
        }
        if contentChanged {
            (result.added, result.modified, result.removed) = Self.changes(from: current.map(newest)?.entries ?? [], to: view.entries)
        }
        return result
    }

    /// How many paths of `new` are not in `old`, are there with another SHA-256, and how many
    /// of `old` are not in `new` (a path listed twice counts once, as its first entry). Entries
    /// in path order (as manifests hold them) are merged; others counted through a dictionary.
    static func changes(from old: [Manifest.Entry], to new: [Manifest.Entry]) -> (added: Int, modified: Int, removed: Int) {
        // By index: pairs of entries were copies of each.
        func strictlySorted(_ list: [Manifest.Entry]) -> Bool { list.indices.dropFirst().allSatisfy { list[$0 - 1].path < list[$0].path } }
        guard strictlySorted(old), strictlySorted(new) else {
            let byPath = Dictionary(old.map { ($0.path, $0.sha256) }, uniquingKeysWith: { a, _ in a })
            var (added, modified) = (0, 0)
            for e in new {
                switch byPath[e.path] {
                case nil: added += 1
                case let sha? where sha != e.sha256: modified += 1
                default: break
                }
            }
            let paths = Set(new.map(\.path))
            return (added, modified, byPath.keys.count { !paths.contains($0) })
        }
        var (added, modified, matched, i) = (0, 0, 0, 0)
        for e in new {
            while i < old.count, old[i].path < e.path { i += 1 }
            if i < old.count, old[i].path == e.path {
                matched += 1
                if old[i].sha256 != e.sha256 { modified += 1 }
                i += 1
            } else {
                added += 1
            }
        }
        return (added, modified, old.count - matched)
    }

    /// The versioned manifest, the head, then the commit point: `manifest.plist` becomes the
    /// (durable) versioned manifest by rename.
    private func commit(_ manifest: Manifest, _ plist: [UInt8], head: DeltaHead?) throws {
        let versioned = PublishedLayout.path(channelDir, PublishedLayout.versionedManifest(manifest.version))
        try FileIO.makeDirectory(PublishedLayout.path(channelDir, PublishedLayout.manifests))
        try FileIO.writeAtomically(plist, to: versioned)
        try syncDirectories(manifests: true)
        // The head before the commit point: it names only a version complete on disk, and an
        // edge that reloads on the new manifest.plist finds the head that goes with it.
        let headPath = PublishedLayout.path(channelDir, PublishedLayout.head)
        if let head { try FileIO.writeAtomically(head.bytes, to: headPath) } else { unlink(headPath) }
        let current = PublishedLayout.path(channelDir, PublishedLayout.manifest)
        if !(try FileIO.replaceWithLink(to: versioned, at: current)) {
            try FileIO.writeAtomically(plist, to: current)
        }
        try FileIO.syncDirectory(channelDir)
        // A channel's first publish made its directories: their entries must be durable too.
        if channelDir != root {
            try FileIO.syncDirectory(FileIO.parent(of: channelDir))
            try FileIO.syncDirectory(root)
        }
    }

    /// Mirrors, after the commit point: the key list (the manifest carries its own copy), gzip,
    /// brotli, JSON, and the head of an unchanged version (repaired if a build was killed before
    /// writing it).
    private func writeMirrors(
        _ manifest: Manifest, _ served: (plist: [UInt8], sha: String), mirrors: ManifestMirrors, gzip: [UInt8], changed: Bool, deltas: DeltaWriter,
        withHead: Bool
    ) throws {
        let (plist, sha) = served
        if let keyList = mirrors.keyList {
            try writeMirror(keyList, to: PublishedLayout.path(channelDir, PublishedLayout.keyList))
        }
        let headPath = PublishedLayout.path(channelDir, PublishedLayout.head)
        if !withHead {
            unlink(headPath)
        } else if !changed {
            try writeMirror(deltas.head(for: manifest, bytes: plist, sha256: sha, gzipSize: gzip.count).bytes, to: headPath)
        }
        deltas.prune(currentBytes: plist, sha256: sha)
        try writeMirror(gzip, to: PublishedLayout.path(channelDir, PublishedLayout.manifestGzip), new: changed)
        let brotliPath = PublishedLayout.path(channelDir, PublishedLayout.manifestBrotli)
        if let brotli = mirrors.brotli(smallerThan: gzip.count) { try writeMirror(brotli, to: brotliPath, new: changed) } else { unlink(brotliPath) }
        try writeMirror(mirrors.json, to: PublishedLayout.path(channelDir, PublishedLayout.manifestJSON), new: changed)
        ManifestMirrorRecord.save(channelDir: channelDir)
    }

    /// Whether the mirrors of `manifest.plist` (gzip, brotli, JSON, the key list of a signed one) were
    /// all written after it, and the head is there: a build killed between the commit point and its
    /// mirrors leaves one older, and the next build rewrites it.
    private func mirrorsAreCurrent(signed: Bool, head: Bool) -> Bool {
        guard let manifest = FileStamp.read(PublishedLayout.path(channelDir, PublishedLayout.manifest)) else { return false }
        // The head is written just before the commit point, so only its presence counts.
        if head && !FileIO.exists(PublishedLayout.path(channelDir, PublishedLayout.head)) { return false }
        let names = [PublishedLayout.manifestGzip, PublishedLayout.manifestJSON] + (signed ? [PublishedLayout.keyList] : [])
        func current(_ mirror: FileStamp) -> Bool { (mirror.mtimeSeconds, mirror.mtimeNanos) >= (manifest.mtimeSeconds, manifest.mtimeNanos) }
        // The brotli mirror is there only where smaller than the gzip one: an older one is stale.
        if let br = FileStamp.read(PublishedLayout.path(channelDir, PublishedLayout.manifestBrotli)), !current(br) { return false }
        return names.allSatisfy { name in FileStamp.read(PublishedLayout.path(channelDir, name)).map(current) ?? false }
    }

    /// Writes a derived file only when its bytes differ, so an unchanged build touches nothing;
    /// a mirror of a `new` manifest (another version) differs, and is not read first.
    private func writeMirror(_ bytes: [UInt8], to path: String, new: Bool = false) throws {
        if !new, let existing = try? FileIO.read(path), existing == bytes { return }
        // Derived and rewritten by every build, so not worth an fsync: lost in a crash, the next
        // build repairs it.
        try FileIO.writeAtomically(bytes, to: path, sync: false)
    }
}

/// The channel's current `manifest.plist`, read and decoded on a thread of its own while the
/// build parses and compiles (a 20,000-entry manifest takes about 15 ms to decode), for the
/// ``PublishSession`` made later; then the versioned manifests the new version's deltas start
/// from (``DeltaWriter``: ten files of 2.6 MB each for 20,000 entries, 15 ms to read), and the
/// chunks of its gzip mirror (every one inflated to check it, 15 ms of a core) and the deltas'
/// prints kept by the last builds (5 MB). Read before
/// the output's lock is taken, so each is used only when its file's stamp is still the one read;
/// otherwise it is read again.
package final class ManifestPrefetch: Sendable {
    private let current = Pending<(stamp: FileStamp, bytes: [UInt8], manifest: Manifest)?>()
    /// Handed over before the gzip mirror's chunks: the deltas take longer.
    private let deltaSources = Pending<(versions: [Int: DeltaWriter.Source], prints: ManifestPrintStore?)>()
    private let gzip = Pending<(stamp: FileStamp, chunks: GzipChunks)?>()

    /// `history` is the build's `--delta-history`.
    package init(channelDir: String, history: Int = 0) {
        let path = PublishedLayout.path(channelDir, PublishedLayout.manifest)
        OSThread.spawn(stackSize: 8 << 20) { [self] in
            let read = Self.read(path)
            current.fulfil(read)
            if let read, history > 0 {
                let recent = Self.readVersions(channelDir, upTo: read.manifest.version, history: history, current: (read.stamp, read.bytes))
                // A cache whose records check themselves: read before the lock like the rest.
                deltaSources.fulfil((recent, ManifestPrintStore(channelDir: channelDir)))
            } else {
                deltaSources.fulfil(([:], nil))
            }
            gzip.fulfil(read.flatMap { Self.readGzipMirror(channelDir, of: $0.bytes) })
        }
    }

    /// The chunks of the channel's `manifest.plist.gz` when it is the gzip mirror of `bytes`
    /// (``GzipChunks/init(recovering:of:level:)``: every chunk inflated and compared), with its stamp.
    private static func readGzipMirror(_ channelDir: String, of bytes: [UInt8]) -> (stamp: FileStamp, chunks: GzipChunks)? {
        let path = PublishedLayout.path(channelDir, PublishedLayout.manifestGzip)
        guard bytes.count > Gzip.chunkSize, let stamp = FileStamp.read(path), let member = try? FileIO.read(path), FileStamp.read(path) == stamp,
            let chunks = GzipChunks(recovering: member, of: bytes, level: Steps.gzipLevel(bytes.count))
        else { return nil }
        return (stamp, chunks)
    }

    private static func read(_ path: String) -> (stamp: FileStamp, bytes: [UInt8], manifest: Manifest)? {
        guard let before = FileStamp.read(path), let bytes = try? FileIO.read(path), FileStamp.read(path) == before,
            let manifest = Manifest.quicklyDecoded(bytes)
        else { return nil }
        return (before, bytes, manifest)
    }

    /// The last `history` versioned manifests up to `version` by version, with their stamps; the
    /// current manifest's own file (a link to the newest) is not read again.
    private static func readVersions(
        _ channelDir: String, upTo version: Int, history: Int, current: (stamp: FileStamp, bytes: [UInt8])
    ) -> [Int: DeltaWriter.Source] {
        var out: [Int: DeltaWriter.Source] = [:]
        for v in max(1, version + 1 - history)...max(1, version) {
            let path = PublishedLayout.path(channelDir, PublishedLayout.versionedManifest(v))
            guard let stamp = FileStamp.read(path) else { continue }
            if stamp == current.stamp {
                out[v] = DeltaWriter.Source(stamp: stamp, bytes: current.bytes)
            } else if let bytes = try? FileIO.read(path), FileStamp.read(path) == stamp {
                out[v] = DeltaWriter.Source(stamp: stamp, bytes: bytes)
            }
        }
        return out
    }

    /// The manifest read, when the file at `path` still has the stamp it had then; waits for
    /// the read to finish.
    func take(path: String) -> (bytes: [UInt8], manifest: Manifest)? {
        guard let read = current.value, FileStamp.read(path) == read.stamp else { return nil }
        return (read.bytes, read.manifest)
    }

    /// The versioned manifests read, by version; waits for the reads to finish.
    func recentVersions() -> [Int: DeltaWriter.Source] { deltaSources.value.versions }

    /// The delta prints kept by the last builds (``ManifestPrintStore``), when read; waits for the
    /// reads to finish.
    func printStore() -> ManifestPrintStore? { deltaSources.value.prints }

    /// The gzip mirror's chunks, when the file at `path` still has the stamp it had then; waits
    /// for the reads to finish.
    func gzipMirror(path: String) -> GzipChunks? {
        guard let read = gzip.value, FileStamp.read(path) == read.stamp else { return nil }
        return read.chunks
    }
}
