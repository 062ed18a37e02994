import FolioPublished
import NIOCore

/// Everything the edge needs, parsed from the command line before anything starts.
struct EdgeConfiguration: Sendable {
    var root: String
    var host: String
    var port: Int
    var threads: Int
    var memoryBudget: Int
    var maxConnections: Int
    var limits: ConnectionLimits
    /// Overrides for the manifest's cache hint; each nil field keeps the manifest's own value.
    var manifestHintOverride: CacheHintOverride
    var watchInterval: Duration
    var accessLog: Bool
}

/// Per-field overrides of a cache hint, from the command line.
struct CacheHintOverride: Sendable {
    var maxAge: Int?
    var staleWhileRevalidate: Int?
    var staleIfError: Int?

    func applied(to hint: Manifest.CacheHint) -> Manifest.CacheHint {
        var h = hint
        if let maxAge { h.maxAge = maxAge }
        if let staleWhileRevalidate { h.staleWhileRevalidate = staleWhileRevalidate }
        if let staleIfError { h.staleIfError = staleIfError }
        return h
    }
}
