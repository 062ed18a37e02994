import AsyncHTTPClient
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// A request as the cache tier received it (body collected).
struct ProxyRequest: Sendable {
    var method: HTTPMethod
    var target: String
    var headers: HTTPHeaders
    var body: ByteBuffer?
}

/// A response the cache tier sends (body complete; none for HEAD, 204 and 304).
struct ProxyResponse: Sendable {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: ByteBuffer?
    /// `headers` already carry the right Content-Length (answers from the store).
    var lengthSet = false
    /// The origin that sent it (nil: made here).
    var origin: OriginRef? = nil

    /// The `origin="host:port"` parameter of its `Cache-Status` ("" when made here).
    var via: String { origin?.parameter ?? "" }
}

/// A shared HTTP cache (RFC 9111) in front of one or more origins: answers from its store what
/// it may, validates what is stale, forwards the rest (see `OriginForwarding.swift`), stores
/// what the origin allows, and says what it did, and which origin answered, in `Cache-Status`
/// (RFC 9211).
final class HTTPCache: Sendable {
    /// The origins and their health checks, replaced together by a reload (`reconfigure`).
    let origins: Mutex<Origins>
    /// The origins a request starts with (it keeps them to the end, whatever a reload does).
    var pool: OriginPool { origins.withLock { $0.pool } }
    var health: OriginHealthChecker { origins.withLock { $0.health } }
    /// Where health checks run.
    let group: any EventLoopGroup
    let store: CacheStore
    let admin: CacheAdmin
    let metrics: EdgeMetrics
    /// Send each authorized purge to the origin first (a chain of tiers sharing one token).
    let purgeOrigin: Bool
    let client: HTTPClient
    let name = "folio-edge"
    private let hitStatus = "folio-edge; hit"
    /// How long one origin request may take.
    let timeout: TimeAmount
    /// Keys with a background revalidation (stale-while-revalidate) in flight.
    private let refreshing = Mutex<Set<String>>([])
    /// Requests waiting for another's origin request, by key; keys not worth waiting on, until when.
    private struct Flights {
        var waiting: [String: [(ProxyRequest, EventLoopPromise<ProxyResponse>)]] = [:]
        var passUntil: [String: Double] = [:]
    }
    private let flights = Mutex(Flights())
    /// How long a request waits for another's origin request before going itself.
    let coalesceWait: TimeAmount = .seconds(10)
    /// Seconds a key whose response could not be stored is not waited on.
    let passTime: Double = 30
    let clock: @Sendable () -> Double
    /// Root keys an origin's manifest must verify under to be stored or forwarded (nil: any).
    let trust: Trust?

    init(
        pool: OriginPool, store: CacheStore, admin: CacheAdmin, metrics: EdgeMetrics, group: any EventLoopGroup,
        purgeOrigin: Bool = false, originCA: String? = nil, trust: Trust? = nil, timeout: TimeAmount = .seconds(30),
        healthInterval: TimeAmount = .seconds(1), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.trust = trust
        self.group = group
        self.store = store
        self.admin = admin
        self.metrics = metrics
        self.purgeOrigin = purgeOrigin
        self.timeout = timeout
        self.clock = clock
        var config = HTTPClient.Configuration()
        config.decompression = .disabled
        config.redirectConfiguration = .disallow
        if let originCA {
            // An https origin with a private CA: trust it instead of the system's roots.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(originCA)
            config.tlsConfiguration = tls
        }
        config.timeout = .init(connect: min(.seconds(5), timeout), read: timeout)
        // Idle origin connections are closed after 2 s, before the origin's own keep-alive timeout
        // (5 s in Node and Apache httpd) can close one just as a request is sent on it.
        config.connectionPool = .init(idleTimeout: .seconds(2), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        // An origin that refuses connections or fails the TLS handshake is an answer (a stale
        // copy or 502 now), not something to retry until the request's deadline.
        config.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .shared(group), configuration: config)
        origins = Mutex(Origins(pool: pool, health: OriginHealthChecker(pool: pool, client: client, interval: healthInterval)))
    }

    func shutdown() async {
        health.stop()
        try? await client.shutdown()
    }

    // MARK: - Answering a request

    /// How a hit is answered without a future: from the stored response's prepared head, or
    /// (with the request's conditions or range applied) as a response.
    enum Hit {
        case prepared(StoredResponse)
        case prepared304(StoredResponse)
        case response(ProxyResponse)
    }

