import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The handlers of one accepted connection, the same for every listener of a mode: TLS first
/// when the listener has it, then the origin's `EdgeHandler`, or the tier's request decoder (with
/// the origin's head limits) and `ProxyHandler`.
struct ConnectionPipeline: Sendable {
    let content: EdgeService.Content
    let metrics: EdgeMetrics
    let limits: ConnectionLimits
    let accessLog: Logger?
    let pool: NIOThreadPool

    /// `extraLines` go on every response (HSTS over TLS); `role` says which endpoints it answers.
    func configure(_ sync: ChannelPipeline.SynchronousOperations, tls: NIOSSLContext?, extraLines: String, role: ListenerRole) throws {
        if let tls { try sync.addHandler(NIOSSLServerHandler(context: tls)) }
        switch content {
        case .site(let store):
            try sync.addHandler(
                EdgeHandler(store: store, limits: limits, metrics: metrics, accessLog: accessLog, fileIO: pool, extraLines: extraLines, role: role))
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
