import FolioACME
import FolioHTTPCore
import NIOCore
import NIOSSL
import NIOTLS

/// First on an https connection while the edge runs ACME: reads the ClientHello (SNI and ALPN)
/// before any TLS handler sees it. An ACME server validating a TLS-ALPN-01 challenge (RFC 8737)
/// offers only `acme-tls/1` with the domain as SNI; when a challenge certificate is published for
/// that domain, the connection presents it and ends after the handshake. Every other connection
/// gets the listener's usual handlers. Either way the bytes read so far are passed on as they came.
final class ACMEALPNSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let responder: ACMEChallengeResponder
    /// Adds the listener's usual handlers after this one.
    private let configure: (ChannelPipeline.SynchronousOperations) throws -> Void
    private var buffered: ByteBuffer?
    /// A client that does not finish its ClientHello within the timeout is disconnected.
    private var deadline: CloseDeadline

    init(responder: ACMEChallengeResponder, timeout: TimeAmount, configure: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void) {
        self.responder = responder
        deadline = CloseDeadline(timeout)
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) { deadline.start(context) }

    func handlerRemoved(context: ChannelHandlerContext) { deadline.cancel() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if buffered == nil { buffered = bytes } else { buffered!.writeBuffer(&bytes) }
        let parsed = buffered!.withUnsafeReadableBytes { TLSClientHello.parse($0) }
        if parsed == .incomplete, buffered!.readableBytes <= TLSClientHello.maxLength + 5 * 16 { return }
        do {
            let sync = context.pipeline.syncOperations
            if case .hello(let hello) = parsed, let certificate = challenge(hello) {
                try sync.addHandler(NIOSSLServerHandler(context: try EdgeTLS.challengeContext(certificate)), position: .after(self))
                try sync.addHandler(CloseAfterHandshake(), position: .last)
            } else {
                try configure(sync)
            }
        } catch {
            context.close(promise: nil)
            return
        }
        let bytesRead = buffered!
        buffered = nil
        context.fireChannelRead(wrapInboundOut(bytesRead))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// The challenge certificate for a validation handshake: `acme-tls/1` is the only protocol
    /// offered and the SNI names a domain with a published challenge.
    private func challenge(_ hello: TLSClientHello) -> ACMEChallengeCertificate? {
        guard hello.alpn == [ACMEChallengeResponder.tlsALPNProtocol], let name = hello.serverName else { return nil }
        return responder.tlsALPNCertificate(for: name)
    }
}

/// Ends a TLS-ALPN-01 validation connection once its handshake is done: nothing is served on it.
final class CloseAfterHandshake: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event { context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
