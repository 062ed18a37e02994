import NIOCore
import NIOTLS

/// Closes a TLS connection whose handshake has not completed within the request timeout, so a
/// client that connects and sends nothing (or half a ClientHello) holds a connection slot no
/// longer than one that stalls in the middle of a request. After `NIOSSLServerHandler`; the
/// clock starts when it is added (as the connection is set up) and stops at
/// `TLSUserEvent.handshakeCompleted`, when it leaves the pipeline.
final class TLSHandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var deadline: CloseDeadline

    init(timeout: TimeAmount) { deadline = CloseDeadline(timeout) }

    func handlerAdded(context: ChannelHandlerContext) { deadline.start(context) }

    func handlerRemoved(context: ChannelHandlerContext) { deadline.cancel() }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            deadline.cancel()
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Closes a handler's channel when `timeout` passes after `start`, unless cancelled first.
struct CloseDeadline {
    let timeout: TimeAmount
    private var task: Scheduled<Void>?

    init(_ timeout: TimeAmount) { self.timeout = timeout }

    mutating func start(_ context: ChannelHandlerContext) {
        let channel = context.channel
        task = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    mutating func cancel() {
        task?.cancel()
        task = nil
    }
}
