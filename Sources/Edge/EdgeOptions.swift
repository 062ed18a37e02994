import ArgumentParser
import FolioACME
import FolioEdge
import FolioPublished
import FolioS3Signing
import FolioSupport
import Foundation
import Logging
import NIOCore

/// Every option of `folio-edge run` and `folio-edge validate`. Each long option is also a key of
/// the same name in a `--config` file (ConfigFile); the command line overrides the file.
struct EdgeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A TOML file of options: each long option is a key of the same name; options given here override it.", valueName: "file"))
    var config: String?
    @Option(help: "The published directory to serve (default: public; not with --origin); with --deploy-token-file it may be empty, or missing (then made), until a first deploy.")
    var root: String?
    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port; 0 picks a free one and prints it.") var port = 8080
    @Option(help: "Event loop threads (default: one per core).") var threads: Int?
    @Option(help: "Bytes of objects to hold in memory; the rest is read from disk (default: 256 MiB; not with --origin).")
    var memoryBudget: Int?
    @Option(help: "Most connections open at once.") var maxConnections = 10_000
    @Option(help: "Seconds a client may take to send a complete request.") var requestTimeout = 15
    @Option(help: "Largest request header section in bytes.") var maxHeaderBytes = 16384
    @Option(help: "max-age for manifest and /content/ responses (default: the manifest's hint).") var manifestMaxAge: Int?
    @Option(help: "stale-while-revalidate for the manifest (default: the manifest's hint).") var staleWhileRevalidate: Int?
    @Option(help: "stale-if-error for the manifest (default: the manifest's hint).") var staleIfError: Int?
    @Option(help: "How often to check manifest.plist for a new version, in milliseconds.") var watchIntervalMs = 250
    @Flag(help: "Log no request (by default each one is logged, see --access-log).") var noAccessLog = false
    @Option(help: ArgumentHelp("Write the access log to this file, reopened on SIGUSR1 (default: stderr).", valueName: "path"))
    var accessLog: String?
    @Option(help: ArgumentHelp("The access log's format: text (swift-log's), combined (NCSA, as nginx's) or json (an object per line).", valueName: "text|combined|json"))
    var accessLogFormat: String?
    @Option(help: "Pull from this origin (http or https URL, or s3://BUCKET/PREFIX read with SigV4-signed requests and the AWS settings folio-build publish uses) through a cache instead of serving --root; repeatable: the first is the primary, the others its backups.")
    var origin: [String] = []
    @Option(help: ArgumentHelp("With several origins: send every request to the first one up (primary), or to each one up in turn (round-robin).", valueName: "primary|round-robin"))
    var originPolicy: String?
    @Option(help: "With several origins or an s3:// one: how often to check each one's manifest.plist, in milliseconds (default: 1000).")
    var healthIntervalMs: Int?
    @Option(help: "Seconds one origin request may take before it fails, and with several origins the next one is tried (default: 30).")
    var originTimeout: Int?
    @Option(help: "Keep the cache's entries on disk in this directory: a cache larger than memory, kept across restarts.") var cacheDir: String?
    @Option(help: "Bytes the cache may hold: on disk with --cache-dir, else in memory (suffixes K, M, G; default: 1G).") var cacheSize: String?
    @Option(help: "Bytes of the hot set kept in memory with --cache-dir; 0 reads every hit from disk (default: 256M, at most the cache size).") var memorySize: String?
    @Option(help: "A file holding the bearer token for PURGE and /.folio/ requests (without it they are disabled).") var purgeTokenFile: String?
    @Option(help: "A PEM file of certificate authorities to trust for an https origin (default: the system's).") var originCa: String?
    @Flag(help: "Send each authorized purge to every origin first: for a chain of tiers sharing one purge token.") var purgeOrigin = false
    @Option(help: "A root public key (.pub): serve or forward only manifests signed under a key list it signed; repeatable.")
    var trust: [String] = []
    @Option(help: "While this file exists, serve from the cache only (stale included) and answer misses 503.") var maintenanceFile: String?
    @Option(help: "A PEM certificate chain, leaf first, to serve https with; repeatable, paired in order with --tls-key, chosen by SNI (the first is the default).")
    var tlsCert: [String] = []
    @Option(help: "The PEM private key of the --tls-cert in the same position (not readable by other users).") var tlsKey: [String] = []
    @Option(help: "With --tls-cert: also listen for plain http on this port and redirect every request to https (308).") var httpPort: Int?
    @Option(help: "With --tls-cert: send Strict-Transport-Security: max-age=SECONDS on every https response.") var hstsMaxAge: Int?
    @Option(
        help: ArgumentHelp(
            "Get and renew a certificate for this domain from an ACME directory (Let's Encrypt by default); repeatable. Answers TLS-ALPN-01 challenges on the https port, and HTTP-01 ones too with --http-port.",
            valueName: "domain"))
    var acme: [String] = []
    @Option(help: ArgumentHelp("The ACME directory.", valueName: "url")) var acmeDirectory = ACMEConfiguration.letsEncryptProduction
    @Option(help: ArgumentHelp("The contact email of the ACME account.", valueName: "email")) var acmeEmail: String?
    @Option(help: ArgumentHelp("A PEM file of certificate authorities to trust for the ACME directory's own https (a test directory's).", valueName: "pem"))
    var acmeCa: String?
    @Option(help: ArgumentHelp("Where the ACME account, certificate and key are kept.", valueName: "dir")) var acmeState = "acme-state"
    @Option(help: .hidden) var acmeRenewalFraction: Double?
    @Flag(inversion: .prefixedNo, help: "With https: offer HTTP/2 by ALPN beside HTTP/1.1.") var http2 = true
    @Option(help: "Serve the operating endpoints (/metrics; a tier's /.folio/ ones and PURGE) on this HOST:PORT only, not on the public port.")
    var adminListen: String?

    @Option(help: "A file holding the bearer token for push deploys (folio-build publish DIR URL) to the admin listener, or the only one; without it deploys are disabled (not with --origin).")
    var deployTokenFile: String?
    @Option(help: "Seconds after which a deploy that sent nothing more (a client killed mid-deploy) loses its lock to the next one (default: 60).")
    var deployLockTimeout: Int?
    @Option(help: "After SIGTERM, seconds to answer what is in flight before exiting.") var drainTimeout = 10
    @Option(help: ArgumentHelp("The least severe log messages written.", valueName: "trace|debug|info|notice|warning|error|critical"))
    var logLevel = "info"

    /// Every problem with the options as given, each naming its option; empty when they are good.
    func problems() -> [String] {
        let checks: [() throws -> Void] = [validatePorts, validateMode, validateTLS, validateAccessLog, validateLimits, validateContent]
        var found: [String] = []
        for check in checks {
            do { try check() } catch let error as ValidationError { found.append(error.message) } catch { found.append("\(error)") }
        }
        return found
    }

    var publishedRoot: String { root ?? "public" }

    func validatePorts() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let adminListen, ListenAddress(adminListen) == nil {
            throw ValidationError("--admin-listen takes HOST:PORT, e.g. 127.0.0.1:9090 or [::1]:9090, got '\(adminListen)'")
        }
    }

    func validateLimits() throws {
        guard threads ?? 1 >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard requestTimeout >= 1 else { throw ValidationError("--request-timeout must be at least 1 second") }
        guard drainTimeout >= 0 else { throw ValidationError("--drain-timeout must be 0 or more seconds") }
        if let deployLockTimeout {
            guard deployTokenFile != nil else { throw ValidationError("--deploy-lock-timeout is for push deploys: add --deploy-token-file FILE") }
            guard deployLockTimeout >= 1 else { throw ValidationError("--deploy-lock-timeout must be at least 1 second") }
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level is one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got '\(logLevel)'")
        }
    }

    /// The tier's origins and sizes, or the published directory's manifest.
    func validateContent() throws {
        guard origin.isEmpty else {
            try validateOrigins()
            if let originCa, !FileIO.exists(originCa) { throw ValidationError("--origin-ca \(originCa) does not exist") }
            for (name, value) in [("--cache-size", cacheSize), ("--memory-size", memorySize)] {
                if let value, Self.bytes(value, zero: name == "--memory-size") == nil { throw ValidationError("\(name) must be a byte count like 512M or 4G, got '\(value)'") }
            }
            if memorySize != nil, cacheDir == nil {
                throw ValidationError("--memory-size bounds the hot set of a cache on disk: add --cache-dir DIR, or use --cache-size for a cache in memory")
            }
            return
        }
        if deployTokenFile != nil {
            // Started empty, it waits for a first deploy; only a wrong path is refused.
            let parent = FileIO.parent(of: publishedRoot)
            guard FileIO.exists(publishedRoot) || parent.isEmpty || FileIO.exists(parent) else {
                throw ValidationError("--root \(publishedRoot): its parent \(parent) does not exist; create it, or fix the path")
            }
            return
        }
        guard FileIO.exists(PublishedLayout.path(publishedRoot, PublishedLayout.manifest)) else {
            throw ValidationError(
                "\(publishedRoot)/manifest.plist not found; run folio-build (make publish) first or pass --root, "
                    + "or add --deploy-token-file FILE to start empty and wait for a first deploy")
        }
    }

    /// Each `--origin` an http(s) URL without query, or a bucket whose AWS settings load; the
    /// pool's options in range.
    func validateOrigins() throws {
        for origin in origin {
            if origin.lowercased().hasPrefix("s3:") {
                _ = try Self.bucket(origin)
                continue
            }
            guard let url = URL(string: origin), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--origin must be an http:// or https:// URL or s3://BUCKET/PREFIX, got '\(origin)'")
            }
            guard url.query == nil, url.fragment == nil else { throw ValidationError("--origin takes no query or fragment: '\(origin)'") }
        }
        if let originPolicy, OriginPolicy(rawValue: originPolicy) == nil {
            throw ValidationError("--origin-policy is primary or round-robin, got '\(originPolicy)'")
        }
        if let healthIntervalMs, healthIntervalMs < 100 { throw ValidationError("--health-interval-ms must be at least 100") }
        if let originTimeout, originTimeout < 1 { throw ValidationError("--origin-timeout must be at least 1 second") }
    }

    /// An `s3://BUCKET/PREFIX` origin, read with the AWS settings (environment, then the AWS
    /// files, as `folio-build publish`) as they are now; without credentials its requests go
    /// unsigned. An error names the origin and what is wrong.
    static func bucket(_ text: String) throws -> S3Origin {
        do {
            let location = try S3Location(parsing: text)
            let configuration = try S3Configuration.loadAllowingAnonymous(environment: ProcessInfo.processInfo.environment)
            return S3Origin(location: location, configuration: configuration)
        } catch {
            throw ValidationError("--origin \(text): \(error)")
        }
    }

    /// Each mode's own options are refused in the other, by name.
    func validateMode() throws {
        let site: [(String, Bool)] = [
            ("--root", root != nil), ("--memory-budget", memoryBudget != nil), ("--manifest-max-age", manifestMaxAge != nil),
            ("--stale-while-revalidate", staleWhileRevalidate != nil), ("--stale-if-error", staleIfError != nil),
            ("--deploy-token-file", deployTokenFile != nil), ("--deploy-lock-timeout", deployLockTimeout != nil),
        ]
        let tier: [(String, Bool)] = [
            ("--cache-dir", cacheDir != nil), ("--cache-size", cacheSize != nil), ("--memory-size", memorySize != nil),
            ("--purge-token-file", purgeTokenFile != nil),
            ("--purge-origin", purgeOrigin), ("--origin-ca", originCa != nil), ("--maintenance-file", maintenanceFile != nil),
            ("--origin-policy", originPolicy != nil), ("--health-interval-ms", healthIntervalMs != nil), ("--origin-timeout", originTimeout != nil),
        ]
        if !origin.isEmpty, let (name, _) = site.first(where: \.1) {
            throw ValidationError("\(name) is for serving a published directory; a cache tier (--origin) takes its content and lifetimes from the origin: remove \(name)")
        }
        if origin.isEmpty, let (name, _) = tier.first(where: \.1) {
            throw ValidationError("\(name) is for a cache tier: add --origin URL, or remove \(name)")
        }
    }

    /// `--access-log` and `--access-log-format`: a known format, a file in a directory that
    /// exists, and neither with `--no-access-log`.
    func validateAccessLog() throws {
        if noAccessLog, let option = accessLog != nil ? "--access-log" : accessLogFormat != nil ? "--access-log-format" : nil {
            throw ValidationError("\(option) configures the access log that --no-access-log turns off: remove one of them")
        }
        if let accessLogFormat, AccessLogFormat(rawValue: accessLogFormat) == nil {
            throw ValidationError("--access-log-format is text, combined or json, got '\(accessLogFormat)'")
        }
        if let accessLog {
            let dir = (accessLog as NSString).deletingLastPathComponent
            guard FileIO.exists(dir.isEmpty ? "." : dir) else {
                throw ValidationError("--access-log \(accessLog): the directory \(dir) does not exist; create it (the service's is /var/log/folio-edge)")
            }
        }
    }

    func validateTLS() throws {
        guard tlsCert.count == tlsKey.count else {
            throw ValidationError("give one --tls-key for each --tls-cert (got \(tlsCert.count) certificates and \(tlsKey.count) keys)")
        }
        let https = !tlsCert.isEmpty || !acme.isEmpty
        if !acme.isEmpty {
            if let acmeCa, !FileIO.exists(acmeCa) { throw ValidationError("--acme-ca \(acmeCa) does not exist") }
            if let f = acmeRenewalFraction, !(f > 0 && f < 1) { throw ValidationError("--acme-renewal-fraction must be between 0 and 1") }
        }
        if let httpPort {
            guard https else { throw ValidationError("--http-port redirects to https: give --tls-cert and --tls-key (or --acme) too") }
            guard (0...65535).contains(httpPort) else { throw ValidationError("--http-port must be 0...65535") }
            guard httpPort == 0 || httpPort != port else { throw ValidationError("--http-port must differ from --port") }
        }
        if let hstsMaxAge {
            guard https else { throw ValidationError("--hsts-max-age is sent over https only: give --tls-cert and --tls-key (or --acme) too") }
            guard hstsMaxAge >= 0 else { throw ValidationError("--hsts-max-age must be 0 or more seconds") }
        }
    }

    /// The configuration the options ask for; an error for `--trust` keys that do not load.
    func configuration() throws -> EdgeConfiguration {
        let roots: Trust?
        do { roots = trust.isEmpty ? nil : try Trust(files: trust) } catch { throw ValidationError("--trust: \(error)") }
        var limits = ConnectionLimits()
        limits.requestTimeout = .seconds(Int64(requestTimeout))
        limits.maxHeaderBytes = maxHeaderBytes
        var listener = EdgeListener(
            host: host, port: port, threads: threads ?? System.coreCount, maxConnections: maxConnections, limits: limits, accessLog: !noAccessLog)
        listener.accessLogPath = accessLog
        listener.accessLogFormat = accessLogFormat.flatMap(AccessLogFormat.init(rawValue:)) ?? .text
        listener.tls = zip(tlsCert, tlsKey).map { TLSFiles(certificate: $0, key: $1) }
        listener.httpPort = httpPort
        listener.hstsMaxAge = hstsMaxAge
        listener.http2 = http2
        listener.acme = acmeSettings
        listener.adminListen = adminListen.flatMap(ListenAddress.init)
        var config = EdgeConfiguration(listener: listener, mode: try mode(trust: roots), watchInterval: .milliseconds(watchIntervalMs))
        config.drainTimeout = .seconds(drainTimeout)
        config.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        return config
    }

    /// The mode the options ask for: a cache tier with `--origin`, else the published directory.
    func mode(trust: Trust?) throws -> EdgeMode {
        guard !origin.isEmpty else {
            let hints = CacheHintOverride(maxAge: manifestMaxAge, staleWhileRevalidate: staleWhileRevalidate, staleIfError: staleIfError)
            return .origin(
                OriginMode(
                    root: publishedRoot, memoryBudget: memoryBudget ?? 256 << 20, manifestHintOverride: hints, trust: trust,
                    deployTokenFile: deployTokenFile, deployLockTimeout: deployLockTimeout ?? 60))
        }
        let origins = try origin.map { $0.lowercased().hasPrefix("s3:") ? TierOrigin.s3(try Self.bucket($0)) : .http($0) }
        var tier = CacheTierMode(origins: origins, cacheDirectory: cacheDir, cacheSize: Self.bytes(cacheSize ?? "1G") ?? 1 << 30)
        tier.memorySize = memorySize.flatMap { Self.bytes($0, zero: true) }
        tier.purgeTokenFile = purgeTokenFile
        tier.maintenanceFile = maintenanceFile
        tier.purgeOrigin = purgeOrigin
        tier.originCA = originCa
        tier.trust = trust
        tier.originPolicy = originPolicy.flatMap(OriginPolicy.init(rawValue:)) ?? .primary
        tier.healthInterval = .milliseconds(healthIntervalMs ?? 1000)
        tier.originTimeout = .seconds(originTimeout ?? 30)
        return .cacheTier(tier)
    }

    /// `--acme` and its options, when given.
    var acmeSettings: ACMEConfiguration? {
        guard !acme.isEmpty else { return nil }
        var settings = ACMEConfiguration(
            directoryURL: acmeDirectory, domains: acme, contactEmail: acmeEmail, extraTrustRootsPath: acmeCa, stateDirectory: acmeState)
        // HTTP-01 on the plain listener when there is one (a validation port 80 of its own),
        // TLS-ALPN-01 on the https port (443 for a public directory) always.
        settings.challengeTypes = httpPort == nil ? [.tlsALPN01] : [.http01, .tlsALPN01]
        if let acmeRenewalFraction { settings.renewalFraction = acmeRenewalFraction }
        return settings
    }

    /// `123`, `64K`, `512M`, `4G` (powers of 1024) as bytes; nil for anything else, and for 0
    /// unless `zero`.
    static func bytes(_ text: String, zero: Bool = false) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = Substring(text.uppercased())
        var scale = 1
        if digits.hasSuffix("B") { digits = digits.dropLast() }
        if let last = digits.last, let unit = units[last] {
            scale = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), let n = Int(digits), n > 0 || zero, n <= Int.max / scale else { return nil }
        return n * scale
    }
}
