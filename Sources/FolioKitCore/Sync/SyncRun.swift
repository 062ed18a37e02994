import FolioPublished
import FolioSupport
import Foundation
import Logging

/// What one sync knows as it goes through its phases: the version held when it started, the
/// held objects found damaged, the counters, and the report taking shape.
///
/// One sync's task owns it. It is handed to a blocking thread only while that task awaits the
/// thread (`Blocking.run`), so it is never used from two threads at once: hence unchecked.
final class SyncRun: @unchecked Sendable {
    typealias Held = ContentCache.Held

    let start = ContinuousClock.now
    let counters = Syncer.Counters()
    let held: Held?
    var report: SyncReport
    /// Objects of the held version that are missing or damaged on disk.
    private(set) var damaged: [Manifest.Entry] = []
    /// Objects of the held version found intact.
    private(set) var intact = Set<String>()

    /// The held version was synced from this edge (not read from another edge's environment,
    /// whose freshness and validators mean nothing here).
    let heldIsOwn: Bool

    /// This install's id, which its rollout buckets are drawn from: the one given, else the
    /// cache's, read (or made) only when a manifest has releases.
    private var installID: String?

    init(cache: ContentCache, installID: String?) {
        self.installID = installID
        held = cache.current()
        heldIsOwn = held?.state.edge == nil || cache.edge == nil || held?.state.edge == cache.edge
        report = SyncReport(result: .notModified, versionBefore: held?.state.version, versionAfter: held?.state.version)
    }

    /// The install id (see ``installID``).
    func installID(_ cache: ContentCache) throws -> String {
        if let installID { return installID }
        let id = try cache.installID()
        installID = id
        return id
    }

    /// Looks over the held version's objects (hashing only those touched since the last check).
    func checkHeldObjects(_ cache: ContentCache, logger: Logger) {
        guard let held else { return }
        damaged = Self.missingObjects(held.manifest, in: cache, logger: logger, verifiedAt: held.state.verifiedAt)
        let bad = Set(damaged.map(\.sha256))
        intact = Set(held.manifest.entries.map(\.sha256)).subtracting(bad)
    }

    /// A report of no request at all when the held version is intact and still fresh: for the
    /// lifetime the edge gave it (else the manifest's hint), and every entry's own policy.
    func freshReport(force: Bool) -> SyncReport? {
        guard let held, heldIsOwn, !force, damaged.isEmpty else { return nil }
        let maxAge = Double(held.state.lifetime(of: held.manifest))
        let age = Date().timeIntervalSince(held.state.validatedAt)
        guard age >= 0, age < maxAge else { return nil }
        var r = report
        r.result = .fresh
        r.maintenanceUntil = held.manifest.maintenanceUntil
        (r.release, r.critical) = (held.state.release, held.manifest.critical)
        r.message = "version \(held.state.version) is fresh (validated \(Int(age))s ago, max-age \(Int(maxAge))s); --force checks anyway"
        return r
    }

    /// The report with the counters and the time taken.
    func finish(_ report: SyncReport) -> SyncReport {
        var r = report
        r.requests = counters.requests.value
        r.bytes = counters.bytes.value
        r.bodyBytes = counters.bodyBytes.value
        r.objectsFetched = counters.objects.value
        let d = ContinuousClock.now - start
        r.durationMs = d.inMilliseconds
        return r
    }

    /// Removes the objects this sync wrote that the held version does not name, so that a
    /// cancelled sync leaves the cache as it found it.
    func discardNewObjects(_ cache: ContentCache) {
        let keep = Set(held?.manifest.entries.map(\.sha256) ?? [])
        for sha in counters.stored.withLock({ $0 }) where !keep.contains(sha) { cache.removeObject(sha256: sha) }
    }

    /// Entries whose objects are not usable in the cache (deduplicated by hash).
    /// Objects verified intact a moment ago (`knownIntact`) are not read again.
    /// Objects untouched since the last full check (`verifiedAt`) are not hashed again.
    static func missingObjects(
        _ manifest: Manifest, in cache: ContentCache, logger: Logger?, knownIntact: Set<String> = [], verifiedAt: Date? = nil
    ) -> [Manifest.Entry] {
        var seen = knownIntact
        var out: [Manifest.Entry] = []
        for e in manifest.entries where seen.insert(e.sha256).inserted {
            if let verifiedAt, cache.unchangedSince(verifiedAt, e) { continue }
            do {
                if try cache.object(e) == nil { out.append(e) }
            } catch {
                logger?.warning("\(error)")
                out.append(e)
            }
        }
        return out
    }
}
