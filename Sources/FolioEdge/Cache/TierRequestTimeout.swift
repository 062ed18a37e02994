import NIOCore
import NIOHTTP1

/// Whether bytes of a request not yet complete have arrived on a tier connection. NIO's request
/// decoder hides a partial head from `ProxyHandler`, so `RequestBytesWatcher`, ahead of the
/// decoder, sets it, and `ProxyHandler` clears it when a request is complete. Both handlers live
/// on the connection's event loop.
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

    func checkRequestTimeout(context: ChannelHandlerContext) {
        guard !closed, queue.isEmpty, NIODeadline.now() - waitingSince > requestTimeout else { return }
        if progress.bytesPending || head != nil {
            answerAndClose(context, .requestTimeout, "request timed out\n", head: head, started: waitingSince)
        } else {
            closed = true
            context.close(promise: nil)
        }
    }
}
