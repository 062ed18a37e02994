import FolioACME
import FolioPublished
import FolioS3Signing
import Logging
import NIOCore

/// Everything the edge needs, parsed from the command line before anything starts: one
/// listener in front of one mode.
package struct EdgeConfiguration: Sendable {
    package var listener: EdgeListener
    package var mode: EdgeMode
    /// How often the published directory (origin) and the certificate files are checked.
    package var watchInterval: Duration
    /// After SIGTERM, how long connections in flight are answered before the process exits.
    package var drainTimeout: Duration = .seconds(10)
    /// The least severe log level written.
    package var logLevel: Logger.Level = .info
    /// Reads the configuration again (SIGHUP: the config file and the command line); nil: SIGHUP
    /// reloads the certificates and the published directory only.
    package var reload: (@Sendable () throws -> EdgeConfiguration)?

    package init(listener: EdgeListener, mode: EdgeMode, watchInterval: Duration) {
        self.listener = listener
        self.mode = mode
        self.watchInterval = watchInterval
    }
}

/// Where and how the edge listens, the same in both modes: addresses, TLS and certificates,
/// protocols and limits.
package struct EdgeListener: Sendable {
    package var host: String
    package var port: Int
    package var threads: Int
    package var maxConnections: Int
    package var limits: ConnectionLimits
    package var accessLog: Bool
    /// The access log's file (nil: stderr) and format.
    package var accessLogPath: String?
    package var accessLogFormat = AccessLogFormat.text
    /// Certificate and key files for https (none: plain http), chosen by SNI.
    package var tls: [TLSFiles] = []
    /// With TLS, a plain listener on this port that redirects to https (308).
    package var httpPort: Int?
    /// With TLS, `Strict-Transport-Security: max-age=N` on every https response.
    package var hstsMaxAge: Int?
    /// Certificates from an ACME directory (`--acme`), served beside `tls`.
    package var acme: ACMEConfiguration?
    /// Offer HTTP/2 by ALPN over TLS (`--no-http2` turns it off).
    package var http2 = true
    /// A second listener for the operating endpoints (`--admin-listen`); the public one then
    /// keeps only `/healthz`.
    package var adminListen: ListenAddress?

    package init(host: String, port: Int, threads: Int, maxConnections: Int, limits: ConnectionLimits, accessLog: Bool) {
        self.host = host
        self.port = port
        self.threads = threads
        self.maxConnections = maxConnections
        self.limits = limits
        self.accessLog = accessLog
    }
}

/// What the edge serves: a published directory, or a cache of an origin.
package enum EdgeMode: Sendable {
    case origin(OriginMode)
    case cacheTier(CacheTierMode)
}

/// Serving a published directory from memory.
package struct OriginMode: Sendable {
    package var root: String
    /// Object bytes held in memory; past it they are read from disk per request.
    package var memoryBudget: Int
    /// Overrides for the manifest's cache hint; each nil field keeps the manifest's own value.
    package var manifestHintOverride: CacheHintOverride
    /// Root keys the manifest must verify under (nil: unsigned manifests are served too).
    package var trust: Trust?
    /// The file holding the bearer token for push deploys on the admin listener (nil: deploys off).
    package var deployTokenFile: String?
    /// Seconds an idle deploy keeps its lock.
    package var deployLockTimeout = 60

    package init(
        root: String, memoryBudget: Int, manifestHintOverride: CacheHintOverride = CacheHintOverride(), trust: Trust? = nil,
        deployTokenFile: String? = nil, deployLockTimeout: Int = 60
    ) {
        self.root = root
        self.memoryBudget = memoryBudget
        self.manifestHintOverride = manifestHintOverride
        self.trust = trust
        self.deployTokenFile = deployTokenFile
        self.deployLockTimeout = deployLockTimeout
    }
}

/// A pull-through RFC 9111 cache in front of one or more origins.
package struct CacheTierMode: Sendable {
    /// The origins, the primary first (`--origin`, repeatable).
    package var origins: [TierOrigin]
    /// The primary, or the first of those taken in turn.
    package var origin: TierOrigin { origins[0] }
    /// All requests to the first origin up, or to each in turn (`--origin-policy`).
    package var originPolicy = OriginPolicy.primary
    /// How often each origin's manifest is checked, with several origins or an s3:// one (`--health-interval-ms`).
    package var healthInterval: Duration = .seconds(1)
    /// How long one origin request may take before the next origin is tried (`--origin-timeout`).
    package var originTimeout: Duration = .seconds(30)
    /// Where the cache keeps its entries on disk (nil: memory only), and its size: of the disk
    /// with a directory, else of memory.
    package var cacheDirectory: String?
    package var cacheSize: Int
    /// The hot set in memory with a directory (nil: 256 MiB, at most the cache size).
    package var memorySize: Int?
    /// The file holding the bearer token for purge and maintenance (nil: both disabled), and a
    /// file whose existence turns maintenance on.
    package var purgeTokenFile: String?
    package var maintenanceFile: String?
    /// Send each authorized purge to the origin first (tiers in a chain, sharing one token).
    package var purgeOrigin = false
    /// PEM certificate authorities trusted for an https origin (nil: the system's).
    package var originCA: String?
    /// Root keys a manifest must verify under before it is stored or forwarded (nil: any).
    package var trust: Trust?

    /// Bytes in memory: the whole cache without a directory, else the hot set.
    package var memoryLimit: Int { cacheDirectory == nil ? cacheSize : memorySize ?? min(cacheSize, 256 << 20) }

    package init(origins: [TierOrigin], cacheDirectory: String? = nil, cacheSize: Int = 1 << 30) {
        precondition(!origins.isEmpty, "a cache tier needs an origin")
        self.origins = origins
        self.cacheDirectory = cacheDirectory
        self.cacheSize = cacheSize
    }
}

/// One `--origin`: an http or https URL, or a bucket and prefix (`s3://BUCKET/PREFIX`) read with
/// requests signed as `folio-build publish` signs its own.
package enum TierOrigin: Sendable, Equatable {
    case http(String)
    case s3(S3Origin)

    /// As given: the URL, or `s3://BUCKET/PREFIX`.
    package var url: String {
        switch self {
        case .http(let url): url
        case .s3(let bucket): bucket.location.url
        }
    }
}

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

/// One certificate chain and its key, as PEM files.
package struct TLSFiles: Sendable {
    package var certificate: String
    package var key: String

    package init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }
}

/// A host and port to listen on (`HOST:PORT`, `[IPv6]:PORT`).
package struct ListenAddress: Sendable, Equatable {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:9090`, `[::1]:9090`, `localhost:0`; nil for anything else.
    package init?(_ text: String) {
        let host: Substring, port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let p = Int(port), (0...65535).contains(p), port.allSatisfy(\.isNumber) else { return nil }
        self.init(host: String(host), port: p)
    }
}

/// Which endpoints a listener answers: everything (no admin listener), the content without the
/// operating endpoints (the public listener beside an admin one), or only those (the admin listener).
package enum ListenerRole: Sendable {
    case all, publicOnly, adminOnly
}