    /// The answer to a plain GET or HEAD that a fresh stored response satisfies (no request
    /// directives, no Authorization, not an admin request, not under maintenance); nil for
    /// everything else, which `handle` answers.
    func answerFromCache(_ request: ProxyRequest) -> Hit? {
        guard request.method == .GET || request.method == .HEAD, !request.target.hasPrefix("/.folio/"),
            !request.headers.contains(name: "cache-control"), !request.headers.contains(name: "pragma"),
            !request.headers.contains(name: "authorization"), !admin.isMaintenance
        else { return nil }
        let now = clock()
        for stored in store.variants(request.target, selecting: request.headers) where stored.varyMatches(request.headers) {
            guard CachePolicy.isUsable(stored, requestControl: CacheControl(), now: now) else { return nil }
            let h = request.headers
            // The common revalidation: If-None-Match with exactly the stored ETag, nothing else.
            if stored.prepared304 != nil, let inm = h.first(name: "if-none-match"), inm == stored.etag,
                !h.contains(name: "range"), !h.contains(name: "if-modified-since")
            {
                return .prepared304(stored)
            }
            if h.contains(name: "if-none-match") || h.contains(name: "if-modified-since") || h.contains(name: "range") {
                return .response(serve(stored, to: request, now: now, cacheStatus: "hit"))
            }
            return .prepared(stored)
        }
        return nil
    }

    /// A plain hit as bytes: the prepared head (of the 200, or of the 304), `Age`, and the
    /// body (none for HEAD or a 304).
    func preparedHit(
        _ stored: StoredResponse, notModified: Bool = false, method: HTTPMethod, keepAlive: Bool, allocator: ByteBufferAllocator,
        extraLines: String = ""
    ) -> [ByteBuffer] {
        let prepared = notModified ? (stored.prepared304 ?? stored.preparedHead) : stored.preparedHead
        var head = allocator.buffer(capacity: prepared.readableBytes + 40 + extraLines.utf8.count)
        head.writeImmutableBuffer(prepared)
        head.writeString("Age: \(Int(stored.currentAge(now: clock())))\r\n")
        if !keepAlive { head.writeStaticString("Connection: close\r\n") }
        head.writeString(extraLines)
        head.writeStaticString("\r\n")
        if notModified || method == .HEAD || stored.body.readableBytes == 0 { return [head] }
        return [head, stored.body]
    }

    /// What the store holds, into the metrics (at each scrape).
    private func recordUsage() {
        let usage = store.usage
        metrics.cacheEntries.record(usage.entries)
        metrics.cacheBytes.record(usage.bytes)
        guard let disk = store.diskUsage else { return }
        metrics.diskEntries.record(disk.entries)
        metrics.diskBytes.record(disk.bytes)
        metrics.diskReads.record(store.diskReads.load(ordering: .relaxed))
        metrics.diskFailures.record(store.diskFailures.load(ordering: .relaxed))
        metrics.diskFull.record(store.fullDisk.isFull ? 1 : 0)
        metrics.diskOpenFiles.record(store.openFileCount)
    }

