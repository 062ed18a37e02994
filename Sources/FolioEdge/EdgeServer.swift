import FolioACME
import FolioSupport
import FolioToolSupport
import Foundation
import Logging
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import NIOSSL
import Prometheus
import ServiceLifecycle
import Synchronization
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTP listener as a swift-service-lifecycle `Service`: on graceful shutdown (SIGTERM)
/// it stops accepting, lets every connection finish its request in flight, then returns.
struct EdgeService: Service {
    /// What the edge serves: a published directory, or an origin through a cache.
    enum Content: Sendable {
        case site(SiteStore)
        case cache(HTTPCache)
    }

    let config: EdgeConfiguration
    let group: MultiThreadedEventLoopGroup
    let content: Content
    let metrics: EdgeMetrics
    let logger: Logger
    /// The certificates for https; nil serves plain http.
    var certificates: CertificateStore?
    /// With `--acme`: the answers to HTTP-01 challenges, served on the plain listener.
    var acmeResponder: ACMEChallengeResponder?
    /// Where each answered request is logged (nil: `--no-access-log`).
    var accessLog: AccessLogSink?
    /// With `--deploy-token-file`: the push-deploy endpoints.
    var deploy: EdgeDeploy?
    /// What a reload changes: limits for new connections, the drain timeout.
    let live: LiveSettings
    /// Listening sockets passed by systemd or a parent (`LISTEN_FDS`), used instead of binding.
    var inherited: InheritedSockets?
    let notifier: SystemdNotifier

    func run() async throws {
        let tls = try certificates.map { store in
            do { return try EdgeTLS.serverContext(store, http2: config.listener.http2) } catch { throw EdgeStartupError("cannot set up TLS: \(error)") }
        }
        let quiesce = ServerQuiescingHelper(group: group)
        let drained = DrainSignal(group.next().makePromise(of: Void.self))
        let connections = ConnectionPipeline(
            content: content, metrics: metrics, live: live,
            accessLog: accessLog, pool: NIOThreadPool.singleton, deploy: deploy)
        var inherited = self.inherited
        let server: Channel
        do {
            server = try await mainListener(connections, tls: tls, quiesce: quiesce, inherited: &inherited)
        } catch {
            // The process ends with this error. The loops are left running, as on the normal
            // path: shutting them down here raced the failed bind's own cleanup on them.
            drained.finish()
            throw error
        }
        let port = server.localAddress?.port ?? config.listener.port
        let redirect = try await redirectListener(httpsPort: port, quiesce: quiesce, inherited: &inherited)
        let admin = try await adminListener(connections, tls: tls, quiesce: quiesce, inherited: &inherited)
        logStart(port: port)
        notifier.ready(status: status)

        await withGracefulShutdownHandler {
            await drained.wait()
        } onGracefulShutdown: {
            notifier.stopping()
            logger.info("draining connections", metadata: ["timeout_s": "\(live.drainTimeout.components.seconds)"])
            let quiesced = group.next().makePromise(of: Void.self)
            quiesced.futureResult.whenComplete { _ in drained.finish() }
            quiesce.initiateShutdown(promise: quiesced)
            group.next().scheduleTask(in: TimeAmount(live.drainTimeout)) {
                if drained.finish() { logger.warning("drain timeout reached; closing the connections still open") }
            }
        }
        try? await server.closeFuture.get()
        try? await redirect?.close()
        try? await admin?.close()
        logger.info("stopped")
        // The event loops live as long as the process (as NIO's singleton group does): the
        // quiescing helper still completes work on them after the last connection closes.
    }

    /// The status line for systemd (`systemctl status`): what is served.
    var status: String {
        switch content {
        case .site(let store): store.site.statusLine
        case .cache(let cache): "caching \(cache.pool.origins.map(\.base).joined(separator: ", "))"
        }
    }

    /// The log line of a start: what is served, on which port.
    func logStart(port: Int) {
        switch content {
        case .site(let store) where store.site.isAwaitingDeploy:
            logger.notice(
                "\(AwaitingDeploy.status) (folio-build publish DIR URL); content requests are answered 503 until then",
                metadata: ["root": "\(store.root)", "port": "\(port)"])
        case .site(let store):
            let site = store.site
            logger.info(
                "serving", metadata: ["root": "\(store.root)", "version": "\(site.manifest.version)", "channels": "\(site.channelVersions)", "port": "\(port)"])
        case .cache(let cache):
            let usage = cache.store.usage
            logger.info("caching", metadata: ["origins": "\(cache.pool.origins.map(\.base))", "entries": "\(usage.entries)", "bytes": "\(usage.bytes)", "port": "\(port)"])
        }
    }

