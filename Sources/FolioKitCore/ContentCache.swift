import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// The client's verified disk cache.
///
/// ```
/// <cache>/lock                   flock: one sync at a time
/// <cache>/state.plist            which version is current, its ETag, last sync time and result
/// <cache>/environments/<key>.plist  the same for other edges this cache was synced from
/// <cache>/manifests/<N>-<sha256>.plist  manifests held (by version and hash: never overwritten)
/// <cache>/objects/<sha256>.plist objects, verified before they are written
/// <cache>/install-id             this install's random id (its rollout buckets)
/// ```
/// Objects and manifests land by rename; `state.plist` is switched last, also by rename,
/// so a sync killed at any instant leaves the old version current or the new one, never a mix.
///
/// Each edge, and each channel of an edge, is an environment of its own (production, QA, beta): `state.plist` names the edge it
/// was synced from, and syncing another edge first moves it to `environments/`, so switching
/// back and forth keeps both versions and never compares one edge's versions with the other's.
/// Objects and manifests are shared (named by their hashes).
package struct ContentCache: Sendable {
    package let dir: String
    /// The edge whose environment this cache reads and writes; nil: whichever `state.plist` holds.
    package let edge: String?

    package init(dir: String, edge: String? = nil, channel: String = Channel.production) {
        self.dir = dir
        self.edge = edge.map { Self.environmentName($0, channel: channel) }
    }

    /// An edge URL as environments are named: without trailing slashes, and with the channel
    /// when it is not `production` (`https://edge.example (channel beta)`).
    package static func environmentName(_ edge: String, channel: String = Channel.production) -> String {
        var e = edge
        while e.hasSuffix("/") { e.removeLast() }
        return channel == Channel.production ? e : "\(e) (channel \(channel))"
    }

    package var installIDPath: String { dir + "/install-id" }

    /// This install's id: random, made on first use and kept with the cache, so its rollout
    /// buckets stay the same from sync to sync (call with the lock held).
    package func installID() throws -> String {
        if let bytes = try? FileIO.read(installIDPath) {
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if (16...128).contains(text.utf8.count) { return text }
        }
        var rng = SystemRandomNumberGenerator()
        let id = ContentHash.hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) })
        try FileIO.writeAtomically(Array((id + "\n").utf8), to: installIDPath)
        return id
    }

    /// The install id when one was made; nil before the first sync.
    package func existingInstallID() -> String? {
        (try? FileIO.read(installIDPath)).map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    package var environmentsDir: String { dir + "/environments" }

    /// Where the state of `edge`'s environment is kept while another edge's is current.
    package func environmentPath(_ edge: String) -> String {
        environmentsDir + "/" + ContentHash.sha256Hex(Array(Self.environmentName(edge).utf8)).prefix(24) + ".plist"
    }

    package var objectsDir: String { dir + "/objects" }
    package var manifestsDir: String { dir + "/manifests" }
    package var statePath: String { dir + "/state.plist" }

    /// What the cache holds and how the last sync went.
    package struct State: Sendable, Equatable {
        package var version: Int
        package var manifestSHA256: String
        package var etag: String?
        /// When the manifest was last fetched or revalidated.
        package var validatedAt: Date
        package var lastAttemptAt: Date
        package var lastResult: String
        package var lastError: String?
        /// When every object of this version was last hashed and found intact.
        package var verifiedAt: Date?
        /// The highest version ever made current here (a floor against rollback when trusting).
        package var highestVersion: Int?
        /// The highest key list version verified here (older ones are refused as replays).
        package var keyListVersion: Int?
        /// `head.plist`'s ETag, for a conditional request of the next sync.
        package var headETag: String?
        /// The edge answered that it has no `head.plist`: ask for the manifest directly until
        /// the version changes.
        package var headMissing = false
        /// How the current version was fetched (`delta from version 4: …`), for `status`.
        package var lastMethod: String?
        /// How long the edge said the manifest stays fresh when it was validated: its
        /// `Cache-Control: max-age` minus its `Age`, in seconds (nil: it sent none, and the
        /// manifest's own hint applies).
        package var serverLifetime: Int?
        /// Until when the edge asked to be left alone (maintenance, `Retry-After`).
        package var retryAfter: Date?
        /// The edge this state was synced from (nil in caches from before environments).
        package var edge: String?
        /// The release of the manifest this install took (nil: its default entries), and why.
        package var release: Int?
        package var releaseReasons: [String] = []

        /// Seconds from `validatedAt` that `manifest` is fresh: the edge's lifetime (else the
        /// manifest's hint), shortened by any entry's own policy.
        package func lifetime(of manifest: Manifest) -> Int {
            manifest.freshnessLifetime(server: serverLifetime)
        }

        package var plist: PlistValue {
            var d: [String: PlistValue] = [
                "version": .int(Int64(version)), "manifestSHA256": .string(manifestSHA256),
                "validatedAt": .date(validatedAt), "lastAttemptAt": .date(lastAttemptAt),
                "lastResult": .string(lastResult),
            ]
            if let etag { d["etag"] = .string(etag) }
            if let lastError { d["lastError"] = .string(lastError) }
            if let verifiedAt { d["verifiedAt"] = .date(verifiedAt) }
            if let highestVersion { d["highestVersion"] = .int(Int64(highestVersion)) }
            if let keyListVersion { d["keyListVersion"] = .int(Int64(keyListVersion)) }
            if let headETag { d["headETag"] = .string(headETag) }
            if headMissing { d["headMissing"] = .bool(true) }
            if let lastMethod { d["lastMethod"] = .string(lastMethod) }
            if let serverLifetime { d["serverLifetime"] = .int(Int64(serverLifetime)) }
            if let retryAfter { d["retryAfter"] = .date(retryAfter) }
            if let edge { d["edge"] = .string(edge) }
            if let release { d["release"] = .int(Int64(release)) }
            if !releaseReasons.isEmpty { d["releaseReasons"] = .array(releaseReasons.map { .string($0) }) }
            return .dict(d)
        }

        package init(
            version: Int, manifestSHA256: String, etag: String?, validatedAt: Date, lastAttemptAt: Date,
            lastResult: String, lastError: String? = nil, verifiedAt: Date? = nil, highestVersion: Int? = nil,
            keyListVersion: Int? = nil
        ) {
            self.highestVersion = highestVersion
            self.keyListVersion = keyListVersion
            self.version = version
            self.manifestSHA256 = manifestSHA256
            self.etag = etag
            self.validatedAt = validatedAt
            self.lastAttemptAt = lastAttemptAt
            self.lastResult = lastResult
            self.lastError = lastError
            self.verifiedAt = verifiedAt
        }

        package init?(plist: PlistValue) {
            guard let v = plist["version"]?.intValue, let sha = plist["manifestSHA256"]?.stringValue,
                let validated = plist["validatedAt"]?.dateValue, let attempt = plist["lastAttemptAt"]?.dateValue,
                let result = plist["lastResult"]?.stringValue
            else { return nil }
            self.init(
                version: v, manifestSHA256: sha, etag: plist["etag"]?.stringValue, validatedAt: validated,
                lastAttemptAt: attempt, lastResult: result, lastError: plist["lastError"]?.stringValue,
                verifiedAt: plist["verifiedAt"]?.dateValue, highestVersion: plist["highestVersion"]?.intValue,
                keyListVersion: plist["keyListVersion"]?.intValue)
            headETag = plist["headETag"]?.stringValue
            headMissing = plist["headMissing"]?.boolValue ?? false
            lastMethod = plist["lastMethod"]?.stringValue
            serverLifetime = plist["serverLifetime"]?.intValue
            retryAfter = plist["retryAfter"]?.dateValue
            edge = plist["edge"]?.stringValue
            release = plist["release"]?.intValue
            releaseReasons = plist["releaseReasons"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }
    }

    /// The current version's manifest file as served (a ``SignedManifest`` when signed).
    package func currentManifestBytes() -> [UInt8]? {
        guard let held = current() else { return nil }
        return try? FileIO.read(manifestPath(held.state.version, sha256: held.state.manifestSHA256))
    }

    /// A held version: its state, its manifest as this install sees it (the release it took
    /// applied) and as published.
    package typealias Held = (state: State, manifest: Manifest, published: Manifest)

    /// The current version of this cache's environment (``Held``). Nil when there is none or it
    /// is unusable.
    package func current() -> Held? {
        guard let state = state(),
            let manifestBytes = try? FileIO.read(manifestPath(state.version, sha256: state.manifestSHA256)),
            ContentHash.sha256Hex(manifestBytes) == state.manifestSHA256,
            let manifest = try? Manifest(bytes: manifestBytes)
        else { return nil }
        return (state, manifest.applying(release: state.release), manifest)
    }

    /// This environment's state: `state.plist` when it is this edge's (or names no edge, or the
    /// cache was opened without one), else the one kept in `environments/`. An edge never synced
    /// here reads the current environment, whichever edge that is (`status` says so), until its
    /// first sync gives it its own.
    package func state() -> State? {
        let current = Self.readState(statePath)
        guard let edge, let current, let currentEdge = current.edge, currentEdge != edge else { return current }
        return Self.readState(environmentPath(edge)) ?? current
    }

    /// Every environment held: the current one first.
    package func environments() -> [State] {
        let current = Self.readState(statePath)
        let others = ((try? FileIO.list(environmentsDir)) ?? []).sorted().compactMap { name in
            name.hasSuffix(".plist") ? Self.readState(environmentsDir + "/" + name) : nil
        }
        return (current.map { [$0] } ?? []) + others.filter { $0.edge != current?.edge }
    }

    private static func readState(_ path: String) -> State? {
        guard let bytes = try? FileIO.read(path), let value = try? BinaryPlist.decode(bytes) else { return nil }
        return State(plist: value)
    }

    package func manifestPath(_ version: Int, sha256: String) -> String { "\(manifestsDir)/\(version)-\(sha256).plist" }
    package func objectPath(_ sha: String) -> String { "\(objectsDir)/\(sha).plist" }

    /// The manifest of version `version`, if held (the current one's when several are).
    package func manifest(version: Int) -> Manifest? { manifestFile(version: version)?.manifest }

    /// The manifest of version `version` and its file's bytes (a signed manifest when signed).
    package func manifestFile(version: Int) -> (manifest: Manifest, bytes: [UInt8])? {
        if let held = current(), held.state.version == version,
            let bytes = try? FileIO.read(manifestPath(version, sha256: held.state.manifestSHA256))
        {
            return (held.manifest, bytes)
        }
        let prefix = "\(version)-"
        for name in ((try? FileIO.list(manifestsDir)) ?? []).sorted() where name.hasPrefix(prefix) && name.hasSuffix(".plist") {
            let sha = name.dropFirst(prefix.count).dropLast(6)
            if let bytes = try? FileIO.read(manifestsDir + "/" + name), ContentHash.sha256Hex(bytes) == sha,
                let m = try? Manifest(bytes: bytes), m.version == version
            {
                return (m, bytes)
            }
        }
        return nil
    }

    /// The object's bytes when present and matching the entry; nil when missing.
    /// Throws when it is present but truncated or altered.
    package func object(_ entry: Manifest.Entry) throws -> [UInt8]? {
        let path = objectPath(entry.sha256)
        guard FileIO.exists(path) else { return nil }
        let bytes = try FileIO.read(path)
        guard entry.matches(bytes) else {
            throw CorruptObject(path: path, entry: entry.path, size: bytes.count, expected: entry.size)
        }
        return bytes
    }

    /// Removes temporary files a killed sync left behind (call with the lock held).
    package func removeLeftovers() {
        for d in [dir, objectsDir, manifestsDir, environmentsDir] {
            for name in (try? FileIO.list(d)) ?? [] where name.hasPrefix(".tmp-") { unlink(d + "/" + name) }
        }
    }

    /// Whether the object is present, of the right size, and untouched since `verifiedAt`
    /// (its inode changed before then), so that hashing it again can be skipped.
    ///
    /// Inode times come from the kernel's coarse clock, up to a tick (≤ 10 ms) behind `Date()`,
    /// so a change made after the check always has a ctime later than `verifiedAt` - 50 ms. On a
    /// file system that stores whole seconds (nanoseconds 0: ext3, FAT) the margin is 2 s.
    package func unchangedSince(_ verifiedAt: Date, _ entry: Manifest.Entry) -> Bool {
        var st = stat()
        guard stat(objectPath(entry.sha256), &st) == 0, Int(st.st_size) == entry.size else { return false }
        let changed = Double(st.st_ctim.tv_sec) + Double(st.st_ctim.tv_nsec) / 1e9
        let margin = st.st_ctim.tv_nsec == 0 ? 2.0 : 0.05
        return changed < verifiedAt.timeIntervalSince1970 - margin
    }

    package func prepare() throws {
        try FileIO.makeDirectory(objectsDir)
        try FileIO.makeDirectory(manifestsDir)
    }

    /// Writes an object (already verified) by rename; durability comes from `syncAll`.
    package func storeObject(_ bytes: [UInt8], sha256: String) throws {
        try FileIO.writeNew(bytes, to: objectPath(sha256))
    }

    /// Removes an object (one a cancelled sync wrote); a missing file is not an error.
    package func removeObject(sha256: String) {
        unlink(objectPath(sha256))
    }

    package func storeManifest(_ bytes: [UInt8], version: Int) throws {
        try FileIO.writeAtomically(bytes, to: manifestPath(version, sha256: ContentHash.sha256Hex(bytes)), sync: false)
    }

    /// Makes everything written so far durable, before the state switch names it.
    package func syncAll() throws {
        try FileIO.syncFileSystem(containing: dir)
        try FileIO.syncDirectory(objectsDir)
        try FileIO.syncDirectory(manifestsDir)
    }

    /// Switches the current version (or records a sync attempt) atomically. A switch is made
    /// durable; a mere revalidation need not be (lost, it only means asking the edge again).
    /// Makes `state` the current one. It belongs to its own edge (a failed attempt records
    /// into the environment it read), else to this cache's edge (a new version). Another edge's
    /// current state moves to `environments/` first, durably, as it is then the only copy: a
    /// crash between the two writes loses nothing.
    package func saveState(_ state: State, durable: Bool = true) throws {
        var state = state
        state.edge = state.edge ?? edge
        if let other = Self.readState(statePath), let otherEdge = other.edge, otherEdge != state.edge {
            try FileIO.makeDirectory(environmentsDir)
            try FileIO.writeAtomically(BinaryPlist.encode(other.plist), to: environmentPath(otherEdge), sync: true)
            try FileIO.syncDirectory(environmentsDir)
        }
        try FileIO.writeAtomically(BinaryPlist.encode(state.plist), to: statePath, sync: durable)
        if durable { try FileIO.syncDirectory(dir) }
    }

    /// Takes the cache lock; nil when another sync holds it (the sync waits for it without
    /// blocking a thread).
    package func tryLock() throws -> Int32? {
        try FileIO.makeDirectory(dir)
        return try FileIO.tryLock(dir + "/lock")
    }

    /// Bytes used on disk by objects and manifests.
    package func sizeOnDisk() -> Int {
        var total = 0
        for d in [objectsDir, manifestsDir] {
            for name in (try? FileIO.list(d)) ?? [] {
                var st = stat()
                if stat(d + "/" + name, &st) == 0 { total += Int(st.st_size) }
            }
        }
        return total
    }
}

/// A cached object whose bytes no longer match the manifest.
package struct CorruptObject: Error, CustomStringConvertible {
    package var path: String
    package var entry: String
    package var size: Int
    package var expected: Int
    package var description: String {
        "cached object for \(entry) is corrupt (\(path): \(size) bytes, expected \(expected), or wrong hash); a sync fetches it again"
    }
}
