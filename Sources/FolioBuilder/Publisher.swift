import FolioPlist
import FolioPublished
import FolioSupport
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

/// One publish into a root directory, holding its lock from the first object to the last rename.
///
/// Order: objects (then one file-system sync), deltas, the versioned manifest, `head.plist`,
/// `manifest.plist` by rename (the commit point), then its mirrors `manifest.plist.gz`,
/// `manifest.plist.br` and `manifest.json`. Killed at any instant, the root's `manifest.plist` and `head.plist` name
/// only objects and deltas that are complete on disk.
package final class PublishSession {
    package let root: String
    private let lockFD: Int32
    /// `manifest.plist` as found, if any, and its bytes (a ``SignedManifest`` when signed).
    package let current: Manifest?
    private let currentBytes: [UInt8]?
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

    package static let lockName = ".folio-build.lock"

    package init(root: String) throws {
        self.root = root
        objectsWereAbsent = !FileIO.exists(PublishedLayout.path(root, PublishedLayout.objects))
        try FileIO.makeDirectory(PublishedLayout.path(root, PublishedLayout.objects))
        try FileIO.makeDirectory(PublishedLayout.path(root, PublishedLayout.manifests))
        lockFD = try Self.lock(root: root)
        // Temporary files left by a build that was killed are never referenced: remove them.
        for dir in [root, PublishedLayout.path(root, PublishedLayout.objects), PublishedLayout.path(root, PublishedLayout.manifests),
                    PublishedLayout.path(root, PublishedLayout.deltas)] {
            for name in (try? FileIO.list(dir, prefix: ".tmp-")) ?? [] {
                unlink(dir + "/" + name)
            }
        }
        let manifestPath = PublishedLayout.path(root, PublishedLayout.manifest)
        if FileIO.exists(manifestPath) {
            do {
                let bytes = try FileIO.read(manifestPath)
                current = try Manifest(bytes: bytes)
                currentBytes = bytes
            } catch {
                close(lockFD)
                throw BuildError("\(manifestPath) is unreadable (\(error)); restore it from \(root)/manifests/ or delete it")
            }
        } else {
            current = nil
            currentBytes = nil
        }
        var highest = current?.version ?? 0
        for name in try FileIO.list(PublishedLayout.path(root, PublishedLayout.manifests)) {
            if let v = PublishedLayout.version(ofManifestFile: name) { highest = max(highest, v) }
        }
        highestVersion = highest
    }

    deinit { close(lockFD) }

    /// Takes the output's lock (the descriptor holds it until closed); busy is an error.
    package static func lock(root: String) throws -> Int32 {
        guard let fd = try FileIO.tryLock(root + "/" + lockName) else {
            throw BuildError("another folio-build is publishing to \(root)/ right now; wait for it and run again")
        }
        return fd
    }

    /// Above this many new files one `syncfs` is cheaper than an fsync each.
    package static let perFileSyncLimit = 16

    /// Writes every object (and gzip variant) not already present, then makes them durable: an
    /// fsync each for a few files, one file-system sync for many.
    package func writeObjects(_ artifacts: [Artifact]) throws {
        let dir = try FileIO.Directory(PublishedLayout.path(root, PublishedLayout.objects))
        var seen = Set<String>()
        var pending: [(name: String, bytes: [UInt8])] = []
        for a in artifacts where a.reused == nil && seen.insert(a.sha256 + "." + a.objectExtension).inserted {
            let name = a.sha256 + "." + a.objectExtension
            if objectsWereAbsent || !dir.contains(name) { pending.append((name, a.bytes)) }
            if let gz = a.gzip, objectsWereAbsent || a.replaceGzip || !dir.contains(name + ".gz") { pending.append((name + ".gz", gz)) }
            if let br = a.brotli, objectsWereAbsent || a.replaceBrotli || !dir.contains(name + ".br") { pending.append((name + ".br", br)) }
        }
        guard !pending.isEmpty else { return }
        let perFile = pending.count <= Self.perFileSyncLimit
        // On all cores: the writes and fsyncs of different files overlap.
        let written = Parallel.map(pending) { file in
            Result { () throws(FileError) in try dir.writeNew(file.bytes, name: file.name, sync: perFile) }
        }
        for result in written { try result.get() }
        objectsWritten = pending.count
        if !perFile { try FileIO.syncFileSystem(containing: dir.path) }
        objectsDirectoryDirty = true
    }

    /// Makes the new entries of `objects/` (and, with `manifests`, of `manifests/`) durable;
    /// the two directory fsyncs run at once, so they wait for one journal commit, not two.
    private func syncDirectories(manifests: Bool) throws {
        let (objects, root) = (objectsDirectoryDirty, self.root)
        let (a, b) = Parallel.both(
            { Result { () throws(FileError) in if objects { try FileIO.syncDirectory(PublishedLayout.path(root, PublishedLayout.objects)) } } },
            { Result { () throws(FileError) in if manifests { try FileIO.syncDirectory(PublishedLayout.path(root, PublishedLayout.manifests)) } } })
        try a.get()
        try b.get()
        objectsDirectoryDirty = false
    }

    /// Publishes a manifest for `artifacts` unless it would equal the current one; always
    /// repairs the current manifest's mirrors. With `signing`, the manifest is signed, and a
    /// version whose content is unchanged is published again when its signature must be renewed
    /// (see ``ReleaseSigning/needsResigning(_:)``). Deltas are written from the last
    /// `deltaHistory` versions (none, and no `head.plist`, with 0).
    package func publish(
        _ artifacts: [Artifact], createdAt: Date, sourceRevision: String?, notice: String? = nil, minimumAppVersion: String? = nil,
        maintenanceUntil: Date? = nil, reproducible: Bool, signing: ReleaseSigning? = nil, deltaHistory: Int = DeltaWriter.defaultHistory
    ) throws -> PublishResult {
        let entries = artifacts.map(\.entry)
        // The publish history continues; a first publish (or one after a folio-build that did not
        // record histories) starts one.
        let history = current?.history
            ?? PublishHistory.make(createdAt: createdAt, entries: entries.sorted { $0.path < $1.path }, reproducible: reproducible)
        var manifest = Manifest(
            version: highestVersion + 1, createdAt: createdAt, sourceRevision: sourceRevision, history: history, notice: notice,
            expiresAt: signing?.expiry(from: signing?.now ?? createdAt), entries: entries)
        manifest.minimumAppVersion = minimumAppVersion
        manifest.maintenanceUntil = maintenanceUntil
        let contentChanged = current.map { !$0.sameContent(as: manifest) || $0.history == nil } ?? true
        let signingChanged = signing.map { $0.needsResigning(currentBytes) } ?? (current?.expiresAt != nil)
        let changed = contentChanged || signingChanged
        if let current, !changed { manifest = current }

        var result = PublishResult(previousVersion: current?.version, version: manifest.version, changed: changed)
        if changed, let current {
            if signing == nil, current.expiresAt != nil {
                result.signingNote = "unsigned; the previous version was signed"
            } else if signing != nil, !contentChanged {
                result.signingNote = current.expiresAt == nil ? "now signed" : "signature renewed"
            }
        }
        result.objectsWritten = objectsWritten
        let old = Dictionary(uniqueKeysWithValues: (current?.entries ?? []).map { ($0.path, $0.sha256) })
        for e in manifest.entries {
            result.rawBytes += e.size
            result.gzipBytes += e.gzipSize ?? e.size
            if !contentChanged { continue }
            switch old[e.path] {
            case nil: result.added += 1
            case let sha? where sha != e.sha256: result.modified += 1
            default: break
            }
        }
        if contentChanged {
            let paths = Set(manifest.entries.map(\.path))
            result.removed = old.keys.count { !paths.contains($0) }
        }

        // Nothing changed and every mirror was written after the manifest: nothing to repair.
        if !changed, mirrorsAreCurrent(signed: manifest.expiresAt != nil, head: deltaHistory > 0) { return result }
        // The bytes served as manifest.plist: the plain manifest, or the signed one.
        let signed = changed ? signing?.sign(manifest) : nil
        let value = manifest.plist
        let plist = changed ? (signed?.bytes ?? BinaryPlist.encode(value)) : currentBytes ?? BinaryPlist.encode(value)
        // The level objects get: 9, and 6 past 128 KB (a 20,000-entry manifest in a third of the time).
        let gzip = try Gzip.compress(plist, level: Steps.gzipLevel(plist.count))
        var deltas = DeltaWriter(root: root, history: max(0, deltaHistory), version: manifest.version)
        deltas.brotliQuality = brotliQuality
        let headPath = PublishedLayout.path(root, PublishedLayout.head)
        if changed {
            if deltaHistory > 0 {
                var byHash: [String: [UInt8]] = [:]
                for a in artifacts where a.reused == nil { byHash[a.sha256] = a.bytes }
                result.deltas = try deltas.write(target: manifest, targetBytes: plist, targetGzipSize: gzip.count, objects: byHash)
            }
            let versioned = PublishedLayout.path(root, PublishedLayout.versionedManifest(manifest.version))
            try FileIO.writeAtomically(plist, to: versioned)
            try syncDirectories(manifests: true)
            // The head before the commit point: it names only a version complete on disk, and an
            // edge that reloads on the new manifest.plist finds the head that goes with it.
            if deltaHistory > 0 {
                try FileIO.writeAtomically(deltas.head(for: manifest, bytes: plist, gzipSize: gzip.count).bytes, to: headPath)
            } else {
                unlink(headPath)
            }
            // The commit point: manifest.plist becomes the (durable) versioned manifest by rename.
            let current = PublishedLayout.path(root, PublishedLayout.manifest)
            if !(try FileIO.replaceWithLink(to: versioned, at: current)) {
                try FileIO.writeAtomically(plist, to: current)
            }
            try FileIO.syncDirectory(root)
        } else if objectsDirectoryDirty {
            try syncDirectories(manifests: false)
        }
        // Mirrors, after the commit point: the key list (the manifest carries its own copy), gzip, JSON,
        // and the head of an unchanged version (repaired if a build was killed before writing it).
        // Only a manifest with an expiry is signed: an unsigned one is not decoded again.
        let envelope = signed ?? (manifest.expiresAt == nil ? nil : try? SignedManifest.decode(plist))
        if let envelope {
            try writeMirror(envelope.keyList.bytes, to: PublishedLayout.path(root, PublishedLayout.keyList))
        }
        if deltaHistory > 0 {
            if !changed { try writeMirror(deltas.head(for: manifest, bytes: plist, gzipSize: gzip.count).bytes, to: headPath) }
        } else {
            unlink(headPath)
        }
        deltas.prune(currentBytes: plist)
        try writeMirror(gzip, to: PublishedLayout.path(root, PublishedLayout.manifestGzip))
        try writeBrotliMirror(plist, gzipSize: gzip.count)
        try writeMirror(JSONPlist.encode(Manifest.jsonMirror(value, signed: envelope)), to: PublishedLayout.path(root, PublishedLayout.manifestJSON))
        return result
    }

    /// Whether the mirrors of `manifest.plist` (gzip, brotli, JSON, the key list of a signed one) were
    /// all written after it, and the head is there: a build killed between the commit point and its
    /// mirrors leaves one older, and the next build rewrites it.
    private func mirrorsAreCurrent(signed: Bool, head: Bool) -> Bool {
        guard let manifest = FileStamp.read(PublishedLayout.path(root, PublishedLayout.manifest)) else { return false }
        // The head is written just before the commit point, so only its presence counts.
        if head && !FileIO.exists(PublishedLayout.path(root, PublishedLayout.head)) { return false }
        let names = [PublishedLayout.manifestGzip, PublishedLayout.manifestJSON] + (signed ? [PublishedLayout.keyList] : [])
        func current(_ mirror: FileStamp) -> Bool { (mirror.mtimeSeconds, mirror.mtimeNanos) >= (manifest.mtimeSeconds, manifest.mtimeNanos) }
        // The brotli mirror is there only where smaller than the gzip one: an older one is stale.
        if let br = FileStamp.read(PublishedLayout.path(root, PublishedLayout.manifestBrotli)), !current(br) { return false }
        return names.allSatisfy { name in FileStamp.read(PublishedLayout.path(root, name)).map(current) ?? false }
    }

    /// `manifest.plist.br`, when brotli is on and it comes out smaller than the gzip mirror (a
    /// manifest of many entries is mostly SHA-256 digests, where gzip often wins); removed
    /// otherwise. Past 256 KiB the quality drops to 1: a 20,000-entry manifest in about 12 ms.
    private func writeBrotliMirror(_ plist: [UInt8], gzipSize: Int) throws {
        let path = PublishedLayout.path(root, PublishedLayout.manifestBrotli)
        let quality = brotliQuality.map { plist.count > 256 * 1024 ? 1 : $0 }
        guard let quality, let br = try? Brotli.compress(plist, quality: quality), br.count < gzipSize else {
            unlink(path)
            return
        }
        try writeMirror(br, to: path)
    }

    /// Writes a derived file only when its bytes differ, so an unchanged build touches nothing.
    private func writeMirror(_ bytes: [UInt8], to path: String) throws {
        if let existing = try? FileIO.read(path), existing == bytes { return }
        // Derived and rewritten by every build, so not worth an fsync: lost in a crash, the next
        // build repairs it.
        try FileIO.writeAtomically(bytes, to: path, sync: false)
    }
}