    /// The public listener: TLS when configured, each connection counted against the limit.
    func mainListener(
        _ connections: ConnectionPipeline, tls: NIOSSLContext?, quiesce: ServerQuiescingHelper, inherited: inout InheritedSockets?
    ) async throws -> Channel {
        let open = Atomic<Int>(0)
        let maxConnections = config.listener.maxConnections
        let metrics = self.metrics
        // HSTS only where the answer itself came over TLS (RFC 6797 §7.2).
        let extraLines = tls != nil && config.listener.hstsMaxAge != nil ? "Strict-Transport-Security: max-age=\(config.listener.hstsMaxAge ?? 0)\r\n" : ""
        let role: ListenerRole = config.listener.adminListen == nil ? .all : .publicOnly
        let acme = acmeResponder
        let bootstrap = Self.listener(group, backlog: 1024, quiesce: quiesce)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                let count = open.add(1, ordering: .relaxed).newValue
                channel.closeFuture.whenComplete { _ in open.subtract(1, ordering: .relaxed) }
                if count > maxConnections {
                    metrics.connectionsRejected.increment()
                    return channel.close()
                }
                return channel.eventLoop.makeCompletedFuture {
                    try connections.configure(channel, tls: tls, extraLines: extraLines, role: role, acme: acme)
                }
            }
        let scheme = tls == nil ? "http" : "https"
        let fd = inherited?.take(scheme, fallback: true)
        return try await Self.bind(
            bootstrap, config.listener.host, config.listener.port, inherited: fd, option: "--port", announce: "listening on", scheme: scheme)
    }
}

/// Completes the drain once: when the last connection closed, or at the drain timeout.
final class DrainSignal: Sendable {
    private let promise: EventLoopPromise<Void>
    private let done = Atomic(false)

    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

    /// Completes the drain; false when it was complete already.
    @discardableResult
    func finish() -> Bool {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        promise.succeed(())
        return true
    }

    func wait() async { try? await promise.futureResult.get() }
}

extension EdgeService {
    /// A listening socket's bootstrap, its connections drained by `quiesce` on shutdown.
    static func listener(_ group: MultiThreadedEventLoopGroup, backlog: Int32, quiesce: ServerQuiescingHelper) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: backlog)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
    }

    /// With `--admin-listen`, the plain listener of the operating endpoints (`/metrics`, the
    /// tier's `/.folio/` ones and PURGE, `/healthz`); nil otherwise.
    /// It speaks https with the edge's certificates unless it listens on a loopback address:
    /// its bearer tokens (purge, deploy) never cross a network in clear.
    func adminListener(
        _ connections: ConnectionPipeline, tls: NIOSSLContext?, quiesce: ServerQuiescingHelper, inherited: inout InheritedSockets?
    ) async throws -> Channel? {
        guard let address = config.listener.adminListen else { return nil }
        let tls = Loopback.contains(address.host) ? nil : tls
        let bootstrap = Self.listener(group, backlog: 64, quiesce: quiesce)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try connections.configure(channel, tls: tls, extraLines: "", role: .adminOnly)
                }
            }
        let fd = inherited?.take("admin")
        return try await Self.bind(
            bootstrap, address.host, address.port, inherited: fd, option: "--admin-listen", announce: "admin listening on",
            scheme: tls == nil ? "http" : "https")
    }

    /// With TLS and `--http-port`, the plain listener that redirects to https; nil otherwise.
    func redirectListener(httpsPort: Int, quiesce: ServerQuiescingHelper, inherited: inout InheritedSockets?) async throws -> Channel? {
        guard certificates != nil, let httpPort = config.listener.httpPort else { return nil }
        let acme = acmeResponder
        let bootstrap = Self.listener(group, backlog: 256, quiesce: quiesce)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RedirectToHTTPS(httpsPort: httpsPort, acme: acme))
                }
            }
        let fd = inherited?.take("http")
        return try await Self.bind(bootstrap, config.listener.host, httpPort, inherited: fd, option: "--http-port", announce: "listening on")
    }

    /// Binds a listener, or takes the inherited socket `fd` (listening already; its address is
    /// the socket unit's), and prints `ANNOUNCE SCHEME://HOST:PORT` (tests and scripts read the
    /// port there); an error names the option that asked for it.
    static func bind(
        _ bootstrap: ServerBootstrap, _ host: String, _ port: Int, inherited fd: CInt?, option: String, announce: String, scheme: String = "http"
    ) async throws -> Channel {
        let channel: Channel
        do {
            if let fd {
                _ = listen(fd, 1024)
                channel = try await bootstrap.withBoundSocket(fd).get()
            } else {
                channel = try await bootstrap.bind(host: host, port: port).get()
            }
        } catch {
            let place = fd.map { "the inherited socket \($0)" } ?? "\(host):\(port)"
            throw EdgeStartupError("cannot listen on \(place) (\(option)): \(error)")
        }
        let shownHost = fd == nil ? shown(host) : (channel.localAddress?.ipAddress).map(shown) ?? shown(host)
        FileHandle.standardOutput.write(Data("\(announce) \(scheme)://\(shownHost):\(channel.localAddress?.port ?? port)\n".utf8))
        return channel
    }

    /// A host as it goes in a URL: an IPv6 address in brackets.
    static func shown(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}

