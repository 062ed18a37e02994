import FolioKitCore
import FolioKitNIO

/// Where `folio diff` looks beyond its two arguments: the edge (for `@N` and a bare `#CHANNEL`),
/// the cache, and how long the edge may stay silent.
struct DiffPlaces: Sendable {
    var edgeURL: String
    var cachePath: String
    /// `--cache-dir` as given (nil: from the environment or the default), for messages.
    var cacheDir: String?
    var timeout: Duration

    var http: FolioHTTPConfiguration { FolioHTTPConfiguration(timeout: timeout) }

    /// With no options: the environment's, else the defaults (as `ClientOptions` reads them).
    static var fromEnvironment: DiffPlaces {
        DiffPlaces(edgeURL: ClientOptions.edgeURL(nil), cachePath: ClientOptions.cachePath(nil), cacheDir: nil, timeout: TimeoutSetting.duration(nil))
    }

    /// Whether the environment holds what the full parser would refuse, or a CA file it
    /// checks: then the fast path steps aside and the parser checks (and says what is wrong).
    static var environmentHasProblem: Bool {
        ClientOptions.refusedByValidation(edge: nil, timeout: nil) || FolioHTTP.caFile != nil
    }
}

extension ClientOptions {
    var diffPlaces: DiffPlaces {
        DiffPlaces(edgeURL: edgeURL, cachePath: cachePath, cacheDir: cacheDir, timeout: TimeoutSetting.duration(timeout))
    }
}