    /// Answers one request. `joined` is set for a request that already waited for another's
    /// origin request to the same key, so that it never waits twice.
    func handle(_ request: ProxyRequest, on loop: any EventLoop, joined: Bool = false, role: ListenerRole = .all) -> EventLoopFuture<ProxyResponse> {
        if let refused = Self.refused(request, role: role) { return loop.makeSucceededFuture(refused) }
        let key = request.target
        if request.method == .POST, request.target == "/.folio/notify" { return loop.makeSucceededFuture(notified(on: loop)) }
        if request.method == .GET, request.target == "/.folio/metrics" {
            recordUsage()
            var r = CacheAdmin.text(.ok, "")
            r.headers.replaceOrAdd(name: "Content-Type", value: "text/plain; version=0.0.4")
            r.body = ByteBuffer(bytes: metrics.render())
            return loop.makeSucceededFuture(r)
        }
        if CacheAdmin.isAdmin(request) {
            // With --purge-origin, an authorized purge goes down the chain of tiers first, so
            // that this tier does not fetch the purged content again from the next one.
            if purgeOrigin, CacheAdmin.isPurge(request), admin.isAuthorized(request) {
                return purgeOrigins(request, on: loop).map { upstream in
                    var r = self.admin.handle(request, store: self.store, origins: self.pool.statuses())
                    let each = upstream.map { $0.map { String($0) } ?? "unreachable" }
                    r.headers.add(name: "Folio-Purge-Origin", value: each.joined(separator: ", "))
                    return r
                }
            }
            return loop.makeSucceededFuture(admin.handle(request, store: store, origins: pool.statuses()))
        }
        if admin.isMaintenance { return loop.makeSucceededFuture(maintenanceAnswer(request)) }
        guard request.method == .GET || request.method == .HEAD else {
            return forward(request, on: loop).map { [store] fetched in
                if CachePolicy.isUnsafe(request.method), (200..<400).contains(fetched.status.code) {
                    self.invalidate(key, fetched.headers, store: store)
                }
                return self.respond(fetched, cacheStatus: "fwd=method")
            }.flatMapErrorThrowing { self.gatewayError($0) }
        }
        var requestControl = request.headers.contains(name: "cache-control") ? (CacheControl(request.headers) ?? CacheControl()) : CacheControl()
        if !request.headers.contains(name: "cache-control"), request.headers.contains(name: "pragma"),
            request.headers["pragma"].contains(where: { $0.lowercased().contains("no-cache") })
        {
            requestControl.noCache = true
        }
        let now = clock()
        let variants = store.variants(key)
        let selected = variants.first { $0.varyMatches(request.headers) }
        let authorized = request.headers.contains(name: "authorization")
        if let stored = selected, !authorized || stored.control.isPublic || stored.control.mustRevalidate || stored.control.sMaxAge != nil {
            // An immutable response is never revalidated while fresh, even when the client asks.
            let immutableFresh = stored.control.immutable && stored.currentAge(now: now) < stored.lifetime
            if !requestControl.noCache || immutableFresh {
                if immutableFresh || CachePolicy.isUsable(stored, requestControl: requestControl, now: now) {
                    return loop.makeSucceededFuture(serve(stored, to: request, now: now, cacheStatus: "hit"))
                }
                if CachePolicy.allowsStaleWhileRevalidate(stored, now: now) {
                    revalidateInBackground(stored, request, on: loop)
                    return loop.makeSucceededFuture(serve(stored, to: request, now: now, cacheStatus: "hit; detail=stale-while-revalidate"))
                }
            }
            if requestControl.onlyIfCached { return loop.makeSucceededFuture(onlyIfCachedMiss()) }
            if request.method == .HEAD {
                // Written through as a HEAD; a 200 refreshes the stored GET's fields.
                return fetchAndStore(request, requestControl: requestControl, on: loop, reason: requestControl.noCache ? "request" : "stale")
            }
            return coalesced(key, request, on: loop, joined: joined || requestControl.noCache) {
                self.validate(stored, request, requestControl: requestControl, on: loop, reason: requestControl.noCache ? "request" : "stale")
            }
        }
        if requestControl.onlyIfCached { return loop.makeSucceededFuture(onlyIfCachedMiss()) }
        let reason = variants.isEmpty ? "uri-miss" : (selected == nil ? "vary-miss" : "miss")
        return coalesced(key, request, on: loop, joined: joined) {
            self.fetchAndStore(request, requestControl: requestControl, on: loop, reason: reason)
        }
    }

    // MARK: - Coalescing

    /// Concurrent GETs for one key that all need the origin: the first goes (`lead`), the others
    /// wait for it, at most `coalesceWait`, then are answered again, from what it stored or, when
    /// that does not serve them, each by the origin at once. A key whose response could not be
    /// stored is not waited on for `passTime` seconds (a "hit-for-pass"), so requests for an
    /// uncacheable URL never queue behind one another.
    private func coalesced(
        _ key: String, _ request: ProxyRequest, on loop: any EventLoop, joined: Bool,
        _ lead: @escaping () -> EventLoopFuture<ProxyResponse>
    ) -> EventLoopFuture<ProxyResponse> {
        guard request.method == .GET, !joined, !request.headers.contains(name: "authorization") else { return lead() }
        let now = clock()
        enum Role { case pass, lead, wait(EventLoopPromise<ProxyResponse>) }
        let role: Role = flights.withLock { f in
            if let until = f.passUntil[key], until > now { return .pass }
            if f.waiting[key] != nil {
                let promise = loop.makePromise(of: ProxyResponse.self)
                f.waiting[key]!.append((request, promise))
                return .wait(promise)
            }
            f.waiting[key] = []
            return .lead
        }
        switch role {
        case .pass:
            return lead()
        case .wait(let promise):
            let id = ObjectIdentifier(promise.futureResult)
            loop.scheduleTask(in: coalesceWait) {
                let stillWaiting = self.flights.withLock { f in
                    guard let i = f.waiting[key]?.firstIndex(where: { ObjectIdentifier($0.1.futureResult) == id }) else { return false }
                    f.waiting[key]!.remove(at: i)
                    return true
                }
                if stillWaiting { self.handle(request, on: loop, joined: true).cascade(to: promise) }
            }
            return promise.futureResult
        case .lead:
            break
        }
        let result = lead()
        result.whenComplete { outcome in
            let stored: Bool
            if case .success(let r) = outcome { stored = r.headers["cache-status"].contains { $0.contains("stored") || $0.contains("fwd-status=304") } } else { stored = false }
            let waiters = self.flights.withLock { f in
                if !stored {
                    if f.passUntil.count > 10_000 { f.passUntil = f.passUntil.filter { $0.value > now } }
                    f.passUntil[key] = now + self.passTime
                }
                return f.waiting.removeValue(forKey: key) ?? []
            }
            for (request, promise) in waiters {
                self.handle(request, on: promise.futureResult.eventLoop, joined: true).cascade(to: promise)
            }
        }
        return result
    }

