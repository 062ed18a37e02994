import FolioPublished
import NIOCore

/// Everything the edge needs, parsed from the command line before anything starts.
package struct EdgeConfiguration: Sendable {
    package var root: String
    package var host: String
    package var port: Int
    package var threads: Int
    package var memoryBudget: Int
    package var maxConnections: Int
    package var limits: ConnectionLimits
    /// Overrides for the manifest's cache hint; each nil field keeps the manifest's own value.
    package var manifestHintOverride: CacheHintOverride
    package var watchInterval: Duration
    package var accessLog: Bool

    package init(
        root: String, host: String, port: Int, threads: Int, memoryBudget: Int, maxConnections: Int,
        limits: ConnectionLimits, manifestHintOverride: CacheHintOverride, watchInterval: Duration, accessLog: Bool
    ) {
        self.root = root
        self.host = host
        self.port = port
        self.threads = threads
        self.memoryBudget = memoryBudget
        self.maxConnections = maxConnections
        self.limits = limits
        self.manifestHintOverride = manifestHintOverride
        self.watchInterval = watchInterval
        self.accessLog = accessLog
    }
}

/// Per-field overrides of a cache hint, from the command line.
package struct CacheHintOverride: Sendable {
    package var maxAge: Int?
    package var staleWhileRevalidate: Int?
    package var staleIfError: Int?

    package init(maxAge: Int? = nil, staleWhileRevalidate: Int? = nil, staleIfError: Int? = nil) {
        self.maxAge = maxAge
        self.staleWhileRevalidate = staleWhileRevalidate
        self.staleIfError = staleIfError
    }

    package func applied(to hint: Manifest.CacheHint) -> Manifest.CacheHint {
        var h = hint
        if let maxAge { h.maxAge = maxAge }
        if let staleWhileRevalidate { h.staleWhileRevalidate = staleWhileRevalidate }
        if let staleIfError { h.staleIfError = staleIfError }
        return h
    }
}