/// Watches the published root and swaps in new versions, and the TLS certificates' files;
/// SIGHUP reads the configuration again (with `--config`), then reloads both at once, telling
/// systemd (`RELOADING=1`, then `READY=1`). With a systemd watchdog, pings it.
struct WatchService: Service {
    let reloader: SiteReloader?
    let certificates: CertificateStore?
    let config: ConfigReloader?
    let interval: Duration
    let logger: Logger
    let notifier: SystemdNotifier
    /// The status line for systemd after a reload.
    let status: @Sendable () -> String

    func reloadCertificates(force: Bool) {
        for line in certificates?.reload(force: force) ?? [] {
            if line.ok { logger.info("\(line.message)") } else { logger.warning("\(line.message)") }
        }
    }

    /// One SIGHUP: the configuration, the published directory, the certificates.
    func reloadAll() async {
        notifier.reloading()
        if let config { _ = await config.apply() }
        await reloader?.check(force: true)
        reloadCertificates(force: true)
        notifier.ready(status: status())
    }

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() { await reloadAll() }
            }
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    try? await Task.sleep(for: interval)
                    await reloader?.check()
                    reloadCertificates(force: false)
                }
            }
            if let every = SystemdNotifier.watchdogInterval() {
                group.addTask {
                    while !Task.isCancelled {
                        notifier.send("WATCHDOG=1")
                        try? await Task.sleep(for: every)
                    }
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }
}

package struct EdgeStartupError: Error, CustomStringConvertible {
    package var description: String
    init(_ d: String) { description = d }
}

