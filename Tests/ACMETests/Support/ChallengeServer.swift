import FolioACME
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A test server on an ephemeral loopback port, counting the challenge answers it gave.
final class LoopbackServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let tally: Tally

    /// How many challenges got an answer.
    var answers: Int { tally.count.withLock { $0 } }

    /// Binds `bootstrap` on 127.0.0.1, port 0; its handlers count into `tally`.
    init(_ bootstrap: ServerBootstrap, tally: Tally) async throws {
        channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else { throw LoopbackServerError() }
        self.port = port
        self.tally = tally
    }

    func stop() async { try? await channel.close() }

    struct LoopbackServerError: Error {}
}

/// The edge's part in HTTP-01, as the test plays it: a plain HTTP server on an ephemeral
/// loopback port answering `GET /.well-known/acme-challenge/TOKEN` from the responder (404
/// otherwise), counting the answers it gave.
enum ChallengeServer {
    static func start(responder: ACMEChallengeResponder) async throws -> LoopbackServer {
        let tally = Tally()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(responder: responder, tally: tally))
                }
            }
        return try await LoopbackServer(bootstrap, tally: tally)
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let responder: ACMEChallengeResponder
        let tally: Tally

        init(responder: ACMEChallengeResponder, tally: Tally) {
            self.responder = responder
            self.tally = tally
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            let answer = head.method == .GET ? responder.http01Answer(path: head.uri) : nil
            if answer != nil { tally.count.withLock { $0 += 1 } }
            let body = ByteBuffer(string: answer ?? "not found\n")
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: answer == nil ? "text/plain" : "application/octet-stream")
            headers.add(name: "Content-Length", value: String(body.readableBytes))
            let status: HTTPResponseStatus = answer == nil ? .notFound : .ok
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

/// The edge's part in TLS-ALPN-01, as the test plays it: a TLS server on an ephemeral loopback
/// port that speaks only ALPN `acme-tls/1` and, for an SNI name the responder holds a challenge
/// certificate for, presents that certificate (any other name gets a placeholder).
enum ALPNChallengeServer {
    static func start(responder: ACMEChallengeResponder) async throws -> LoopbackServer {
        let tally = Tally()
        let placeholder = try TLSALPNChallenge.certificate(domain: "placeholder.test", keyAuthorization: "none")
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: placeholder.certificateDER, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(placeholder.privateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = [ACMEChallengeResponder.tlsALPNProtocol]
        tls.sslContextCallback = { values, promise in
            guard let name = values.serverHostname, let answer = responder.tlsALPNCertificate(for: name) else {
                return promise.succeed(.noChanges)
            }
            promise.completeWith(
                Result {
                    var override = NIOSSLContextConfigurationOverride()
                    override.certificateChain = [.certificate(try NIOSSLCertificate(bytes: answer.certificateDER, format: .der))]
                    override.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(answer.privateKeyPEM.utf8), format: .pem))
                    tally.count.withLock { $0 += 1 }
                    return override
                })
        }
        let context = try NIOSSLContext(configuration: tls)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context)) }
            }
        return try await LoopbackServer(bootstrap, tally: tally)
    }
}

/// A count shared with a server's handlers.
final class Tally: Sendable {
    let count = Mutex(0)
}
