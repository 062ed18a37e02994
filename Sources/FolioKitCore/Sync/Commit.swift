import FolioPublished
import FolioSupport
import Foundation

extension Syncer {
    /// Phase 5. The switch: the manifest, durability, then the state that names it (written by
    /// rename, so a crash leaves the old version or the new one, never a mix). Then the report.
    /// The writes and fsyncs run on a thread of their own, not on the cooperative pool.
    func commit(_ plan: SyncPlan, _ run: SyncRun) async throws -> SyncReport {
        let manifest = plan.manifest
        let result: SyncReport.Result = !plan.sameManifest ? .updated : (plan.missing.isEmpty ? .notModified : .repaired)
        if result == .updated { settings.willCommit?(run.held?.manifest, manifest) }
        var report = run.report
        report.objectsPatched = plan.patched.count
        if result == .updated {
            report.method = plan.delta.map { $0.steps > 1 ? "delta-chain" : "delta" } ?? "whole"
            if let delta = plan.delta { describeSavings(delta, plan, run, &report) }
        }
        let state = newState(plan, run, result, report)
        let wroteObjects = run.counters.objects.value > 0 || !plan.patched.isEmpty
        try await write(
            plan.sameManifest ? nil : plan.verified.resolution.manifestBytes, version: manifest.version, wroteObjects: wroteObjects,
            state: state, durable: result != .notModified)
        if result == .updated { settings.didCommit?(run.held?.manifest, manifest) }
        report.result = result
        report.versionAfter = manifest.version
        report.maintenanceUntil = manifest.maintenanceUntil
        report.release = plan.verified.choice.release
        report.critical = manifest.critical
        report.message = message(result, plan, run)
        return report
    }

    /// The state that names the new (or revalidated) version.
    private func newState(_ plan: SyncPlan, _ run: SyncRun, _ result: SyncReport.Result, _ report: SyncReport) -> ContentCache.State {
        let (held, manifest, r, now) = (run.held, plan.manifest, plan.verified.resolution, Date())
        var state = ContentCache.State(
            version: manifest.version, manifestSHA256: plan.sha256, etag: r.manifestETag,
            validatedAt: now, lastAttemptAt: now, lastResult: result.rawValue, verifiedAt: now,
            highestVersion: max(manifest.version, held?.state.highestVersion ?? held?.state.version ?? 0),
            keyListVersion: plan.verified.keyListVersion)
        state.headETag = r.headETag
        state.headMissing = r.headMissing
        state.serverLifetime = r.serverLifetime
        (state.release, state.releaseReasons) = (plan.verified.choice.release, plan.verified.choice.reasons)
        state.lastMethod = result == .updated ? method(plan, run, report) : held?.state.lastMethod
        if let until = manifest.maintenanceUntil, until > settings.now() {
            state.lastResult = "maintenance"
            state.retryAfter = until
        }
        return state
    }

    /// The manifest (when new), durability, then the state. A revalidation writes one small
    /// state file by rename, without fsync, in place; anything more runs on a thread of its own
    /// and is not cancellable from here: the switch is done whole, or (on an error) not at all.
    private func write(_ newManifest: [UInt8]?, version: Int, wroteObjects: Bool, state: ContentCache.State, durable: Bool) async throws {
        let cache = cache
        guard newManifest != nil || wroteObjects || durable else {
            try cache.saveState(state, durable: false)
            return
        }
        try await Task.detached {
            try await Blocking.run { _ in
                if let newManifest { try cache.storeManifest(newManifest, version: version) }
                if wroteObjects || newManifest != nil { try cache.syncAll() }
                try cache.saveState(state, durable: durable)
            }
        }.value
    }

    /// What the same sync would have received without deltas: the manifest and the rebuilt
    /// objects whole, each with a response head like this sync's, instead of the head and deltas.
    private func describeSavings(_ delta: DeltaUse, _ plan: SyncPlan, _ run: SyncRun, _ report: inout SyncReport) {
        let c = run.counters
        let requests = max(1, c.requests.value)
        let bytes = c.bytes.value
        let heads = (bytes - c.bodyBytes.value) / requests
        let whole = bytes - plan.verified.resolution.deltaBytes + delta.manifestWireSize + heads
            + plan.patched.reduce(0) { $0 + ($1.gzipSize ?? $1.size) + heads }
        report.bytesSaved = whole - bytes
        report.deltaSteps = delta.steps
        if delta.failedEdits > 0 { report.deltaFallback = "\(delta.failedEdits) object edits did not verify; fetched whole" }
    }

    /// How the version was fetched, for `status`.
    private func method(_ plan: SyncPlan, _ run: SyncRun, _ report: SyncReport) -> String {
        let fetched = run.counters.objects.value
        let total = run.counters.bytes.value
        if let d = plan.delta {
            return "\(d.steps > 1 ? "\(d.steps) deltas" : "delta") from version \(run.held?.state.version ?? 0): \(plan.patched.count) objects patched, \(fetched) fetched whole; \(total) bytes (\(report.bytesSaved ?? 0) saved)"
        }
        return "whole objects: \(fetched) fetched; \(total) bytes" + (report.deltaFallback.map { " (no delta: \($0))" } ?? "")
    }

    /// The report's line for people.
    private func message(_ result: SyncReport.Result, _ plan: SyncPlan, _ run: SyncRun) -> String {
        let version = plan.manifest.version
        let fetched = run.counters.objects.value
        switch result {
        case .updated:
            let how = plan.delta.map { d in
                ": \(plan.patched.count) objects patched by \(d.steps > 1 ? "\(d.steps) deltas" : "a delta"), \(fetched) fetched whole"
            } ?? ": \(fetched) objects fetched"
            let release = plan.verified.choice.release.map { " (release \($0))" } ?? ""
            let critical = plan.manifest.critical ? "; critical: apply it at once" : ""
            return "updated to version \(version)\(release)" + (run.held.map { " from \($0.state.version)" } ?? "") + how + critical
        case .repaired:
            return "version \(version): fetched \(plan.missing.count) missing or damaged objects again"
        default:
            return "version \(version) is current"
        }
    }
}
