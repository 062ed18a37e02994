import NIOCore
import NIOHTTP2

/// An HTTP/2 connection's settings and defences on swift-nio-http2 (both modes' under
/// `FOLIO_EDGE_H2=swift-nio-http2`; the libnghttp2 path has the same limits in
/// `HTTP2FloodGuard` and its own handler). swift-nio-http2 enforces the flood limits
/// (rapid reset, CVE-2023-44487: 200 resets in 30 s; CONTINUATION: 5 in a row; PING, SETTINGS
/// and PRIORITY: 200 in 30 s; 200 glitches; empty DATA frames; buffered control frames); the
/// edge sets the stream and header-list limits and adds the idle and drain behaviour below.
package enum HTTP2Limits {
    /// Concurrent streams a client may open (nginx's default is 128).
    package static let maxConcurrentStreams = 128

    /// `maxHeaderBytes`: the largest header list (the edge's `--max-header-bytes`).
    package static func connection(maxHeaderBytes: Int) -> NIOHTTP2Handler.ConnectionConfiguration {
        var config = NIOHTTP2Handler.ConnectionConfiguration()
        config.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderBytes),
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        config.targetWindowSize = 1 << 20
        return config
    }

    package static func stream() -> NIOHTTP2Handler.StreamConfiguration {
        var config = NIOHTTP2Handler.StreamConfiguration()
        config.targetWindowSize = 1 << 20
        return config
    }
}

/// After the HTTP/2 handler of a connection: counts its open streams; closes it when no stream
/// has been open for the request timeout (an idle client, or one that never sends a request);
/// on drain (`ChannelShouldQuiesceEvent`) sends GOAWAY, and after a grace the GOAWAY naming the
/// last stream it will answer, and closes once those are answered; after a connection error, closes by `LingeringClose`
/// (at once when the pipeline has none).
package final class HTTP2ConnectionGuard: ChannelDuplexHandler {
    package typealias InboundIn = Never
    package typealias OutboundIn = Never
    package typealias OutboundOut = HTTP2Frame

    private var open = 0
    private var lastStream = HTTP2StreamID.rootStream
    private var draining = false
    private var lastActivity = NIODeadline.now()
    private var timer: RepeatedTask?
    private let timeout: TimeAmount

    package init(timeout: TimeAmount) { self.timeout = timeout }

    /// How long after the first GOAWAY of a drain the final one is sent.
    package static let drainGrace = TimeAmount.milliseconds(200)

    private func goAway(_ context: ChannelHandlerContext, lastStreamID: HTTP2StreamID) {
        let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        let check = min(timeout, .seconds(1))
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: check, delay: check) { _ in
            let (handler, context) = bound.value
            if handler.open == 0, NIODeadline.now() - handler.lastActivity > handler.timeout { context.close(promise: nil) }
        }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    /// A connection error (a flood, a malformed frame): swift-nio-http2 has sent GOAWAY with
    /// its code; the connection ends here rather than at the idle timeout, once the client has
    /// stopped sending. A stream's error has reset that stream only, and the others go on.
    package func errorCaught(context: ChannelHandlerContext, error: Error) {
        if error is NIOHTTP2Errors.StreamError { return }
        let linger = context.eventLoop.makePromise(of: Void.self)
        linger.futureResult.assumeIsolated().whenFailure { _ in context.close(promise: nil) }
        context.triggerUserOutboundEvent(LingeringClose.Begin(), promise: linger)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let created as NIOHTTP2StreamCreatedEvent:
            open += 1
            lastActivity = .now()
            lastStream = max(lastStream, created.streamID)
        case is StreamClosedEvent:
            open -= 1
            lastActivity = .now()
            if draining && open == 0 { context.close(promise: nil) }
        case is ChannelShouldQuiesceEvent:
            // RFC 9113 §6.8: a first GOAWAY naming the highest stream, so that requests already
            // on their way are still taken; after the grace, the one naming the last stream taken.
            draining = true
            goAway(context, lastStreamID: .maxID)
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: Self.drainGrace) {
                let (handler, context) = bound.value
                handler.goAway(context, lastStreamID: handler.lastStream)
                if handler.open == 0 { context.close(promise: nil) }
            }
            return
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }
}
