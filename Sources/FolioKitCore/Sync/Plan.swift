import FolioPublished
import FolioSupport
import Foundation

/// What the sync has to fetch for the verified version.
struct SyncPlan: Sendable {
    var verified: Verified
    /// The SHA-256 of the manifest's bytes, which names it in the cache.
    var sha256: String
    /// The manifest is the one held (a revalidation or a repair).
    var sameManifest: Bool
    /// Objects to fetch whole.
    var missing: [Manifest.Entry]
    /// Objects the deltas rebuilt, verified and stored already.
    var patched: [Manifest.Entry]

    var manifest: Manifest { verified.manifest }
    var delta: DeltaUse? { verified.resolution.delta }
}

extension Syncer {
    /// Phase 3. For the held manifest, only its damaged objects; for a new one, every object
    /// the cache lacks, but those the deltas rebuilt (checked against the verified manifest
    /// once more and stored).
    func plan(_ v: Verified, _ run: SyncRun) throws -> SyncPlan {
        let sha = ContentHash.sha256Hex(v.resolution.manifestBytes)
        // The same manifest and the same release: a revalidation (or a repair).
        let same = run.held?.state.manifestSHA256 == sha && run.held?.state.release == v.choice.release
        var missing = same ? run.damaged : SyncRun.missingObjects(v.manifest, in: cache, logger: nil, knownIntact: run.intact)
        var patched: [Manifest.Entry] = []
        if let rebuilt = v.resolution.delta?.objects, !rebuilt.isEmpty {
            missing = try missing.filter { entry in
                guard let bytes = rebuilt[entry.sha256], entry.matches(bytes) else { return true }
                try store(bytes, entry, counters: run.counters)
                patched.append(entry)
                return false
            }
        }
        return SyncPlan(verified: v, sha256: sha, sameManifest: same, missing: missing, patched: patched)
    }

    /// ``plan(_:_:)``, on a thread of its own when it reads the cache (a new manifest: a stat
    /// per entry, and the objects deltas rebuilt); a revalidation's plan reads nothing.
    func planOffPool(_ v: Verified, _ run: SyncRun) async throws -> SyncPlan {
        if v.resolution.status == 304 { return try plan(v, run) }  // the held manifest
        return try await Blocking.run { _ in try self.plan(v, run) }
    }

    /// Writes a verified object and notes it for a cancellation to take back.
    func store(_ bytes: [UInt8], _ entry: Manifest.Entry, counters: Counters) throws {
        try cache.storeObject(bytes, sha256: entry.sha256)
        counters.stored.withLock { $0.append(entry.sha256) }
    }
}
