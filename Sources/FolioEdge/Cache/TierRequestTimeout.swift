import NIOCore
import NIOHTTP1

/// Whether bytes of a request not yet complete have arrived on a tier connection. NIO's request
/// decoder hides a partial head from `ProxyHandler`, so `RequestBytesWatcher`, ahead of the
/// decoder, sets it, and `ProxyHandler` clears it when a request is complete. Both handlers live
/// on the connection's event loop.
/// How long an idle connection stays open once the edge drains: a request its client is sending
/// at that moment is answered (with `Connection: close`) rather than cut.
let quiesceGrace = TimeAmount.milliseconds(200)

final class RequestProgress {
    var bytesPending = false
    init() {}
}

/// Notes that request bytes arrived, and passes them on unchanged.
final class RequestBytesWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let progress: RequestProgress
    init(_ progress: RequestProgress) { self.progress = progress }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if unwrapInboundIn(data).readableBytes > 0 { progress.bytesPending = true }
        context.fireChannelRead(data)
    }
}

/// The tier's slow-request guard, as the origin mode's (`--request-timeout`): while no answer is
/// outstanding, a client must send its next complete request within the limit; a connection
/// that sent part of one gets a 408 and is closed, an idle one is closed. A request waiting for
/// the origin is bounded by the origin's own timeouts, not this one.
extension ProxyHandler {
    func handlerAdded(context: ChannelHandlerContext) {
        waitingSince = .now()
        let limit = requestTimeout
        let check = min(limit, .seconds(1))
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: check, delay: check) { _ in
            let (handler, context) = bound.value
            handler.checkRequestTimeout(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    /// Drain (SIGTERM): each answer from now on closes its connection; an idle one closes at a
    /// check at least `quiesceGrace` later, so that a request already on its way is answered.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        quiescingSince = .now()
    }

    func checkRequestTimeout(context: ChannelHandlerContext) {
        if let since = quiescingSince, !closed, queue.isEmpty, !progress.bytesPending, head == nil, NIODeadline.now() - since >= quiesceGrace {
            closed = true
            context.close(promise: nil)
            return
        }
        guard !closed, queue.isEmpty, NIODeadline.now() - waitingSince > requestTimeout else { return }
        if progress.bytesPending || head != nil {
            answerAndClose(context, .requestTimeout, "request timed out\n", head: head, started: waitingSince)
        } else {
            closed = true
            context.close(promise: nil)
        }
    }
}
