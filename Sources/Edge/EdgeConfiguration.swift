import FolioCore
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
    /// Overrides for the manifest's cache hints; nil uses the manifest's own.
    var manifestHint: Manifest.CacheHint?
    var objectHint: Manifest.CacheHint?
    var watchInterval: Duration
    var accessLog: Bool
}
