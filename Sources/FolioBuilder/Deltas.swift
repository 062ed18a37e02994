import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation
import Synchronization

/// Writes the deltas of a new version and its `head.plist` (see ``DeltaBundle``, ``DeltaHead``).
///
/// A delta is written from each of the last `history` versions to the new one, holding an edit
/// of the manifest and of every changed object whose edit, gzipped, is smaller than the object
/// gzipped; the delta as a whole is written only when it is smaller than the manifest and
/// those objects fetched whole. Every edit is applied and compared with the target's bytes
/// before it is written.
package struct DeltaWriter {
    /// The channel's directory (manifests, deltas) and the root whose `objects/` it shares.
    package var root: String
    package var objectsRoot: String
    package var history: Int
    /// The brotli quality of the deltas' `.br` variants; nil writes none.
    package var brotliQuality: Int32?

    /// The default `--delta-history`: a client up to 10 versions behind takes one delta, up to
    /// 20 behind two.
    package static let defaultHistory = 10

    /// What the deltas of one publish came to.
    package struct Summary: Sendable {
        package var written = 0
        package var bytes = 0
    }

    /// The last `history` versions below the one being published whose `manifests/<v>.plist`
    /// is on disk, with its bytes and SHA-256: the sources of its deltas, read once.
    let recent: [(version: Int, bytes: [UInt8], sha256: String)]

    /// A versioned manifest's bytes read ahead, with its file's stamp then.
    package struct Source: Sendable {
        var stamp: FileStamp
        var bytes: [UInt8]
    }

    /// A writer for deltas into `version`; `prefetched` are versioned manifests read already
    /// (``ManifestPrefetch``), used where their files' stamps have not changed.
    package init(root: String, objectsRoot: String? = nil, history: Int, version: Int, prefetched: [Int: Source] = [:]) {
        self.root = root
        self.objectsRoot = objectsRoot ?? root
        self.history = history
        let versions = history <= 0 ? [] : Array(max(1, version - history)..<version)
        let known = ManifestSHACache.load(channelDir: root)
        recent = Parallel.map(versions) { v -> (version: Int, bytes: [UInt8], sha256: String)? in
            let path = PublishedLayout.path(root, PublishedLayout.versionedManifest(v))
            let stamp = FileStamp.read(path)
            let ahead = prefetched[v].flatMap { stamp != nil && $0.stamp == stamp ? $0.bytes : nil }
            guard let bytes = ahead ?? (try? FileIO.read(path)) else { return nil }
            let sha = stamp.flatMap { known[ManifestSHACache.key($0)] }.flatMap { $0.size == bytes.count ? $0.sha256 : nil }
            return (v, bytes, sha ?? ContentHash.sha256Hex(bytes))
        }.compactMap { $0 }
    }

    /// Keeps the SHA-256 of the versioned manifests the next publish reads (these sources and
    /// `version`, whose SHA-256 is `sha256`), by their files' stamps.
    package func recordSHAs(version: Int, sha256: String) {
        var known: [(path: String, sha256: String)] = recent.map { (PublishedLayout.path(root, PublishedLayout.versionedManifest($0.version)), $0.sha256) }
        known.append((PublishedLayout.path(root, PublishedLayout.versionedManifest(version)), sha256))
        ManifestSHACache.save(channelDir: root, known)
    }

    private var deltasDir: String { PublishedLayout.path(root, PublishedLayout.deltas) }

    /// Writes the deltas into `target` (the bytes of the new `manifest.plist`, `targetGzipSize`
    /// gzipped) and makes them durable. `objects` are the new version's object bytes by SHA-256.
    package func write(target: Manifest, targetBytes: [UInt8], targetGzipSize: Int, objects: [String: [UInt8]]) throws -> Summary {
        let sha = ContentHash.sha256Hex(targetBytes)
        return try write(prepare(target: target, targetBytes: targetBytes, targetSHA256: sha, objects: objects), targetGzipSize: targetGzipSize)
    }

    /// The deltas of a new version made, before they are judged against the size of its
    /// manifest gzipped (so that they can be made while it is compressed) and written.
    package struct Prepared: Sendable {
        let targetSHA: String
        /// Per source of ``recent``: the delta, its gzip variant, and the bytes (as fetched) of
        /// the objects its edits replace; nil when there is none.
        let made: [(plain: [UInt8], gzip: [UInt8]?, objectsReplaced: Int)?]
    }

    /// Makes the deltas into `target` (the bytes of the new `manifest.plist`, whose SHA-256 is
    /// `targetSHA256`) with each source's ``ManifestPrints`` kept by the last builds (made again
    /// where missing or damaged) and the target's, then keeps these versions' prints for the next.
    /// `previous` is the channel's current manifest and its file's bytes, when known: the
    /// target's prints of the entries it shares with it are taken from its prints. `store` is
    /// the channel's print store when read already.
    package func prepare(
        target: Manifest, targetBytes: [UInt8], targetSHA256 targetSHA: String, objects: [String: [UInt8]],
        previous: (manifest: Manifest, bytes: [UInt8])? = nil, store: ManifestPrintStore? = nil
    ) -> Prepared {
        guard !recent.isEmpty else { return Prepared(targetSHA: targetSHA, made: []) }
        let decoded = DecodedObjects(root: objectsRoot, objects: objects)
        let general = GeneralPath(target: target, targetBytes: targetBytes)
        let store = store ?? ManifestPrintStore(channelDir: root)
        // The current manifest's file among the sources (the same bytes), by its SHA-256.
        let shared = previous.flatMap { p in
            recent.first { $0.version == p.manifest.version && $0.bytes == p.bytes }.map { (sha256: $0.sha256, entries: p.manifest.entries) }
        }
        let target = store.prints(for: targetSHA, bytes: targetBytes, entries: target.entries, previous: shared)
        let results = Parallel.map(recent) { source in
            let prints = store.prints(for: source.sha256, bytes: source.bytes)
            let pair = prints.flatMap { p in target.map { (source: p.prints, target: $0.prints) } }
            return (delta(from: source.bytes, prints: pair, general: general, decoded: decoded), prints?.stored)
        }
        store.save([target?.stored].compactMap { $0 } + results.compactMap(\.1))
        return Prepared(targetSHA: targetSHA, made: results.map(\.0))
    }

    /// Writes the prepared deltas worth publishing against a manifest of `targetGzipSize` bytes
    /// gzipped, with their brotli variants, and makes them durable.
    package func write(_ prepared: Prepared, targetGzipSize: Int) throws -> Summary {
        guard !prepared.made.isEmpty else { return Summary() }
        try FileIO.makeDirectory(deltasDir)
        let made = Parallel.map(prepared.made) { $0.flatMap { judged($0, manifestGzip: targetGzipSize) } }
        var pending: [(path: String, bytes: [UInt8])] = []
        for (source, bytes) in zip(recent, made) {
            guard let (plain, gzip, brotli) = bytes else { continue }
            let path = PublishedLayout.path(root, PublishedLayout.delta(from: source.sha256, to: prepared.targetSHA))
            if !FileIO.exists(path) { pending.append((path, plain)) }
            if let gzip, !FileIO.exists(path + ".gz") { pending.append((path + ".gz", gzip)) }
            if let brotli, !FileIO.exists(path + ".br") { pending.append((path + ".br", brotli)) }
        }
        var summary = Summary()
        summary.written = made.count { $0 != nil }
        summary.bytes = made.reduce(0) { $0 + ($1.map { $0.gzip?.count ?? $0.plain.count } ?? 0) }
        try writeDurably(pending)
        return summary
    }

    private func writeDurably(_ pending: [(path: String, bytes: [UInt8])]) throws {
        let perFile = pending.count <= PublishSession.perFileSyncLimit
        for result in Parallel.map(pending, { file in Result { () throws(FileError) in try FileIO.writeNew(file.bytes, to: file.path, sync: perFile) } }) {
            try result.get()
        }
        if !pending.isEmpty {
            if !perFile { try FileIO.syncFileSystem(containing: deltasDir) }
            try FileIO.syncDirectory(deltasDir)
        }
    }

    /// The delta from one source manifest file to the target and its gzip variant, and the
    /// bytes of the objects its edits replace; nil when there is none.
    private func delta(
        from sourceBytes: [UInt8], prints: (source: ManifestPrints, target: ManifestPrints)?, general: GeneralPath, decoded: DecodedObjects
    ) -> (plain: [UInt8], gzip: [UInt8]?, objectsReplaced: Int)? {
        guard let manifest = ManifestEdit.make(from: sourceBytes, to: general.targetBytes, prints: prints) ?? general.edit(from: sourceBytes),
            manifest.sourceHistory == manifest.targetHistory
        else { return nil }
        var edits: [String: PlistValue] = [:]
        var replaced = 0
        let changes = manifest.changes + Self.releaseChanges(from: sourceBytes, to: general.target, defaults: manifest.changes)
        // Assets travel whole; property lists as structural edits.
        for change in changes where !manifest.held.contains(change.target.sha256) && change.target.isPlist {
            let entry = change.target
            guard let old = change.source, old.isPlist, let from = decoded.value(old), let to = decoded.value(entry),
                let edit = decoded.edit(from: from, to: to, pair: old.sha256 + entry.sha256)
            else { continue }
            // Only where smaller than the object as a client would fetch it.
            let whole = entry.gzipSize ?? entry.size
            let encoded = BinaryPlist.encode(edit)
            let size = min(encoded.count, (try? Gzip.compress(encoded, level: 9).count) ?? encoded.count)
            guard size < whole else { continue }
            edits[entry.path] = edit
            replaced += whole
        }
        let plain = DeltaBundle(manifest: manifest.edit, objects: edits).bytes
        return (plain, try? Gzip.compress(plain, level: 9), replaced)
    }

    /// A made delta with its gzip variant when smaller and its brotli variant when smaller
    /// still; nil when, as served, it is not smaller than the manifest and the objects it replaces.
    private func judged(
        _ delta: (plain: [UInt8], gzip: [UInt8]?, objectsReplaced: Int), manifestGzip: Int
    ) -> (plain: [UInt8], gzip: [UInt8]?, brotli: [UInt8]?)? {
        let (plain, gzip) = (delta.plain, delta.gzip)
        let served = min(plain.count, gzip?.count ?? plain.count)
        guard served < manifestGzip + delta.objectsReplaced else { return nil }
        let brotli = brotliQuality.flatMap { try? Brotli.compress(plain, quality: Steps.brotliLevel($0, plain.count)) }
        return (plain, gzip.flatMap { $0.count < plain.count ? $0 : nil }, brotli.flatMap { $0.count < served ? $0 : nil })
    }

    /// Edits for the objects a target's releases add, from the source's entry at the same path as
    /// an install on the same release (or the defaults) holds it; only for paths whose default
    /// entry did not change (an edit is keyed by path, and a client tries it on the target
    /// entries of every release at that path).
    static func releaseChanges(from sourceBytes: [UInt8], to target: Manifest, defaults: [ManifestEdit.Change]) -> [ManifestEdit.Change] {
        guard !target.releases.isEmpty, let source = try? Manifest(bytes: sourceBytes) else { return [] }
        var taken = Set(defaults.map(\.target.path))
        let held = Set(source.allEntries.map(\.sha256))
        var out: [ManifestEdit.Change] = []
        for release in target.releases {
            let view = source.applying(release: release.id)
            for entry in release.entries where !held.contains(entry.sha256) && taken.insert(entry.path).inserted {
                out.append(ManifestEdit.Change(target: entry, source: view.entry(entry.path)))
            }
        }
        return out
    }

    /// The general path for a source manifest that ``ManifestEdit`` does not take: both decoded,
    /// the edit by ``PlistPatch``, applied and compared with the target's bytes. The target is
    /// decoded once, when first needed.
    private final class GeneralPath: Sendable {
        let target: Manifest
        let targetBytes: [UInt8]
        private let targetValue = Mutex<PlistValue??>(nil)

        init(target: Manifest, targetBytes: [UInt8]) {
            self.target = target
            self.targetBytes = targetBytes
        }

        func edit(from sourceBytes: [UInt8]) -> ManifestEdit.Outcome? {
            let value = targetValue.withLock { cached in
                if cached == nil { cached = .some(try? BinaryPlist.decode(targetBytes)) }
                return cached ?? nil
            }
            guard let value, let source = try? Manifest(bytes: sourceBytes), let sourceValue = try? BinaryPlist.decode(sourceBytes),
                let edit = DeltaBundle.edit(from: sourceValue, to: value, targetBytes: targetBytes)
            else { return nil }
            let held = Set(source.entries.map(\.sha256))
            let changes = target.entries.filter { !held.contains($0.sha256) }.map {
                ManifestEdit.Change(target: $0, source: source.entry($0.path))
            }
            return ManifestEdit.Outcome(edit: edit, changes: changes, held: [], sourceHistory: source.history, targetHistory: target.history)
        }
    }

    /// The head for the version whose `manifest.plist` is `bytes`: the deltas into it found on
    /// disk, from versions still under `manifests/`. `sha256` is that of `bytes`, when known.
    package func head(for manifest: Manifest, bytes: [UInt8], sha256: String? = nil, gzipSize: Int?) -> DeltaHead {
        let sha = sha256 ?? ContentHash.sha256Hex(bytes)
        let names = Set((try? FileIO.list(deltasDir)) ?? [])
        let from = recent.filter {
            names.contains(String(PublishedLayout.delta(from: $0.sha256, to: sha).dropFirst(PublishedLayout.deltas.count + 1)))
        }
        return DeltaHead(
            version: manifest.version, sha256: sha, size: bytes.count, gzipSize: gzipSize,
            deltaHistory: history, deltasFrom: from.map(\.version), waypoint: from.first.map { ($0.version, $0.sha256) })
    }

    /// Objects decoded once for all the deltas of a publish (the same object is the source or
    /// target of several), and edits made once per pair of objects.
    private final class DecodedObjects: Sendable {
        let root: String
        let objects: [String: [UInt8]]
        private let values = Mutex<[String: (value: PlistValue, bytes: [UInt8])?]>([:])
        private let edits = Mutex<[String: PlistValue?]>([:])

        init(root: String, objects: [String: [UInt8]]) {
            self.root = root
            self.objects = objects
        }

        /// The entry's object, decoded, and its bytes; nil when missing, damaged or not a binary plist.
        func value(_ entry: Manifest.Entry) -> (value: PlistValue, bytes: [UInt8])? {
            if let known = values.withLock({ $0[entry.sha256] }) { return known }
            var found: (PlistValue, [UInt8])?
            if let bytes = objects[entry.sha256] ?? (try? FileIO.read(PublishedLayout.path(root, entry.objectPath))), entry.matches(bytes),
                let value = try? BinaryPlist.decode(bytes)
            {
                found = (value, bytes)
            }
            values.withLock { $0[entry.sha256] = found }
            return found
        }

        func edit(from: (value: PlistValue, bytes: [UInt8]), to: (value: PlistValue, bytes: [UInt8]), pair: String) -> PlistValue? {
            if let known = edits.withLock({ $0[pair] }) { return known }
            let edit = DeltaBundle.edit(from: from.value, to: to.value, targetBytes: to.bytes)
            edits.withLock { $0[pair] = edit }
            return edit
        }
    }

    /// Removes deltas that lead to versions older than the last `history` (a client reaches the
    /// current version directly or through the oldest of those, never through older ones).
    /// `sha256` is that of `currentBytes`, when known.
    package func prune(currentBytes: [UInt8], sha256: String? = nil) {
        guard let names = try? FileIO.list(deltasDir) else { return }
        let keep = Set(recent.map(\.sha256) + [sha256 ?? ContentHash.sha256Hex(currentBytes)])
        for name in names {
            let stem = name.hasSuffix(".gz") || name.hasSuffix(".br") ? String(name.dropLast(3)) : name
            guard let pair = PublishedLayout.deltaPair(ofFile: stem), !keep.contains(pair.to) else { continue }
            unlink(deltasDir + "/" + name)
        }
    }
}

