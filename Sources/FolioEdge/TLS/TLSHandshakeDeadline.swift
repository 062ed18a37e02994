import NIOCore
import NIOTLS

/// Closes a TLS connection whose handshake has not completed within the request timeout, so a
/// client that connects and sends nothing (or half a ClientHello) holds a connection slot no
/// longer than one that stalls in the middle of a request. After `NIOSSLServerHandler`; the
/// clock starts when it is added (as the connection is set up) and stops at
/// `TLSUserEvent.handshakeCompleted`, when it leaves the pipeline.
final class TLSHandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            deadline?.cancel()
            deadline = nil
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
