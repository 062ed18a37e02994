import FolioACME
import FolioHTTPCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// The handlers of one accepted connection, the same for every listener of a mode: TLS first
/// when the listener has it, and HTTP/2 when ALPN chose it; then the origin's `EdgeHandler`, or
/// the tier's request decoder (with the origin's head limits) and `ProxyHandler` (HTTP/1.1);
/// over HTTP/2, libnghttp2's `EdgeNGHTTP2Handler` with the mode's stream responder.
struct ConnectionPipeline: Sendable {
    let content: EdgeService.Content
    let metrics: EdgeMetrics
    /// The limits a reload may change, read as each connection starts: a connection keeps the
    /// limits it started with.
    let live: LiveSettings
    let accessLog: AccessLogSink?
    let pool: NIOThreadPool
    /// The push-deploy endpoints, in origin mode with `--deploy-token-file`.
    var deploy: EdgeDeploy?
    private var limits = ConnectionLimits()

    init(content: EdgeService.Content, metrics: EdgeMetrics, live: LiveSettings, accessLog: AccessLogSink?, pool: NIOThreadPool, deploy: EdgeDeploy?) {
        self.content = content
        self.metrics = metrics
        self.live = live
        self.accessLog = accessLog
        self.pool = pool
        self.deploy = deploy
    }

    /// `extraLines` go on every response (HSTS over TLS); `role` says which endpoints it answers.
    /// With `acme`, a TLS connection's ClientHello is read first, so that an ACME server's
    /// TLS-ALPN-01 validation gets the challenge certificate (`ACMEALPNSniffer`).
    func configure(_ channel: Channel, tls: NIOSSLContext?, extraLines: String, role: ListenerRole, acme: ACMEChallengeResponder? = nil) throws {
        var now = self
        now.limits = live.limits
        try now.configureNow(channel, tls: tls, extraLines: extraLines, role: role, acme: acme)
    }

    private func configureNow(_ channel: Channel, tls: NIOSSLContext?, extraLines: String, role: ListenerRole, acme: ACMEChallengeResponder?) throws {
        let sync = channel.pipeline.syncOperations
        guard let tls else { return try configureHTTP1(sync, extraLines: extraLines, role: role) }
        guard let acme else { return try configureTLS(sync, tls: tls, extraLines: extraLines, role: role) }
        try sync.addHandler(
            ACMEALPNSniffer(responder: acme, timeout: limits.requestTimeout) { sync in
                try configureTLS(sync, tls: tls, extraLines: extraLines, role: role)
            })
    }

    /// TLS (its handshake within the request timeout), then HTTP/2 or HTTP/1.1 as ALPN chose.
    private func configureTLS(_ sync: ChannelPipeline.SynchronousOperations, tls: NIOSSLContext, extraLines: String, role: ListenerRole) throws {
        try sync.addHandler(NIOSSLServerHandler(context: tls))
        try sync.addHandler(TLSHandshakeDeadline(timeout: limits.requestTimeout))
        try sync.addHandler(
            ApplicationProtocolNegotiationHandler { result, channel in
                channel.eventLoop.makeCompletedFuture {
                    if case .negotiated("h2") = result {
                        try configureHTTP2(channel, extraLines: extraLines, role: role)
                    } else {
                        try configureHTTP1(channel.pipeline.syncOperations, extraLines: extraLines, role: role)
                    }
                }
            })
    }

    /// HTTP/2 on swift-nio-http2 instead of libnghttp2, in both modes: `FOLIO_EDGE_H2=swift-nio-http2`,
    /// for differential tests and benchmarks of the two frame layers.
    static let swiftNIOHTTP2 = ProcessInfo.processInfo.environment["FOLIO_EDGE_H2"] == "swift-nio-http2"

    /// HTTP/2: every stream is answered on the connection's channel, with libnghttp2 as the
    /// frame layer (`EdgeNGHTTP2Handler`, which keeps its own defences and timeouts), by the
    /// origin's `OriginStreamResponder` or the tier's `TierStreamResponder`. Under
    /// `swiftNIOHTTP2`, the layer they replaced: swift-nio-http2 and `HTTP2ConnectionGuard`, with
    /// `EdgeHTTP2Handler` (origin), or each stream's HTTP/1.1 handlers behind a bridge (tier).
    private func configureHTTP2(_ channel: Channel, extraLines: String, role: ListenerRole) throws {
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(LingeringClose())
        guard Self.swiftNIOHTTP2 else {
            let responder: any NGHTTP2StreamResponder
            switch content {
            case .site(let store):
                responder = OriginStreamResponder(
                    store: store, limits: limits, metrics: metrics, accessLog: accessLog, fileIO: pool, extraLines: extraLines, role: role)
            case .cache(let cache):
                responder = TierStreamResponder(cache: cache, limits: limits, metrics: metrics, accessLog: accessLog, extraLines: extraLines, role: role)
            }
            return try sync.addHandler(EdgeNGHTTP2Handler(responder: responder, limits: limits))
        }
        let connection = HTTP2Limits.connection(maxHeaderBytes: limits.maxHeaderBytes)
        if case .site(let store) = content {
            try sync.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connection, streamConfiguration: HTTP2Limits.stream()))
            try sync.addHandler(
                EdgeHTTP2Handler(store: store, limits: limits, metrics: metrics, accessLog: accessLog, fileIO: pool, extraLines: extraLines, role: role))
            try sync.addHandler(HTTP2ConnectionGuard(timeout: limits.requestTimeout))
            return
        }
        _ = try sync.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: connection, streamConfiguration: HTTP2Limits.stream()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                let sync = stream.pipeline.syncOperations
                try sync.addHandler(HTTP2StreamBridge())
                try configureHTTP1(sync, extraLines: extraLines, role: role)
            }
        }
        try sync.addHandler(HTTP2ConnectionGuard(timeout: limits.requestTimeout))
    }

    private func configureHTTP1(_ sync: ChannelPipeline.SynchronousOperations, extraLines: String, role: ListenerRole) throws {
        switch content {
        case .site(let store):
            try sync.addHandler(
                EdgeHandler(
                    store: store, limits: limits, metrics: metrics, accessLog: accessLog, fileIO: pool, extraLines: extraLines, role: role,
                    deploy: deploy))
        case .cache(let cache):
            // The request decoder only: ProxyHandler writes responses as bytes and keeps
            // pipelined answers in order itself.
            let progress = RequestProgress()
            try sync.addHandler(RequestBytesWatcher(progress))
            // The origin mode's head limits (--max-header-bytes, 100 fields); beyond them a 431.
            var decoderLimits = NIOHTTPDecoderLimitConfiguration()
            decoderLimits.maxHeaderListSize = limits.maxHeaderBytes
            decoderLimits.maxHeaderFieldSize = limits.maxHeaderBytes
            decoderLimits.maxHeaderFieldCount = limits.maxHeaderCount
            try sync.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: decoderLimits)))
            try sync.addHandler(
                ProxyHandler(
                    cache: cache, metrics: metrics, accessLog: accessLog, extraLines: extraLines, requestTimeout: limits.requestTimeout,
                    progress: progress, role: role))
        }
    }
}