    /// Forwards a miss; stores the response when allowed.
    private func fetchAndStore(_ request: ProxyRequest, requestControl: CacheControl, on loop: any EventLoop, reason: String) -> EventLoopFuture<ProxyResponse> {
        let sent = clock()
        let floor = request.method == .GET ? storedManifestVersion(request.target) : nil
        return forward(request, on: loop, accepting: notOlder(than: floor)).flatMap { fetched in
            self.prefetchObjects(of: fetched, request, on: loop).map { fetched }
        }.map { fetched in
            var status = "fwd=\(reason)"
            if Self.isOlder(fetched, than: floor) {
                // Every origin is behind the stored version: passed on, not stored.
                return self.respond(fetched, cacheStatus: status + "; detail=older-manifest")
            }
            if request.method == .GET {
                if let stored = self.storeIfAllowed(fetched, request, requestControl: requestControl, requestTime: sent) {
                    status += "; stored" + fetched.via
                    return self.serve(stored, to: request, now: self.clock(), cacheStatus: status)
                }
            } else {
                self.refreshFromHead(fetched, request)
            }
            return self.respond(fetched, cacheStatus: status)
        }.flatMapErrorThrowing { self.gatewayError($0) }
    }

    /// Asks the origin whether `stored` is still good (a conditional request when it has
    /// validators); serves the stored response updated by a 304, or the new one.
    private func validate(
        _ stored: StoredResponse, _ request: ProxyRequest, requestControl: CacheControl, on loop: any EventLoop, reason: String
    ) -> EventLoopFuture<ProxyResponse> {
        var conditional = request
        conditional.method = .GET
        for name in ["if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range"] {
            conditional.headers.remove(name: name)
        }
        if let etag = stored.etag { conditional.headers.add(name: "If-None-Match", value: etag) }
        if let lm = stored.lastModified { conditional.headers.add(name: "If-Modified-Since", value: lm) }
        let sent = clock()
        let floor = storedManifestVersion(request.target)
        return forward(conditional, on: loop, accepting: notOlder(than: floor)).flatMap { fetched in
            self.prefetchObjects(of: fetched, request, on: loop).map { fetched }
        }.map { fetched in
            let now = self.clock()
            let via = fetched.via
            if Self.isOlder(fetched, than: floor) {
                // Every origin is behind: the stored, newer manifest stays and is served.
                return self.serve(stored, to: request, now: now, cacheStatus: "fwd=\(reason); fwd-status=200; detail=older-manifest\(via)")
            }
            if fetched.status == .notModified {
                let updated = self.updated(stored, with: fetched.headers, request: request, requestTime: sent, responseTime: now)
                if CachePolicy.whyNotStorable(
                    method: .GET, requestHeaders: request.headers, requestControl: requestControl,
                    status: updated.status, headers: updated.headers) == nil
                {
                    self.store.store(updated)
                } else {
                    self.store.remove(stored)
                }
                return self.serve(updated, to: request, now: now, cacheStatus: "fwd=\(reason); fwd-status=304\(via)")
            }
            if fetched.status.code >= 500, CachePolicy.allowsStaleIfError(stored, requestControl: requestControl, now: now) {
                return self.serve(stored, to: request, now: now, cacheStatus: "fwd=\(reason); fwd-status=\(fetched.status.code); detail=stale-if-error\(via)")
            }
            if let fresh = self.storeIfAllowed(fetched, request, requestControl: requestControl, requestTime: sent) {
                return self.serve(fresh, to: request, now: now, cacheStatus: "fwd=\(reason); fwd-status=\(fetched.status.code); stored\(via)")
            }
            if fetched.status.code < 500 { self.store.remove(stored) }
            return self.respond(fetched, cacheStatus: "fwd=\(reason); fwd-status=\(fetched.status.code)", conditionsFrom: request)
        }.flatMapError { error in
            // Disconnected from the origin: a stale response may stand in unless its directives
            // forbid that (RFC 9111 §4.2.4).
            let now = self.clock()
            if !CachePolicy.forbidsStale(stored), !stored.control.noCache, !requestControl.noCache {
                let detail = error is UntrustedOriginManifest ? "untrusted-manifest" : error is S3OriginRefused ? "origin-refused" : "origin-unreachable"
                return loop.makeSucceededFuture(self.serve(stored, to: request, now: now, cacheStatus: "fwd=\(reason); detail=\(detail)"))
            }
            return loop.makeSucceededFuture(self.gatewayError(error))
        }
    }

