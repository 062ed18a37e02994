import Foundation
import Logging
import Metrics
import Synchronization

/// One origin of a cache tier: the base URL requests are appended to (a path prefix kept, no
/// trailing slash) and the name `Cache-Status` and the metrics give it (`host:port`); or a
/// bucket read with signed requests, both named `s3://BUCKET/PREFIX`.
struct Origin: Sendable, Equatable {
    let base: String
    let name: String
    let s3: S3Origin?

    init(_ url: String) {
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        let parsed = URL(string: base)
        let scheme = parsed?.scheme?.lowercased() ?? "http"
        let port = parsed?.port ?? (scheme == "https" ? 443 : 80)
        self.init(base: base, name: "\(parsed?.host ?? base):\(port)", s3: nil)
    }

    init(_ origin: TierOrigin) {
        switch origin {
        case .http(let url): self.init(url)
        case .s3(let bucket): self.init(base: bucket.location.url, name: bucket.location.url, s3: bucket)
        }
    }

    private init(base: String, name: String, s3: S3Origin?) {
        self.base = base
        self.name = name
        self.s3 = s3
    }
}

/// The tier's origins and what is known of their health, as nginx's upstreams and Varnish's
/// directors keep it: an origin is down after one failed health check or one failed request
/// (passive), and up again after `rise` good checks in a row. Requests go to the origins that
/// are up, in the order the policy gives (the first one up, or each in turn), then to those
/// marked down as a last resort (as nginx tries its servers again when all are down). Why an
/// origin is down is kept, logged once when it goes down or the reason changes, and once when
/// it is back (`OriginStatus`).
final class OriginPool: Sendable {
    let origins: [Origin]
    let policy: OriginPolicy
    /// Good checks in a row that bring a down origin back (nginx's `rise`, Varnish's threshold).
    let rise: Int

    private struct Health {
        var up = true
        var goodInRow = 0
        /// The ETag of the origin's manifest at the last check that read one.
        var etag: String?
        /// When it last answered a request or a check (seconds of uptime).
        var lastGood: Double = 0
        /// Why it is down, or why its last request failed (nil when nothing is wrong).
        var why: String?
    }
    private let health: Mutex<[Health]>
    private let turn = Atomic<Int>(0)
    private let counters: [OriginCounters]

    private let logger = Logger(label: "folio.edge")

    init(_ origins: [TierOrigin], policy: OriginPolicy = .primary, rise: Int = 2) {
        self.origins = origins.map(Origin.init)
        self.policy = policy
        self.rise = rise
        health = Mutex(Array(repeating: Health(), count: origins.count))
        counters = self.origins.map { OriginCounters(name: $0.name) }
    }

    convenience init(_ urls: [String], policy: OriginPolicy = .primary, rise: Int = 2) {
        self.init(urls.map(TierOrigin.http), policy: policy, rise: rise)
    }

    /// What `old` knew of each origin this pool has too (a reload that kept it), by URL.
    func takeHealth(from old: OriginPool) {
        let known = old.health.withLock { $0 }
        health.withLock { h in
            for (i, origin) in origins.enumerated() {
                guard let j = old.origins.firstIndex(where: { $0.base == origin.base }) else { continue }
                h[i] = known[j]
                counters[i].up.record(known[j].up ? 1 : 0)
            }
        }
    }

    /// Whether there is another origin to fail over to: with one, a request marks nothing.
    var isFailover: Bool { origins.count > 1 }

    /// Whether health checks run: with another origin to fail over to, or a bucket (whose
    /// credentials can be wrong or expire while the tier runs, which its checks tell).
    var isChecked: Bool { isFailover || origins.contains { $0.s3 != nil } }

    /// The `origin="host:port"` parameter of `Cache-Status` (RFC 9211 allows extensions).
    func parameter(_ index: Int?) -> String {
        guard let index, origins.indices.contains(index) else { return "" }
        return "; origin=\"\(origins[index].name)\""
    }

