import AsyncHTTPClient
import FolioHTTPCore
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// How one sync went, for people (one line) and for machines (`--json`).
package struct SyncReport: Sendable {
    package enum Result: String, Sendable {
        /// A new version was fetched and made current.
        case updated
        /// The manifest was revalidated (304, or the same version); nothing to fetch.
        case notModified
        /// The cache hints say the manifest is still fresh: no request made.
        case fresh
        /// Missing or damaged objects of the current version were fetched again.
        case repaired
        /// The edge could not be reached; the cache is unchanged.
        case offline
    }

    package var result: Result
    package var versionBefore: Int?
    package var versionAfter: Int?
    package var objectsFetched = 0
    /// Bytes received: response heads and bodies (as sent, compressed).
    package var bytes = 0
    /// Of those, body bytes only.
    package var bodyBytes = 0
    package var requests = 0
    package var durationMs = 0.0
    package var message = ""
    /// With a trusted root: the key IDs whose signatures verified, and the key list's version.
    package var signers: [String]?
    package var keyListVersion: Int?
    /// For an update: `delta`, `delta-chain` or `whole`.
    package var method: String?
    /// Objects rebuilt from deltas (not counted in `objectsFetched`).
    package var objectsPatched = 0
    /// The deltas taken, and the bytes they saved against fetching the manifest and objects whole.
    package var deltaSteps: Int?
    package var bytesSaved: Int?
    /// Why deltas were not used, or not for every object.
    package var deltaFallback: String?

    package var json: PlistValue {
        var d: [String: PlistValue] = [
            "result": .string(result.rawValue), "objectsFetched": .int(Int64(objectsFetched)),
            "bytes": .int(Int64(bytes)), "bodyBytes": .int(Int64(bodyBytes)), "requests": .int(Int64(requests)),
            "durationMs": .real((durationMs * 10).rounded() / 10), "message": .string(message),
        ]
        if let v = versionBefore { d["versionBefore"] = .int(Int64(v)) }
        if let v = versionAfter { d["versionAfter"] = .int(Int64(v)) }
        if let signers { d["signers"] = .array(signers.map { .string($0) }) }
        if let keyListVersion { d["keyListVersion"] = .int(Int64(keyListVersion)) }
        if let method { d["method"] = .string(method) }
        if objectsPatched > 0 || method != nil { d["objectsPatched"] = .int(Int64(objectsPatched)) }
        if let deltaSteps { d["deltaSteps"] = .int(Int64(deltaSteps)) }
        if let bytesSaved { d["bytesSaved"] = .int(Int64(bytesSaved)) }
        if let deltaFallback { d["deltaFallback"] = .string(deltaFallback) }
        return .dict(d)
    }
}

/// Settings for one sync.
package struct SyncSettings: Sendable {
    package var edge: String
    package var force = false
    package var allowDowngrade = false
    package var waitForLock = true
    /// Called as objects arrive (from any thread).
    package var progress: (@Sendable (SyncProgress) -> Void)?
    package var attempts = 3
    package var timeout: TimeAmount = .seconds(15)
    package var concurrency = 8
    /// The root keys whose signatures the manifest needs; nil accepts unsigned manifests.
    package var trust: Trust?
    /// The bundled seed's manifest: when trusting, an older version is refused as a rollback.
    package var seed: Manifest?
    /// Ask for `head.plist` and take deltas when the edge has them (`--no-delta` turns it off).
    package var deltas = true

    package init(edge: String) { self.edge = edge }
}