    /// One background revalidation per key (stale-while-revalidate); its result is stored.
    private func revalidateInBackground(_ stored: StoredResponse, _ request: ProxyRequest, on loop: any EventLoop) {
        let first = refreshing.withLock { $0.insert(stored.key).inserted }
        guard first else { return }
        var background = request
        background.method = .GET
        validate(stored, background, requestControl: CacheControl(), on: loop, reason: "stale").whenComplete { _ in
            _ = self.refreshing.withLock { $0.remove(stored.key) }
        }
    }

    // MARK: - Folio manifests

    /// `POST /.folio/notify` (from `folio-build --notify`; no token: all it can cause is a few
    /// revalidations): every stored manifest (`…/manifest.plist`, `…/manifest.json`), head
    /// (`…/head.plist`) and `/content/` response is marked stale and revalidated now, which also prefetches a new
    /// version's objects before the new manifest is served. The origin may not have loaded the
    /// new version yet (an edge notices a publish within its watch interval), so while a
    /// revalidation still finds the old one it is tried again, 0.25 to 4 s later, for about 8 s.
    private func notified(on loop: any EventLoop) -> ProxyResponse {
        // Anyone may notify, so at most once a second: more would only multiply origin requests.
        let now = clock()
        let accepted = lastNotify.withLock { last in
            guard now - last >= 1 else { return false }
            last = now
            return true
        }
        guard accepted else { return CacheAdmin.json(.tooManyRequests, ["marked": 0]) }
        let keys = store.keys(prefix: "").filter { key in
            let path = key.split(separator: "?", maxSplits: 1).first.map(String.init) ?? key
            return path.hasSuffix("/" + PublishedLayout.manifest) || path.hasSuffix("/" + PublishedLayout.manifestJSON)
                || path.hasSuffix("/" + PublishedLayout.head) || path.contains("/content/")
        }
        var marked = 0
        for key in keys {
            for stored in store.variants(key) {
                marked += 1
                refreshAfterNotify(stored, attempt: 0, on: loop)
            }
        }
        return CacheAdmin.json(.ok, ["marked": marked])
    }

    private let lastNotify = Mutex<Double>(-1)

    private static let notifyRetryDelays: [Int64] = [0, 250, 500, 1000, 2000, 4000]

    /// Marks `stored` stale and revalidates it after the attempt's delay, again while the
    /// origin still answers with the same validator.
    private func refreshAfterNotify(_ stored: StoredResponse, attempt: Int, on loop: any EventLoop) {
        guard attempt < Self.notifyRetryDelays.count else { return }
        store.store(stored.markingStale())
        let headers = stored.selectingHeaders
        let request = ProxyRequest(method: .GET, target: stored.key, headers: headers, body: nil)
        loop.scheduleTask(in: .milliseconds(Self.notifyRetryDelays[attempt])) {
            guard let current = self.store.variants(stored.key).first(where: { $0.varyMatches(headers) }), current.etag == stored.etag else { return }
            self.validate(current, request, requestControl: CacheControl(), on: loop, reason: "stale").whenComplete { _ in
                guard let after = self.store.variants(stored.key).first(where: { $0.varyMatches(headers) }), after.etag == stored.etag,
                    after.etag != nil || after.lastModified != nil
                else { return }
                self.refreshAfterNotify(after, attempt: attempt + 1, on: loop)
            }
        }
    }

    /// A body decoded from its content coding (identity, gzip or brotli, up to 64 MiB); nil when
    /// it does not decode.
    static func decoded(_ bytes: [UInt8], _ coding: String?) -> [UInt8]? {
        try? ContentDecoding.decode(bytes, coding: coding, maxSize: 64 << 20)
    }

    /// How many object requests a manifest's prefetch keeps in flight, and how long it may take
    /// before the manifest is served anyway.
    let prefetchConcurrency = 8
    let prefetchLimit: TimeAmount = .seconds(30)

    /// Where the objects of the manifest at `path` (`…/manifest.plist`) are: beside it, or at
    /// the published root above `channels/` for a channel's (`…/channels/<name>/manifest.plist`).
    static func objectsPrefix(ofManifest path: String) -> String {
        let dir = String(path.dropLast(PublishedLayout.manifest.count))
        guard let name = dir.split(separator: "/").last, Channel.isValidName(String(name)) else { return dir }
        let channelDir = "/" + PublishedLayout.channels + "/" + name + "/"
        return dir.hasSuffix(channelDir) ? String(dir.dropLast(channelDir.count - 1)) : dir
    }

