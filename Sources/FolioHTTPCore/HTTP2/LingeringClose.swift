import NIOCore

/// Between TLS and HTTP/2: once a connection error has been answered with GOAWAY, what the
/// client still sends is read and dropped, and the connection closes when the client has been
/// quiet for `quiet` (or after `limit` in all). Closing at once, while a flooding client is still
/// writing, resets the connection, and the client's TLS stack then fails before it reads the
/// GOAWAY that says why (nginx's `lingering_close` for the same reason).
package final class LingeringClose: ChannelDuplexHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    /// The outbound user event that starts the linger; a pipeline without this handler fails it.
    package struct Begin: Sendable {
        package init() {}
    }

    private let quiet: TimeAmount
    private let limit: TimeAmount
    private var lingering = false
    private var lastRead = NIODeadline.now()
    private var timer: RepeatedTask?

    package init(quiet: TimeAmount = .seconds(1), limit: TimeAmount = .seconds(5)) {
        self.quiet = quiet
        self.limit = limit
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard lingering else { return context.fireChannelRead(data) }
        lastRead = .now()
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        if !lingering { context.fireChannelReadComplete() }
    }

    package func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is Begin else { return context.triggerUserOutboundEvent(event, promise: promise) }
        promise?.succeed()
        guard !lingering else { return }
        lingering = true
        lastRead = .now()
        context.flush()
        let end = NIODeadline.now() + limit
        let check = min(quiet, .milliseconds(250))
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: check, delay: check) { _ in
            let (handler, context) = bound.value
            let now = NIODeadline.now()
            if now - handler.lastRead >= handler.quiet || now >= end {
                handler.timer?.cancel()
                context.close(promise: nil)
            }
        }
    }
}