/// The SHA-256 of versioned manifest files by their stamps (inode, size, modification time),
/// kept in the channel's directory as `.folio-build-shas` (never served): a publish reads the
/// last ten versions' files for its deltas, and hashing them (26 MB at 20,000 entries) was a
/// tenth of a one-edit rebuild. Versioned manifests are written once, each a new inode; a file
/// rewritten since has another stamp and is hashed again. Missing or damaged, it is only a cache.
enum ManifestSHACache {
    static let fileName = ".folio-build-shas"

    static func key(_ stamp: FileStamp) -> String { stamp.fields.map(String.init).joined(separator: " ") }

    /// Stamp keys to (size, SHA-256).
    static func load(channelDir: String) -> [String: (size: Int, sha256: String)] {
        guard let bytes = try? FileIO.read(channelDir + "/" + fileName) else { return [:] }
        var out: [String: (size: Int, sha256: String)] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 5, let size = Int(parts[1]), ContentHash.isSHA256Hex(String(parts[4])) else { continue }
            out[parts[0..<4].joined(separator: " ")] = (size, String(parts[4]))
        }
        return out
    }

    /// Replaces the file with these files' stamps and SHA-256s; not made durable.
    static func save(channelDir: String, _ files: [(path: String, sha256: String)]) {
        var text = ""
        for file in files {
            guard let stamp = FileStamp.read(file.path) else { continue }
            text += key(stamp) + " " + file.sha256 + "\n"
        }
        try? FileIO.writeAtomically(Array(text.utf8), to: channelDir + "/" + fileName, sync: false)
    }
}