    /// A new Folio manifest (a 200 for `…/manifest.plist`) is served only once the objects it
    /// lists, in every release, are in the cache, each fetched with the manifest request's
    /// `Accept-Encoding` (a client asks for its objects as it asked for the manifest; sync's
    /// `br, gzip` without one), so a client that follows the manifest never misses here.
    /// Anything else passes at once, as does a body that is not a manifest; a failed object is
    /// left for the client to fetch.
    private func prefetchObjects(of fetched: ProxyResponse, _ request: ProxyRequest, on loop: any EventLoop) -> EventLoopFuture<Void> {
        let path = request.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.target
        guard request.method == .GET, fetched.status == .ok, path.hasSuffix("/" + PublishedLayout.manifest), var body = fetched.body else {
            return loop.makeSucceededVoidFuture()
        }
        let bytes = Self.decoded(body.readBytes(length: body.readableBytes) ?? [], fetched.headers.first(name: "content-encoding"))
        guard let bytes, let manifest = try? Manifest(bytes: bytes) else { return loop.makeSucceededVoidFuture() }
        let prefix = Self.objectsPrefix(ofManifest: path)
        var headers = HTTPHeaders()
        headers.add(name: "Accept-Encoding", value: request.headers.first(name: "accept-encoding") ?? "br, gzip")
        var seen = Set<String>()
        let missing = manifest.allEntries.compactMap { entry -> ProxyRequest? in
            let target = prefix + entry.objectPath
            guard seen.insert(target).inserted else { return nil }
            let request = ProxyRequest(method: .GET, target: target, headers: headers, body: nil)
            let now = clock()
            let cached = store.variants(target).contains { $0.varyMatches(headers) && CachePolicy.isUsable($0, requestControl: CacheControl(), now: now) }
            return cached ? nil : request
        }
        guard !missing.isEmpty else { return loop.makeSucceededVoidFuture() }
        let done = loop.makePromise(of: Void.self)
        let next = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        @Sendable func fetchNext() {
            let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard i < missing.count else { return }
            let sent = clock()
            forward(missing[i], on: loop, preferring: fetched.origin).whenComplete { result in
                if case .success(let object) = result {
                    _ = self.storeIfAllowed(object, missing[i], requestControl: CacheControl(), requestTime: sent)
                }
                if finished.wrappingAdd(1, ordering: .relaxed).newValue == missing.count {
                    done.succeed(())
                } else {
                    fetchNext()
                }
            }
        }
        for _ in 0..<min(prefetchConcurrency, missing.count) { fetchNext() }
        let timeout = loop.scheduleTask(in: prefetchLimit) { done.succeed(()) }
        done.futureResult.whenComplete { _ in timeout.cancel() }
        return done.futureResult
    }

    // MARK: - Storing

    private func storeIfAllowed(_ fetched: ProxyResponse, _ request: ProxyRequest, requestControl: CacheControl, requestTime: Double) -> StoredResponse? {
        let headers = Self.withDate(fetched.headers, now: clock())
        guard CachePolicy.whyNotStorable(
            method: request.method, requestHeaders: request.headers, requestControl: requestControl,
            status: Int(fetched.status.code), headers: headers) == nil
        else { return nil }
        var kept = headers
        for name in CachePolicy.control(headers).privateFields { kept.remove(name: name) }
        let stored = StoredResponse(
            key: request.target, status: Int(fetched.status.code), reason: fetched.status.reasonPhrase, headers: kept,
            body: fetched.body ?? ByteBuffer(), requestTime: requestTime, responseTime: clock(), requestHeaders: request.headers)
        store.store(stored)
        return stored
    }

    private func updated(_ stored: StoredResponse, with newer: HTTPHeaders, request: ProxyRequest, requestTime: Double, responseTime: Double) -> StoredResponse {
        StoredResponse(
            key: stored.key, status: stored.status, reason: stored.reason,
            headers: CachePolicy.updatedHeaders(stored.headers, with: CacheFields.endToEnd(newer)), body: stored.body,
            requestTime: requestTime, responseTime: responseTime, requestHeaders: request.headers)
    }

    /// A 200 to HEAD updates the stored GET response it describes (RFC 9111 §4.3.5); one whose
    /// validators differ shows the stored one is outdated, so it goes.
    private func refreshFromHead(_ fetched: ProxyResponse, _ request: ProxyRequest) {
        guard request.method == .HEAD, fetched.status == .ok else { return }
        guard let stored = store.variants(request.target).first(where: { $0.varyMatches(request.headers) }) else { return }
        let etag = fetched.headers.first(name: "etag")
        let lm = fetched.headers.first(name: "last-modified")
        guard etag == stored.etag, lm == stored.lastModified, etag != nil || lm != nil else {
            store.remove(stored)
            return
        }
        store.store(updated(stored, with: fetched.headers, request: request, requestTime: clock(), responseTime: clock()))
    }