/// Brings the cache up to the edge's current version: one conditional GET of the manifest,
/// then only the objects the cache lacks, verified, written by rename, and a final switch.
package struct Syncer {
    package let cache: ContentCache
    package let settings: SyncSettings

    package init(cache: ContentCache, settings: SyncSettings) {
        self.cache = cache
        self.settings = settings
    }

    final class Counters: Sendable {
        package let requests = Atomic<Int>(0)
        package let bytes = Atomic<Int>(0)
        package let bodyBytes = Atomic<Int>(0)
        package let objects = Atomic<Int>(0)
    }

    struct Response {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: [UInt8]
    }

    /// A failure talking to the edge that retrying might cure (or that means we are offline).
    struct TransportError: Error, CustomStringConvertible {
        package var description: String
    }

    package func run() async throws -> SyncReport {
        guard let lockFD = try cache.lock(wait: settings.waitForLock, onWait: {
            FileHandle.standardError.write(Data("folio: another sync holds \(cache.dir)/lock; waiting for it\n".utf8))
        }) else {
            throw FolioError(.busy, "another folio sync is running on \(cache.dir)", path: cache.dir, hasContent: cache.current() != nil)
        }
        defer { close(lockFD) }
        do {
            return try await locked()
        } catch let failure as FolioError {
            // Record the failed attempt for `status` (the lock is held); the version stays as it was.
            if var state = cache.current()?.state {
                state.lastAttemptAt = Date()
                state.lastResult = failure.isTrustFailure || failure.code == .downgrade ? "refused" : "failed"
                state.lastError = failure.message
                try? cache.saveState(state, durable: false)
            }
            throw failure
        }
    }

    /// The sync proper, with the cache lock held.
    private func locked() async throws -> SyncReport {
        let start = ContinuousClock.now
        let counters = Counters()
        try cache.prepare()
        cache.removeLeftovers()

        let held = cache.current()
        var report = SyncReport(result: .notModified, versionBefore: held?.state.version, versionAfter: held?.state.version)
        func finish(_ r: inout SyncReport) -> SyncReport {
            r.requests = counters.requests.load(ordering: .relaxed)
            r.bytes = counters.bytes.load(ordering: .relaxed)
            r.bodyBytes = counters.bodyBytes.load(ordering: .relaxed)
            r.objectsFetched = counters.objects.load(ordering: .relaxed)
            let d = ContinuousClock.now - start
            r.durationMs = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
            return r
        }

        // Objects of the held version that are missing or damaged on disk.
        var damaged: [Manifest.Entry] = []
        var intact = Set<String>()
        if let held {
            damaged = missingObjects(held.manifest, reportCorrupt: true, verifiedAt: held.state.verifiedAt)
            let bad = Set(damaged.map(\.sha256))
            intact = Set(held.manifest.entries.map(\.sha256)).subtracting(bad)
        }

        // Honour the cache hints: no network while the manifest (and every entry's own policy) is fresh.
        if let held, !settings.force, damaged.isEmpty {
            let maxAge = Double(held.manifest.freshnessLifetime)
            let age = Date().timeIntervalSince(held.state.validatedAt)
            if age >= 0, age < maxAge {
                report.result = .fresh
                report.message = "version \(held.state.version) is fresh (validated \(Int(age))s ago, max-age \(Int(maxAge))s); --force checks anyway"
                return finish(&report)
            }
        }

        func offline(_ error: TransportError) -> SyncReport {
            if var state = held?.state {
                state.lastAttemptAt = Date()
                state.lastResult = "offline"
                state.lastError = error.description
                try? cache.saveState(state, durable: false)
            }
            report.result = .offline
            let keeping = held.map { "keeping cached version \($0.state.version)" } ?? "no cached version yet"
            report.message = "offline: cannot reach \(settings.edge) (\(error.description)); \(keeping)"
            return finish(&report)
        }

        // 1. What is current. A synced client asks for head.plist (a few hundred bytes) and, when
        // the version moved, rebuilds the new one from deltas; otherwise, and whenever a delta
        // is missing or wrong, it asks for the manifest (conditionally) and fetches objects whole.
        var manifest: Manifest
        let manifestBytes: [UInt8]
        var status: Int
        var manifestETag = held?.state.etag
        var headETag = held?.state.headETag
        var headMissing = held?.state.headMissing ?? false
        var delta: DeltaUse?
        var deltaBytes = 0
        var fromHead: (status: Int, bytes: [UInt8], manifest: Manifest)?
        if settings.deltas, let held, !headMissing, let heldBytes = try? FileIO.read(cache.manifestPath(held.state.version, sha256: held.state.manifestSHA256)) {
            let before = counters.bytes.load(ordering: .relaxed)
            var headers = [FolioHTTP.acceptEncoding]
            if let headETag { headers.append(("If-None-Match", headETag)) }
            let response: Response
            do {
                response = try await get(FolioHTTP.client, "/" + PublishedLayout.head, headers: headers, maxBody: 1 << 20, counters: counters, quick: true)
            } catch let error as TransportError {
                return offline(error)
            }
            switch response.status {
            case 304:
                fromHead = (304, heldBytes, held.manifest)
            case 200:
                headETag = response.headers.first(name: "etag")
                do {
                    let head = try DeltaHead(bytes: try decodeBody(response, limit: 1 << 20, what: PublishedLayout.head))
                    if head.sha256 == held.state.manifestSHA256 {
                        fromHead = (304, heldBytes, held.manifest)
                    } else {
                        let use = try await viaDeltas(head, held: held, heldBytes: heldBytes, counters: counters)
                        delta = use
                        fromHead = (200, use.manifestBytes, use.manifest)
                        manifestETag = nil
                    }
                } catch {
                    report.deltaFallback = "\(error)"
                }
            case 404, 410:
                headMissing = true
                headETag = nil
            default:
                report.deltaFallback = "GET /\(PublishedLayout.head) answered \(response.status)"
            }
            deltaBytes = counters.bytes.load(ordering: .relaxed) - before
        }
        if let fromHead {
            (status, manifestBytes, manifest) = fromHead
        } else {
            var headers = [FolioHTTP.acceptEncoding]
            if let etag = held?.state.etag { headers.append(("If-None-Match", etag)) }
            let manifestResponse: Response
            do {
                manifestResponse = try await get(FolioHTTP.client, "/" + PublishedLayout.manifest, headers: headers, maxBody: 64 << 20, counters: counters, quick: true)
            } catch let error as TransportError {
                return offline(error)
            }
            status = manifestResponse.status
            switch manifestResponse.status {
            case 304:
                guard let held else {
                    throw FolioError(.invalidResponse, "the edge answered 304 to an unconditional request")
                }
                manifest = held.manifest
                manifestBytes = try FileIO.read(cache.manifestPath(held.state.version, sha256: held.state.manifestSHA256))
            case 200:
                manifestBytes = try decodeBody(manifestResponse, limit: 64 << 20, what: PublishedLayout.manifest)
                do { manifest = try Manifest(bytes: manifestBytes) } catch {
                    throw FolioError(.invalidResponse, "the edge's \(PublishedLayout.manifest) is unusable: \(error)")
                }
                manifestETag = manifestResponse.headers.first(name: "etag") ?? held?.state.etag
                // A new version: an edge that had no head.plist may have one now.
                if headMissing {
                    headMissing = false
                    headETag = nil
                }
            default:
                throw FolioError(.invalidResponse, "GET \(settings.edge)/\(PublishedLayout.manifest) answered \(manifestResponse.status)")
            }
        }
        // With a trusted root: signatures, expiry and rollback, before anything is fetched or stored.
        var keyListVersion = held?.state.keyListVersion
        if let trust = settings.trust {
            let url = settings.edge + "/" + PublishedLayout.manifest
            do {
                let signed = try trust.verify(
                    manifestBytes, now: Date(), minimumKeyListVersion: held?.state.keyListVersion, parsed: manifest)
                manifest = signed.manifest
                report.signers = signed.verifiedSigners
                report.keyListVersion = signed.keyList.keyList.version
                keyListVersion = max(keyListVersion ?? 0, signed.keyList.keyList.version)
                if !settings.allowDowngrade, status == 200 { try Self.checkRollback(manifest, manifestBytes, held: held, seed: settings.seed) }
            } catch {
                throw FolioError(error, url: url, hasContent: held != nil || settings.seed != nil)
            }
        }
        // Signed or not, never back to a lower version than the one held (after the signature
        // checks, so that a forged old manifest is refused for what it is).
        if status == 200, let held, manifest.version < held.state.version, !settings.allowDowngrade {
            throw FolioError(.downgrade, "the edge offers version \(manifest.version), older than the cached version \(held.state.version) (a rollback?); pass --allow-downgrade to accept it")
        }

        // 2. The objects the cache lacks, fetched concurrently and verified.
        let sha = ContentHash.sha256Hex(manifestBytes)
        let sameManifest = held?.state.manifestSHA256 == sha
        var missing = sameManifest ? damaged : missingObjects(manifest, reportCorrupt: false, knownIntact: intact)
        // Objects the deltas rebuilt, checked against the (verified) manifest once more.
        var patched: [Manifest.Entry] = []
        if let rebuilt = delta?.objects, !rebuilt.isEmpty {
            missing = try missing.filter { entry in
                guard let bytes = rebuilt[entry.sha256], entry.matches(bytes) else { return true }
                try cache.storeObject(bytes, sha256: entry.sha256)
                patched.append(entry)
                return false
            }
        }
        let progress = settings.progress.flatMap { !missing.isEmpty ? ProgressCounter(total: missing.count, handler: $0) : nil }
        if !missing.isEmpty, let endpoint = TCPSocket.endpoint(settings.edge) {
            try fetchOnThreads(endpoint, missing, counters: counters, progress: progress)
        } else if !missing.isEmpty {
            let client = FolioHTTP.client
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                func add() {
                    guard next < missing.count else { return }
                    let entry = missing[next]
                    next += 1
                    group.addTask { try await fetchObject(client, entry, counters: counters, progress: progress) }
                }
                for _ in 0..<settings.concurrency { add() }
                while try await group.next() != nil { add() }
            }
        }

        // 3. The switch: the manifest, durability, then the state that names it.
        let now = Date()
        if !sameManifest { try cache.storeManifest(manifestBytes, version: manifest.version) }
        if counters.objects.load(ordering: .relaxed) > 0 || !patched.isEmpty || !sameManifest { try cache.syncAll() }
        let result: SyncReport.Result = !sameManifest ? .updated : (missing.isEmpty ? .notModified : .repaired)
        report.objectsPatched = patched.count
        let fetched = counters.objects.load(ordering: .relaxed)
        if result == .updated { report.method = delta.map { $0.steps > 1 ? "delta-chain" : "delta" } ?? "whole" }
        if let delta, result == .updated {
            // What the same sync would have received without deltas: the manifest and the rebuilt
            // objects whole, each with a response head like this sync's, instead of head.plist
            // and the deltas.
            let requests = max(1, counters.requests.load(ordering: .relaxed))
            let heads = (counters.bytes.load(ordering: .relaxed) - counters.bodyBytes.load(ordering: .relaxed)) / requests
            let whole = counters.bytes.load(ordering: .relaxed) - deltaBytes + delta.manifestWireSize + heads
                + patched.reduce(0) { $0 + ($1.gzipSize ?? $1.size) + heads }
            report.bytesSaved = whole - counters.bytes.load(ordering: .relaxed)
            report.deltaSteps = delta.steps
            if delta.failedEdits > 0 { report.deltaFallback = "\(delta.failedEdits) object edits did not verify; fetched whole" }
        }
        var lastMethod = held?.state.lastMethod
        if result == .updated {
            let total = counters.bytes.load(ordering: .relaxed)
            lastMethod = delta.map { d in
                "\(d.steps > 1 ? "\(d.steps) deltas" : "delta") from version \(held?.state.version ?? 0): \(patched.count) objects patched, \(fetched) fetched whole; \(total) bytes (\(report.bytesSaved ?? 0) saved)"
            } ?? "whole objects: \(fetched) fetched; \(total) bytes" + (report.deltaFallback.map { " (no delta: \($0))" } ?? "")
        }
        var state = ContentCache.State(
            version: manifest.version, manifestSHA256: sha, etag: manifestETag,
            validatedAt: now, lastAttemptAt: now, lastResult: result.rawValue, verifiedAt: now,
            highestVersion: max(manifest.version, held?.state.highestVersion ?? held?.state.version ?? 0),
            keyListVersion: keyListVersion)
        state.headETag = headETag
        state.headMissing = headMissing
        state.lastMethod = lastMethod
        try cache.saveState(state, durable: result != .notModified)
        report.result = result
        report.versionAfter = manifest.version
        switch result {
        case .updated:
            report.message = "updated to version \(manifest.version)" + (held.map { " from \($0.state.version)" } ?? "")
                + (delta == nil ? ": \(fetched) objects fetched" : ": \(patched.count) objects patched by \(delta!.steps > 1 ? "\(delta!.steps) deltas" : "a delta"), \(fetched) fetched whole")
        case .repaired:
            report.message = "version \(manifest.version): fetched \(missing.count) missing or damaged objects again"
        default:
            report.message = "version \(manifest.version) is current"
        }
        return finish(&report)
    }

    /// Refuses a verified manifest older than what this client has already held or bundles:
    /// within one publish history by version (an equal version must be the same bytes), across
    /// histories by creation time.
    private static func checkRollback(
        _ manifest: Manifest, _ bytes: [UInt8], held: (state: ContentCache.State, manifest: Manifest)?, seed: Manifest?
    ) throws(TrustError) {
        if let held {
            let floor = max(held.state.version, held.state.highestVersion ?? 0)
            if manifest.history == held.manifest.history {
                if manifest.version < floor {
                    throw TrustError(.rollback, "the edge offers version \(manifest.version), older than version \(floor) already verified here (a rollback or replay)")
                }
                if manifest.version == held.state.version, ContentHash.sha256Hex(bytes) != held.state.manifestSHA256 {
                    throw TrustError(.rollback, "the edge offers version \(manifest.version) with other bytes than the version \(manifest.version) verified here")
                }
            } else if manifest.createdAt < held.manifest.createdAt {
                throw TrustError(.rollback, "the edge offers a version published \(PlistDates.formatISO8601(manifest.createdAt)), before the one held (\(PlistDates.formatISO8601(held.manifest.createdAt)))")
            }
        }
        if let seed {
            if manifest.history == seed.history ? manifest.version < seed.version : manifest.createdAt < seed.createdAt {
                throw TrustError(.rollback, "the edge offers version \(manifest.version), older than the bundled seed's version \(seed.version) (a rollback)")
            }
            if manifest.history == seed.history, manifest.version == seed.version, manifest != seed {
                throw TrustError(.rollback, "the edge offers version \(manifest.version) with other content than the bundled seed's version \(seed.version)")
            }
        }
    }

    /// Entries whose objects are not usable in the cache (deduplicated by hash).
    /// Objects verified intact a moment ago (`knownIntact`) are not read again.
    /// Objects untouched since the last full check (`verifiedAt`) are not hashed again.
    private func missingObjects(
        _ manifest: Manifest, reportCorrupt: Bool, knownIntact: Set<String> = [], verifiedAt: Date? = nil
    ) -> [Manifest.Entry] {
        var seen = knownIntact
        var out: [Manifest.Entry] = []
        for e in manifest.entries where seen.insert(e.sha256).inserted {
            if let verifiedAt, cache.unchangedSince(verifiedAt, e) { continue }
            do {
                if try cache.object(e) == nil { out.append(e) }
            } catch {
                if reportCorrupt { FileHandle.standardError.write(Data("folio: \(error)\n".utf8)) }
                out.append(e)
            }
        }
        return out
    }

    /// Plain-http edges: `settings.concurrency` threads, each with one keep-alive connection
    /// and blocking sockets, take the objects in turn; the first failure stops them all.
    /// Measured on loopback, this costs a fraction of the pooled async client's per-request
    /// overhead, which was most of a full sync's time (https edges keep AsyncHTTPClient).
    private func fetchOnThreads(
        _ endpoint: (host: String, port: Int), _ missing: [Manifest.Entry], counters: Counters, progress: ProgressCounter?
    ) throws {
        let next = Atomic<Int>(0)
        let failure = Mutex<(any Error)?>(nil)
        let timeoutMs = Int32(settings.timeout.nanoseconds / 1_000_000)
        let workers = max(1, min(settings.concurrency, missing.count))
        _ = Parallel.map(Array(0..<workers), threads: workers) { _ in
            let connection = QuickHTTP.Connection(endpoint, timeoutMs: timeoutMs)
            while failure.withLock({ $0 == nil }) {
                let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard i < missing.count else { return }
                do {
                    let entry = missing[i]
                    let response = try quickGet(connection, "/" + entry.objectPath, maxBody: max(entry.size, entry.gzipSize ?? 0) + 1024, counters: counters, what: entry.path)
                    try store(response, entry, counters: counters, progress: progress)
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// One object GET on a keep-alive connection, with the same retries and backoff as ``get``.
    private func quickGet(_ connection: QuickHTTP.Connection, _ path: String, maxBody: Int, counters: Counters, what: String) throws -> Response {
        var lastError = ""
        for attempt in 0..<settings.attempts {
            if attempt > 0 { Thread.sleep(forTimeInterval: Double(100 * (1 << (attempt - 1)) + Int.random(in: 0...50)) / 1000) }
            counters.requests.add(1, ordering: .relaxed)
            do {
                let r = try connection.get(path, headers: [FolioHTTP.acceptEncoding], maxBody: maxBody)
                if let response = accept(r, attempt: attempt, counters: counters, lastError: &lastError) { return response }
            } catch let failure as QuickHTTP.Failure {
                lastError = failure.description
            }
        }
        throw FolioError(.edgeUnreachable, "fetching \(what) failed: \(lastError); the cache keeps its current version")
    }

    /// Counts a response read by QuickHTTP; nil (with `lastError` set) when it is a 5xx worth
    /// another attempt.
    private func accept(_ r: QuickHTTP.Response, attempt: Int, counters: Counters, lastError: inout String) -> Response? {
        counters.bytes.add(r.headBytes + r.body.count, ordering: .relaxed)
        counters.bodyBytes.add(r.body.count, ordering: .relaxed)
        if r.status >= 500, attempt + 1 < settings.attempts {
            lastError = "HTTP \(r.status)"
            return nil
        }
        return Response(status: r.status, headers: r.headers, body: r.body)
    }

    private func fetchObject(_ client: HTTPClient, _ entry: Manifest.Entry, counters: Counters, progress: ProgressCounter?) async throws {
        let response: Response
        do {
            response = try await get(
                client, "/" + entry.objectPath, headers: [FolioHTTP.acceptEncoding],
                maxBody: max(entry.size, entry.gzipSize ?? 0) + 1024, counters: counters)
        } catch let error as TransportError {
            throw FolioError(.edgeUnreachable, "fetching \(entry.path) failed: \(error); the cache keeps its current version")
        }
        try store(response, entry, counters: counters, progress: progress)
    }

    /// Checks an object's response (status, gzip, size, hash) and writes it to the cache.
    private func store(_ response: Response, _ entry: Manifest.Entry, counters: Counters, progress: ProgressCounter?) throws {
        guard response.status == 200 else {
            throw FolioError(.invalidResponse, "GET \(settings.edge)/\(entry.objectPath) answered \(response.status); the cache keeps its current version")
        }
        let bytes = try decodeBody(response, limit: entry.size, what: entry.path)
        guard entry.matches(bytes) else {
            throw FolioError(
                .invalidResponse,
                "object for \(entry.path) does not match the manifest (expected \(entry.size) bytes with sha256 \(entry.sha256), got \(bytes.count) bytes with sha256 \(ContentHash.sha256Hex(bytes))); rejected, the cache keeps its current version",
                path: entry.path, url: settings.edge + "/" + entry.objectPath)
        }
        try cache.storeObject(bytes, sha256: entry.sha256)
        counters.objects.add(1, ordering: .relaxed)
        progress?.advance(bytes: response.body.count)
    }

    /// The body decoded from its content coding (gzip or brotli), refusing more than `limit` bytes.
    func decodeBody(_ response: Response, limit: Int, what: String) throws -> [UInt8] {
        let coding = response.headers.first(name: "content-encoding")
        do { return try ContentDecoding.decode(response.body, coding: coding, maxSize: limit) } catch let unsupported as ContentDecoding.Unsupported {
            throw FolioError(.invalidResponse, "\(what): the edge answered in the content coding \"\(unsupported.coding)\", which sync does not ask for")
        } catch {
            throw FolioError(.invalidResponse, "\(what): bad \(coding?.lowercased() ?? "") body from the edge: \(error)")
        }
    }

    /// One GET with retries and exponential backoff on transport errors and 5xx.
    func get(
        _ client: @autoclosure () -> HTTPClient, _ path: String, headers: [(String, String)], maxBody: Int,
        counters: Counters, quick: Bool = false
    ) async throws -> Response {
        var lastError = ""
        for attempt in 0..<settings.attempts {
            if attempt > 0 {
                let delay = 100 * (1 << (attempt - 1)) + Int.random(in: 0...50)
                try await Task.sleep(for: .milliseconds(delay))
            }
            if quick, let endpoint = TCPSocket.endpoint(settings.edge) {
                counters.requests.add(1, ordering: .relaxed)
                do {
                    let r = try QuickHTTP.get(
                        endpoint, path: path, headers: headers,
                        timeoutMs: Int32(settings.timeout.nanoseconds / 1_000_000), maxBody: maxBody)
                    if let response = accept(r, attempt: attempt, counters: counters, lastError: &lastError) { return response }
                    continue
                } catch let failure as QuickHTTP.Failure {
                    lastError = failure.description
                    continue
                }
            }
            var request = HTTPClientRequest(url: settings.edge + path)
            request.headers.add(name: "User-Agent", value: "folio/\(folioVersion)")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            counters.requests.add(1, ordering: .relaxed)
            do {
                let response = try await client().execute(request, timeout: settings.timeout)
                let body = try await response.body.collect(upTo: maxBody)
                var headerBytes = 17 + response.status.reasonPhrase.utf8.count
                for (n, v) in response.headers { headerBytes += n.utf8.count + v.utf8.count + 4 }
                counters.bytes.add(body.readableBytes + headerBytes, ordering: .relaxed)
                counters.bodyBytes.add(body.readableBytes, ordering: .relaxed)
                let status = Int(response.status.code)
                if status >= 500, attempt + 1 < settings.attempts {
                    lastError = "HTTP \(status)"
                    continue
                }
                return Response(status: status, headers: response.headers, body: Array(body.readableBytesView))
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                lastError = Self.describe(error)
            }
        }
        throw TransportError(description: lastError)
    }

    package static func describe(_ error: any Error) -> String {
        if let tls = error as? NIOSSLError, case .handshakeFailed = tls {
            return "the TLS handshake failed: the edge's certificate is not trusted here, or it does not speak TLS; "
                + "for a private certificate authority set \(FolioHTTP.caFileVariable) to its PEM file"
        }
        let text = String(describing: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") || text.contains("ECONNREFUSED") {
            return "connection refused"
        }
        if text.contains("connectTimeout") { return "connect timeout" }
        if text.contains("deadlineExceeded") || text.contains("readTimeout") { return "timed out" }
        return text.count > 160 ? String(text.prefix(160)) + "…" : text
    }
}

/// How far a sync's object downloads have got, for a progress bar.
public struct SyncProgress: Sendable, Hashable {
    /// Objects fetched and verified so far.
    public var objectsDone: Int
    /// Objects this sync fetches.
    public var objectsTotal: Int
    /// Bytes received for them so far (as sent, compressed).
    public var bytesReceived: Int

    /// Done objects over all of them, from 0 to 1 (1 when there is nothing to fetch).
    public var fraction: Double { objectsTotal == 0 ? 1 : Double(objectsDone) / Double(objectsTotal) }
}

/// Counts finished objects and reports each step to the sync's progress handler.
final class ProgressCounter: Sendable {
    private let total: Int
    private let state = Mutex<(done: Int, bytes: Int)>((0, 0))
    private let handler: @Sendable (SyncProgress) -> Void

    init(total: Int, handler: @escaping @Sendable (SyncProgress) -> Void) {
        self.total = total
        self.handler = handler
        handler(SyncProgress(objectsDone: 0, objectsTotal: total, bytesReceived: 0))
    }

    /// Reports under the lock, so that the handler sees the steps in order from any thread.
    func advance(bytes: Int) {
        state.withLock { s in
            s.done += 1
            s.bytes += bytes
            handler(SyncProgress(objectsDone: s.done, objectsTotal: total, bytesReceived: s.bytes))
        }
    }
}