/// Builds the services from a configuration and runs them until SIGTERM or SIGINT.
package enum Edge {
    /// The certificates for https (from `--tls-cert` and `--acme`), nil for plain http; and the
    /// ACME manager with `--acme`.
    static func certificates(_ config: EdgeConfiguration, logger: Logger) async throws -> (CertificateStore?, ACMEManager?) {
        var acme: (ACMEManager, CertificatePair)?
        if let settings = config.listener.acme { acme = try await ACMEService.prepare(settings, logger: logger) }
        guard !config.listener.tls.isEmpty || acme != nil else { return (nil, nil) }
        do {
            return (try CertificateStore(config.listener.tls.map { ($0.certificate, $0.key) }, acme: acme?.1), acme?.0)
        } catch {
            throw EdgeStartupError("\(error)")
        }
    }

    package static func run(_ config: EdgeConfiguration) async throws {
        EdgeLogHandler.bootstrap(level: config.logLevel)
        let logger = Logger(label: "folio.edge")
        OpenEntryFiles.raiseDescriptorLimit()
        let accessLog: (sink: AccessLogSink?, writer: AccessLogWriter?)
        do { accessLog = try AccessLogSink.make(config.listener) } catch { throw EdgeStartupError("--access-log: \(error)") }
        defer { accessLog.writer?.flush() }
        let inherited = InheritedSockets.fromEnvironment()
        let (certificates, acme) = try await Self.certificates(config, logger: logger)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: config.listener.threads)
        let running = Running(
            config: config, group: group, logger: logger, certificates: certificates, acme: acme, accessLog: accessLog.sink,
            accessLogWriter: accessLog.writer, live: LiveSettings(limits: config.listener.limits, drainTimeout: config.drainTimeout),
            inherited: inherited)
        switch config.mode {
        case .origin(let origin): try await running.origin(origin)
        case .cacheTier(let tier): try await running.cacheTier(tier)
        }
    }

    /// What both modes start with: the listener's event loops and certificates.
    struct Running {
        let config: EdgeConfiguration
        let group: MultiThreadedEventLoopGroup
        let logger: Logger
        let certificates: CertificateStore?
        let acme: ACMEManager?
        let accessLog: AccessLogSink?
        let accessLogWriter: AccessLogWriter?
        let live: LiveSettings
        let inherited: InheritedSockets?
        let notifier = SystemdNotifier()

        /// The listener, the watcher (the published directory, certificates, SIGHUP) and the
        /// ACME renewals (when there are certificates), until SIGTERM or SIGINT.
        func run(_ content: EdgeService.Content, metrics: EdgeMetrics, site: SiteReloader?, admin: CacheAdmin?, deploy: EdgeDeploy? = nil) async throws {
            let edge = EdgeService(
                config: config, group: group, content: content, metrics: metrics, logger: logger, certificates: certificates,
                acmeResponder: acme?.responder, accessLog: accessLog, deploy: deploy, live: live, inherited: inherited, notifier: notifier)
            var cache: HTTPCache?
            if case .cache(let c) = content { cache = c }
            let reconfigure = config.reload.map {
                ConfigReloader(reload: $0, live: live, certificates: certificates, site: site, admin: admin, cache: cache, logger: logger)
            }
            let watcher = WatchService(
                reloader: site, certificates: certificates, config: reconfigure, interval: config.watchInterval, logger: logger,
                notifier: notifier, status: { edge.status })
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
                .init(service: edge, successTerminationBehavior: .gracefullyShutdownGroup), .init(service: watcher),
            ]
            if let acme, let certificates { services.append(.init(service: ACMEService(manager: acme, certificates: certificates, logger: logger))) }
            // Last, so it is shut down first: the edge's last lines are written at exit (`Edge.run`).
            services.append(.init(service: AccessLogService(writer: accessLogWriter, logger: logger)))
            let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        }

        func origin(_ mode: OriginMode) async throws {
            let loader = SiteLoader(
                root: mode.root, memoryBudget: mode.memoryBudget, manifestHintOverride: mode.manifestHintOverride, trust: mode.trust,
                keepValues: mode.deployTokenFile != nil)
            let site = try Self.initialSite(loader, deploys: mode.deployTokenFile != nil)
            let metrics = EdgeMetrics(registry: PrometheusCollectorRegistry())
            site.reportChannelFailures(logger: logger, metrics: metrics)
            let store = SiteStore(site, root: mode.root)
            let reloader = SiteReloader(store: store, loader: loader, logger: logger, metrics: metrics, notifier: notifier)
            let deploy = try mode.deployTokenFile.map { file in
                EdgeDeploy(
                    root: mode.root, token: try Self.token(file, what: "deploy"), trust: mode.trust, store: store, staleAfter: TimeInterval(mode.deployLockTimeout),
                    logger: logger
                ) { parsed, checked in await reloader.check(parsed: parsed, checked: checked) }
            }
            try await run(.site(store), metrics: metrics, site: reloader, admin: nil, deploy: deploy)
        }

        /// The version the root holds; with deploys on, the placeholder when it holds none yet
        /// (the root made when missing).
        static func initialSite(_ loader: SiteLoader, deploys: Bool) throws -> Site {
            if deploys, AwaitingDeploy.isEmpty(loader.root) {
                try AwaitingDeploy.prepare(loader.root)
                return .awaitingDeploy()
            }
            do { return try loader.load(previous: nil) } catch {
                throw EdgeStartupError("cannot serve \(loader.root): \(error)")
            }
        }

        /// The token in a token file; a startup error naming the file otherwise.
        static func token(_ path: String, what: String) throws -> String {
            do { return try BearerToken.read(path, what: what) } catch let e as EdgeStartupError { throw e } catch {
                throw EdgeStartupError("cannot read the \(what) token file \(path): \(error)")
            }
        }

        func cacheTier(_ mode: CacheTierMode) async throws {
            let store = CacheStore(memoryLimit: mode.memoryLimit, directory: mode.cacheDirectory, diskLimit: mode.cacheSize, logger: logger)
            do { try store.open() } catch {
                throw EdgeStartupError("cannot use the cache directory \(mode.cacheDirectory ?? ""): \(error)")
            }
            let token = try mode.purgeTokenFile.map { try Self.token($0, what: "purge") }
            let admin = CacheAdmin(token: token, maintenanceFile: mode.maintenanceFile)
            let metrics = EdgeMetrics(registry: PrometheusCollectorRegistry())
            let cache = HTTPCache(
                pool: OriginPool(mode.origins, policy: mode.originPolicy), store: store, admin: admin, metrics: metrics, group: group,
                purgeOrigin: mode.purgeOrigin, originCA: mode.originCA, trust: mode.trust, timeout: TimeAmount(mode.originTimeout),
                healthInterval: TimeAmount(mode.healthInterval))
            S3Origin.logSigning(mode.origins, logger)
            cache.health.start(on: group.next())
            try await run(.cache(cache), metrics: metrics, site: nil, admin: admin)
            store.flush()
            await cache.shutdown()
        }
    }
}