    /// After an unsafe method succeeded: the target, and the same-origin Location and
    /// Content-Location, are dropped (RFC 9111 §4.4).
    private func invalidate(_ key: String, _ headers: HTTPHeaders, store: CacheStore) {
        store.remove(key)
        for name in ["location", "content-location"] {
            guard let value = headers.first(name: name), let target = sameOriginTarget(value) else { continue }
            store.remove(target)
        }
    }

    /// The request target a URI reference names on this cache's origin; nil for another origin.
    private func sameOriginTarget(_ reference: String) -> String? {
        if reference.hasPrefix("/") { return reference }
        for origin in pool.origins where reference.lowercased().hasPrefix(origin.base.lowercased() + "/") {
            return String(reference.dropFirst(origin.base.count))
        }
        return nil
    }

    // MARK: - Responding

    /// A response from a stored one: `Age`, `Cache-Status`, and the request's conditions and
    /// range applied.
    /// A response from a stored one: `Age` (whole seconds since the origin made it, the
    /// delay of a response just fetched included), `Cache-Status`, and the request's conditions
    /// and range applied.
    private func serve(_ stored: StoredResponse, to request: ProxyRequest, now: Double, cacheStatus: String) -> ProxyResponse {
        var headers = stored.servedHeaders
        headers.add(name: "Age", value: String(Int(stored.currentAge(now: now))))
        headers.add(name: "Cache-Status", value: cacheStatus == "hit" ? hitStatus : "\(name); \(cacheStatus)")
        var response = ProxyResponse(
            status: HTTPResponseStatus(statusCode: stored.status, reasonPhrase: stored.reason), headers: headers, body: stored.body)
        if let notModified = Self.conditionalAnswer(request, response) {
            return notModified
        }
        if let partial = Self.rangeAnswer(request, response) {
            return partial
        }
        response.headers.add(name: "Content-Length", value: String(stored.body.readableBytes))
        response.lengthSet = true
        if request.method == .HEAD { response.body = nil }
        return response
    }

    /// A response as the origin sent it (hop-by-hop fields gone), with `Cache-Status`.
    private func respond(_ fetched: ProxyResponse, cacheStatus: String, conditionsFrom request: ProxyRequest? = nil) -> ProxyResponse {
        var response = fetched
        response.headers = Self.withDate(response.headers, now: clock())
        response.headers.add(name: "Cache-Status", value: "\(name); \(cacheStatus)\(fetched.via)")
        if let request, let notModified = Self.conditionalAnswer(request, response) { response = notModified }
        return response
    }

    /// 304 when the request's If-None-Match (or If-Modified-Since) matches a 200 response.
    private static func conditionalAnswer(_ request: ProxyRequest, _ response: ProxyResponse) -> ProxyResponse? {
        guard response.status == .ok,
            request.headers.contains(name: "if-none-match") || request.headers.contains(name: "if-modified-since")
        else { return nil }
        let matched: Bool
        if let inm = CacheFields.combined(request.headers, "if-none-match") {
            guard var etag = response.headers.first(name: "etag") else { return nil }
            if etag.hasPrefix("W/") { etag.removeFirst(2) }
            matched = EntityTagList.parse(HeaderValue(inm)).matchesWeakly(etag)
        } else if let ims = CacheFields.date(request.headers.first(name: "if-modified-since")),
            let lm = CacheFields.date(response.headers.first(name: "last-modified") ?? response.headers.first(name: "date"))
        {
            matched = lm <= ims
        } else {
            return nil
        }
        guard matched else { return nil }
        var headers = response.headers
        for name in ["content-length", "content-type", "content-encoding", "content-range", "transfer-encoding"] { headers.remove(name: name) }
        return ProxyResponse(status: .notModified, headers: headers, body: nil)
    }

    /// 206 for one satisfiable byte range of a complete 200 (If-Range permitting), 416 for an
    /// unsatisfiable one; nil to send the whole.
    private static func rangeAnswer(_ request: ProxyRequest, _ response: ProxyResponse) -> ProxyResponse? {
        guard request.method == .GET, response.status == .ok, let body = response.body, request.headers.contains(name: "range"),
            let range = request.headers.first(name: "range")
        else { return nil }
        if let ifRange = request.headers.first(name: "if-range") {
            let trimmed = ifRange.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("\"") || trimmed.hasPrefix("W/") {
                guard let etag = response.headers.first(name: "etag"), !etag.hasPrefix("W/"), !trimmed.hasPrefix("W/"), etag == trimmed else { return nil }
            } else {
                guard let date = CacheFields.date(trimmed), date == CacheFields.date(response.headers.first(name: "last-modified")) else { return nil }
            }
        }
        var headers = response.headers
        switch ByteRange.parse(HeaderValue(range), length: body.readableBytes) {
        case .whole:
            return nil
        case .partial(let r):
            headers.replaceOrAdd(name: "Content-Range", value: "bytes \(r.lowerBound)-\(r.upperBound)/\(body.readableBytes)")
            return ProxyResponse(status: .partialContent, headers: headers, body: body.getSlice(at: body.readerIndex + r.lowerBound, length: r.count))
        case .unsatisfiable:
            headers.replaceOrAdd(name: "Content-Range", value: "bytes */\(body.readableBytes)")
            return ProxyResponse(status: .rangeNotSatisfiable, headers: headers, body: ByteBuffer())
        }
    }

