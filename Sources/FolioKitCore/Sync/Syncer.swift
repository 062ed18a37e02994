import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Logging

/// Settings for one sync.
package struct SyncSettings: Sendable {
    package var edge: String
    package var force = false
    package var allowDowngrade = false
    package var waitForLock = true
    /// Called as objects arrive (from any thread).
    package var progress: (@Sendable (SyncProgress) -> Void)?
    /// Called just before a new version is made current, with the version it replaces and the
    /// new one (from the syncing task).
    package var willCommit: (@Sendable (Manifest?, Manifest) -> Void)?
    /// Called once a new version is current, with the version it replaced and the new one.
    package var didCommit: (@Sendable (Manifest?, Manifest) -> Void)?
    package var attempts = 3
    package var concurrency = 8
    /// Request fields, the timeout of one request, extra certificate authorities.
    package var http = FolioHTTPConfiguration()
    /// How to reach the edge: FolioKit's URLSession, the command line's sockets, a test's fake.
    package var transport: any Transport
    /// Where the sync says what it does (a lock wait, a damaged object); silent by default.
    package var logger = Logger(label: "folio", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The root keys whose signatures the manifest needs; nil accepts unsigned manifests.
    package var trust: Trust?
    /// The bundled seed's manifest: when trusting, an older version is refused as a rollback.
    package var seed: Manifest?
    /// Ask for `head.plist` and take deltas when the edge has them (`--no-delta` turns it off).
    package var deltas = true
    /// The clock signatures' expiry is checked against (tests move it).
    package var now: @Sendable () -> Date = { Date() }
    /// This app's version: a version of the content that needs a newer one is not taken
    /// (`.updateRequired`); nil: the app did not say, and nothing is refused for it.
    package var appVersion: AppVersion?
    /// The channel followed: its manifest, head and deltas are under its prefix.
    package var channel = Channel.production
    /// What targeted releases are matched against (the app's version, platform, OS, locale, country).
    package var context = ReleaseContext()
    /// The install id rollout buckets are drawn from; nil: the cache's own (``ContentCache/installID()``).
    package var installID: String?

    package init(edge: String, transport: any Transport) {
        self.edge = edge
        self.transport = transport
    }

    /// The timeout of one request.
    package var timeout: Duration {
        get { http.timeout }
        set { http.timeout = newValue }
    }
}

/// Brings the cache up to the edge's current version, in phases, each in its own file:
/// resolve (the head or the manifest, conditionally) → verify (signatures, rollback) → plan
/// (deltas or whole objects) → fetch (only what the cache lacks, verified) → commit (the
/// manifest, durability, then the state that names it) → report.
package struct Syncer: Sendable {
    package let cache: ContentCache
    package let settings: SyncSettings
    let transport: any Transport
    let policy: RetryPolicy
    var logger: Logger { settings.logger }

    package init(cache: ContentCache, settings: SyncSettings) {
        self.cache = cache
        self.settings = settings
        transport = settings.transport
        policy = RetryPolicy(attempts: settings.attempts)
    }

    final class Counters: Sendable {
        let requests = Counter()
        let bytes = Counter()
        let bodyBytes = Counter()
        let objects = Counter()
        /// Objects this sync wrote, to take back if it is cancelled.
        let stored = Locked<[String]>([])

        func count(_ response: TransportResponse) {
            requests.add(1)
            bytes.add(response.headBytes + response.bodyBytesOnWire)
            bodyBytes.add(response.bodyBytesOnWire)
        }
    }

    /// Runs the sync with the cache's lock held. A cancelled sync throws `.cancelled` and leaves
    /// the cache as it was; a failed one is recorded for `status` (the version stays).
    package func run() async throws -> SyncReport {
        let lockFD: Int32
        let run: SyncRun
        do { (lockFD, run) = try await start() } catch is CancellationError {
            throw FolioError(.cancelled, "the sync was cancelled before it began; the cache is as it was", path: cache.dir)
        }
        defer { close(lockFD) }
        run.report.channel = settings.channel
        let report: SyncReport
        do {
            report = try await locked(run)
        } catch is CancellationError {
            run.discardNewObjects(cache)
            throw FolioError(.cancelled, "the sync was cancelled; the cache is as it was", path: cache.dir, hasContent: run.held != nil)
        } catch let failure as FolioError {
            record(failure, held: run.held)
            throw failure
        }
        try checkMaintenanceWindow(report)
        return report
    }

    /// A version the publisher marked as a maintenance window (`--maintenance-until`) is taken,
    /// and then reported as `.maintenance` until the window ends (the content is readable).
    private func checkMaintenanceWindow(_ report: SyncReport) throws {
        guard let until = report.maintenanceUntil, until > settings.now(), let version = report.versionAfter else { return }
        var error = FolioError(
            .maintenance,
            "the publisher marks version \(version) as a maintenance window until \(PlistDates.formatISO8601(until)); its content is current and readable",
            hasContent: true)
        error.retryAfter = until.timeIntervalSince(settings.now())
        throw error
    }

    /// The cache's lock, what the cache holds, and a look over the held objects (a stat or a
    /// hash each), all on a thread of its own: disk work stays off the cooperative pool. A lock
    /// another sync holds is waited for (with `waitForLock`) by trying again every 20 ms.
    private func start() async throws -> (Int32, SyncRun) {
        let (cache, logger, installID) = (cache, logger, settings.installID)
        var waiting = false
        while true {
            let started: (Int32, SyncRun)? = try await Blocking.run { _ in
                guard let fd = try cache.tryLock() else { return nil }
                do {
                    try cache.prepare()
                    cache.removeLeftovers()
                    let run = SyncRun(cache: cache, installID: installID)
                    run.checkHeldObjects(cache, logger: logger)
                    return (fd, run)
                } catch {
                    close(fd)
                    throw error
                }
            }
            if let started { return started }
            guard settings.waitForLock else {
                throw FolioError(.busy, "another folio sync is running on \(cache.dir)", path: cache.dir, hasContent: cache.current() != nil)
            }
            if !waiting { logger.notice("another sync holds \(cache.dir)/lock; waiting for it") }
            waiting = true
            do { try await Task.sleep(for: .milliseconds(20)) } catch {
                throw FolioError(.cancelled, "the sync was cancelled while waiting for the cache's lock", path: cache.dir, hasContent: cache.current() != nil)
            }
        }
    }

    /// Records a failed attempt for `status` (the lock is held); the version stays as it was.
    private func record(_ failure: FolioError, held: SyncRun.Held?) {
        guard var state = held?.state else { return }
        state.lastAttemptAt = Date()
        state.lastResult =
            switch failure.code {
            case .maintenance: "maintenance"
            case .updateRequired: "updateRequired"
            case .downgrade: "refused"
            default: failure.isTrustFailure ? "refused" : "failed"
            }
        state.lastError = failure.message
        state.retryAfter = failure.retryAfter.map { Date().addingTimeInterval($0) }
        try? cache.saveState(state, durable: false)
    }

    /// The phases, in order.
    private func locked(_ run: SyncRun) async throws -> SyncReport {
        if let fresh = run.freshReport(force: settings.force) { return run.finish(fresh) }
        let resolved: Resolution
        switch try await resolve(run) {
        case .offline(let error): return run.finish(offline(error, run))
        case .resolved(let r): resolved = r
        }
        let verified = try verify(resolved, run)
        let plan = try await planOffPool(verified, run)
        try await fetch(plan, run)
        return run.finish(try await commit(plan, run))
    }

    /// The edge could not be reached: recorded for `status`, the cache unchanged.
    private func offline(_ error: TransportError, _ run: SyncRun) -> SyncReport {
        if var state = run.held?.state {
            state.lastAttemptAt = Date()
            state.lastResult = "offline"
            state.lastError = error.description
            try? cache.saveState(state, durable: false)
        }
        var report = run.report
        report.result = .offline
        let keeping = run.held.map { "keeping cached version \($0.state.version)" } ?? "no cached version yet"
        report.message = "offline: cannot reach \(transport.base) (\(error.description)); \(keeping)"
        return report
    }

    /// The retry policy, counting every answer in `counters`.
    func policy(counting counters: Counters) -> RetryPolicy {
        var p = policy
        p.observe = { counters.count($0) }
        return p
    }

    /// The URL path of a file of the followed channel (`/channels/beta/head.plist`).
    func channelPath(_ name: String) -> String { "/" + PublishedLayout.channelPrefix(settings.channel) + name }

    /// One GET with the retry policy, counted in the report.
    func get(_ request: TransportRequest, counters: Counters) async throws -> TransportResponse {
        try await policy(counting: counters).run(request, on: transport)
    }

    /// The body decoded from its content coding (gzip or brotli), refusing more than `limit` bytes.
    func decodeBody(_ response: TransportResponse, limit: Int, what: String) throws -> [UInt8] {
        let coding = response.headers.first(name: "content-encoding")
        do { return try transport.decode(response.body, coding: coding, maxSize: limit) } catch let unsupported as ContentDecoding.Unsupported {
            throw FolioError(.invalidResponse, "\(what): the edge answered in the content coding \"\(unsupported.coding)\", which sync does not ask for")
        } catch {
            throw FolioError(.invalidResponse, "\(what): bad \(coding?.lowercased() ?? "") body from the edge: \(error)")
        }
    }

    /// A 503 (or 429) with `Retry-After` is the edge's maintenance signal: an error that says
    /// when to come back, the content held still readable.
    func checkMaintenance(_ response: TransportResponse, _ what: String, held: Bool) throws {
        guard response.status == 503 || response.status == 429, let wait = RetryPolicy.retryAfter(response) else { return }
        var error = FolioError(
            .maintenance, "the edge is in maintenance (GET \(what) answered \(response.status)); try again in \(Int(wait.rounded(.up))) s",
            url: transport.base + "/" + what, hasContent: held)
        error.retryAfter = wait
        throw error
    }
}