    /// The origins to try for one request, in order: those up (first in the list first, or
    /// starting at the next in turn), `preferring` first when it is up, then those down, the
    /// one that answered last first.
    func candidates(preferring: Int? = nil) -> [Int] {
        let (up, down) = health.withLock { h in
            (h.indices.filter { h[$0].up }, h.indices.filter { !h[$0].up }.sorted { h[$0].lastGood > h[$1].lastGood })
        }
        var order = up
        if policy == .roundRobin, up.count > 1 {
            let start = turn.wrappingAdd(1, ordering: .relaxed).oldValue % up.count
            order = Array(up[start...] + up[..<start])
        }
        if let preferring, let i = order.firstIndex(of: preferring) { order.insert(order.remove(at: i), at: 0) }
        return order + down
    }

    /// The manifest ETag of the last good check (sent as If-None-Match by the next).
    func checkedETag(_ index: Int) -> String? { health.withLock { $0[index].etag } }

    // MARK: - What happened

    /// A request was sent to the origin.
    func sent(_ index: Int) { counters[index].requests.increment() }

    /// The origin answered a request (with any status).
    func answered(_ index: Int) {
        guard isFailover else { return }
        let now = Self.uptime()
        health.withLock { $0[index].lastGood = now }
    }

    static func uptime() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// A request to the origin failed (connection, timeout, garbage, a bucket that refuses the
    /// tier): it is down. A bucket's refusal (`refused`) is kept and logged even with one origin.
    func failed(_ index: Int, why: String = "a request failed", refused: Bool = false) {
        counters[index].failures.increment()
        guard isFailover || refused else { return }
        setUp(index, false, why: why) { $0.goodInRow = 0 }
    }

    /// A health check's result: a bad one marks the origin down at once (`why` says what was
    /// wrong), `rise` good ones in a row bring it back. A good one may carry the manifest's
    /// ETag and version.
    func checked(_ index: Int, good: Bool, why: String = "", etag: String? = nil, version: Int? = nil) {
        counters[index].checks.increment()
        guard good else {
            counters[index].failures.increment()
            setUp(index, false, why: why) { $0.goodInRow = 0 }
            return
        }
        let (was, up) = health.withLock { h in
            let was = h[index].up
            h[index].goodInRow += 1
            h[index].lastGood = Self.uptime()
            if let etag { h[index].etag = etag }
            h[index].up = h[index].up || h[index].goodInRow >= rise
            if h[index].up { h[index].why = nil }
            return (was, h[index].up)
        }
        if let version { counters[index].version.record(version) }
        counters[index].up.record(up ? 1 : 0)
        if !was && up { logger.notice("origin \(origins[index].name) is up again") }
    }

    private func setUp(_ index: Int, _ up: Bool, why: String, _ change: (inout Health) -> Void) {
        let was = health.withLock { h in
            let was = h[index].up
            change(&h[index])
            h[index].up = up
            h[index].why = up ? nil : why
            return was
        }
        counters[index].up.record(up ? 1 : 0)
        if was && !up { logger.warning("origin \(origins[index].name) is down: \(why)") }
    }

    /// Each origin, whether it is up, and why not (`GET /.folio/status`).
    func statuses() -> [(name: String, up: Bool, why: String?)] {
        let h = health.withLock { $0 }
        return origins.indices.map { (origins[$0].name, h[$0].up, h[$0].why) }
    }
}

/// How a tier with several origins sends its requests: all to the first origin up (a primary
/// and its backups), or to each origin up in turn.
package enum OriginPolicy: String, Sendable, CaseIterable {
    case primary
    case roundRobin = "round-robin"
}

/// The metrics of one origin: `folio_edge_origin_up`, requests sent, failures, health checks,
/// and the manifest version its last check read (a backup that is behind shows here).
struct OriginCounters: Sendable {
    let up: Metrics.Gauge
    let version: Metrics.Gauge
    let requests: Metrics.Counter
    let failures: Metrics.Counter
    let checks: Metrics.Counter

    init(name: String) {
        let origin = [("origin", name)]
        up = Metrics.Gauge(label: "folio_edge_origin_up", dimensions: origin)
        requests = Metrics.Counter(label: "folio_edge_origin_requests_total", dimensions: origin)
        failures = Metrics.Counter(label: "folio_edge_origin_failures_total", dimensions: origin)
        checks = Metrics.Counter(label: "folio_edge_origin_checks_total", dimensions: origin)
        version = Metrics.Gauge(label: "folio_edge_origin_manifest_version", dimensions: origin)
        up.record(1)
    }
}