    /// Under maintenance: whatever is stored, stale or not; 503 and Retry-After for the rest.
    private func maintenanceAnswer(_ request: ProxyRequest) -> ProxyResponse {
        if request.method == .GET || request.method == .HEAD,
            let stored = store.variants(request.target).first(where: { $0.varyMatches(request.headers) })
        {
            return serve(stored, to: request, now: clock(), cacheStatus: "hit; detail=maintenance")
        }
        var r = CacheAdmin.text(.serviceUnavailable, "down for maintenance; try again later\n")
        r.headers.add(name: "Retry-After", value: "60")
        r.headers.add(name: "Cache-Status", value: "\(name); fwd=miss; detail=maintenance")
        return r
    }

    private func onlyIfCachedMiss() -> ProxyResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Cache-Status", value: "\(name); fwd=miss; detail=only-if-cached")
        headers.add(name: "Content-Length", value: "0")
        return ProxyResponse(status: .gatewayTimeout, headers: headers, body: nil)
    }

    private func gatewayError(_ error: any Error) -> ProxyResponse {
        if let refused = error as? UntrustedOriginManifest {
            return gatewayAnswer(.badGateway, detail: "untrusted-manifest", "the origin's manifest does not verify: \(refused.description)\n")
        }
        if let corrupt = error as? CorruptOriginObject {
            return gatewayAnswer(.badGateway, detail: "corrupt-object", "\(corrupt.description)\n")
        }
        if let refused = error as? S3OriginRefused {
            // The bucket's name and the advice go to the tier's log and status, not to clients.
            let code = refused.code.map { " " + $0 } ?? ""
            return gatewayAnswer(.badGateway, detail: "origin-refused", "the origin refused this tier's request (\(refused.status)\(code)); the tier's log says why\n")
        }
        return Self.isTimeout(error)
            ? gatewayAnswer(.gatewayTimeout, detail: "origin-timeout", "the origin did not answer in time\n")
            : gatewayAnswer(.badGateway, detail: "origin-unreachable", "the origin could not be reached\n")
    }

    /// A 502 or 504 that is never stored, saying why in its text and its `Cache-Status`.
    private func gatewayAnswer(_ status: HTTPResponseStatus, detail: String, _ text: String) -> ProxyResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "Cache-Status", value: "\(name); fwd=miss; detail=\(detail)")
        return ProxyResponse(status: status, headers: headers, body: ByteBuffer(string: text))
    }

    /// Whether a failed origin request ran out of time (504) rather than failed (502), by its type.
    static func isTimeout(_ error: any Error) -> Bool {
        switch error {
        case let e as HTTPClientError: [.deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout].contains(e)
        case let e as ChannelError:
            if case .connectTimeout = e { true } else { false }
        default: false
        }
    }

    /// A 404 for an operating endpoint on the public listener beside an admin one, and for
    /// anything else on the admin listener; nil when the listener answers it.
    static func refused(_ request: ProxyRequest, role: ListenerRole) -> ProxyResponse? {
        let operating = (request.method == .POST && request.target == "/.folio/notify")
            || (request.method == .GET && request.target == "/.folio/metrics") || CacheAdmin.isAdmin(request)
        switch (role, operating) {
        case (.publicOnly, true): return CacheAdmin.text(.notFound, "no such resource here: operating endpoints are on the admin listener\n")
        case (.adminOnly, false): return CacheAdmin.text(.notFound, "the admin listener serves only /.folio/ and PURGE\n")
        default: return nil
        }
    }

    static func withDate(_ headers: HTTPHeaders, now: Double) -> HTTPHeaders {
        guard !headers.contains(name: "date") else { return headers }
        var h = headers
        h.add(name: "Date", value: HTTPDate.format(Int64(now)))
        return h
    }
}

/// An origin's manifest that failed `--trust` verification.
struct UntrustedOriginManifest: Error, CustomStringConvertible {
    var description: String
}
