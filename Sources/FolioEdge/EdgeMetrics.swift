import Metrics
import Prometheus
import Synchronization

/// The edge's metrics, through swift-metrics into a Prometheus registry served at `/metrics`.
final class EdgeMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    /// Request counters by status code (indexed by the code), made once so the hot path only
    /// increments.
    private let byStatus: [Metrics.Counter?]
    private let other: Metrics.Counter
    let bytesSent: Metrics.Counter
    let latency: Metrics.Timer
    let version: Metrics.Gauge
    /// 1 while an edge that takes deploys waits for its first one (it serves no content), else 0.
    let awaitingFirstDeploy: Metrics.Gauge
    let notModifiedShare: Metrics.Gauge
    let reloadFailures: Metrics.Counter
    let connectionsRejected: Metrics.Counter
    /// The cache tier: answers by what the cache did, and what it holds.
    private let cacheResults: [String: Metrics.Counter]
    let cacheEntries: Metrics.Gauge
    let cacheBytes: Metrics.Gauge
    /// The disk tier (`--cache-dir`): what it holds, entries read back, files that failed, and
    /// entry files held open.
    let diskEntries: Metrics.Gauge
    let diskBytes: Metrics.Gauge
    let diskReads: Metrics.Gauge
    let diskFailures: Metrics.Gauge
    /// 1 while the cache directory is full and entries are not written to it.
    let diskFull: Metrics.Gauge
    let diskOpenFiles: Metrics.Gauge
    /// Answered fetches of each channel's manifest or head (`folio_edge_manifest_requests_total{channel=…}`).
    let manifestFetches: ManifestFetchCounters
    private let totals = Atomic<Int>(0)
    private let notModified = Atomic<Int>(0)

    static let statuses = [200, 206, 304, 400, 404, 405, 406, 408, 412, 414, 416, 431, 500, 503]

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .seconds(1),
        ]
        MetricsSystem.bootstrap(factory)
        var counters = [Metrics.Counter?](repeating: nil, count: 600)
        for s in Self.statuses {
            counters[s] = Metrics.Counter(label: "folio_edge_requests_total", dimensions: [("status", String(s))])
        }
        byStatus = counters
        other = Metrics.Counter(label: "folio_edge_requests_total", dimensions: [("status", "other")])
        bytesSent = Metrics.Counter(label: "folio_edge_sent_bytes_total")
        latency = Metrics.Timer(label: "folio_edge_request_duration_seconds")
        version = Metrics.Gauge(label: "folio_edge_loaded_version")
        awaitingFirstDeploy = Metrics.Gauge(label: "folio_edge_awaiting_first_deploy")
        notModifiedShare = Metrics.Gauge(label: "folio_edge_not_modified_ratio")
        reloadFailures = Metrics.Counter(label: "folio_edge_reload_failures_total")
        connectionsRejected = Metrics.Counter(label: "folio_edge_connections_rejected_total")
        var results: [String: Metrics.Counter] = [:]
        for r in Self.cacheResultNames {
            results[r] = Metrics.Counter(label: "folio_edge_cache_responses_total", dimensions: [("result", r)])
        }
        cacheResults = results
        cacheEntries = Metrics.Gauge(label: "folio_edge_cache_entries")
        cacheBytes = Metrics.Gauge(label: "folio_edge_cache_bytes")
        diskEntries = Metrics.Gauge(label: "folio_edge_cache_disk_entries")
        diskBytes = Metrics.Gauge(label: "folio_edge_cache_disk_bytes")
        diskReads = Metrics.Gauge(label: "folio_edge_cache_disk_reads")
        diskFailures = Metrics.Gauge(label: "folio_edge_cache_disk_failures")
        diskFull = Metrics.Gauge(label: "folio_edge_cache_disk_full")
        diskOpenFiles = Metrics.Gauge(label: "folio_edge_cache_disk_open_files")
        manifestFetches = ManifestFetchCounters()
    }

    static let cacheResultNames = ["hit", "stale", "miss", "pass", "other"]

    /// A plain hit (the tier's hot path: no text to classify).
    func recordCacheHit() { cacheResults["hit"]?.increment() }

    /// Counts one answer of the cache tier by its `Cache-Status`: a hit (fresh, or stale served
    /// while revalidating or for an error), a stale copy revalidated with the origin, a miss,
    /// a request passed through (methods, no-cache), or anything else (admin, errors).
    func recordCacheResult(_ cacheStatus: String?) {
        let result: String
        switch cacheStatus {
        case nil: result = "other"
        case let s? where s.hasSuffix("; hit") || s.contains("; hit;"): result = "hit"
        case let s? where s.contains("fwd=stale"): result = "stale"
        case let s? where s.contains("fwd=uri-miss") || s.contains("fwd=vary-miss") || s.contains("fwd=miss; stored"): result = "miss"
        case let s? where s.contains("fwd=method") || s.contains("fwd=request") || s.contains("fwd=miss"): result = "pass"
        default: result = "other"
        }
        cacheResults[result]?.increment()
    }

    func record(status: Int, bytes: Int, nanoseconds: Int64) {
        ((byStatus.indices.contains(status) ? byStatus[status] : nil) ?? other).increment()
        if bytes > 0 { bytesSent.increment(by: bytes) }
        latency.recordNanoseconds(nanoseconds)
        totals.add(1, ordering: .relaxed)
        if status == 304 { notModified.add(1, ordering: .relaxed) }
    }

    /// The Prometheus text exposition.
    func render() -> [UInt8] {
        let total = totals.load(ordering: .relaxed)
        notModifiedShare.record(total == 0 ? 0 : Double(notModified.load(ordering: .relaxed)) / Double(total))
        return registry.emitToBuffer()
    }
}
