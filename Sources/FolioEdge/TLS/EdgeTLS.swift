import FolioACME
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The edge's TLS: versions 1.2 and 1.3 only, forward-secret suites only (those App Transport
/// Security accepts, and ChaCha20 for clients without AES hardware), the certificate chosen per
/// handshake by SNI from a ``CertificateStore``.
package enum EdgeTLS {
    /// TLS 1.2 suites, strongest first: ECDHE only (forward secrecy), AEAD only. TLS 1.3's
    /// suites are all forward-secret and not configurable.
    static let cipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// The server context: it starts with the first pair, and each handshake takes the pair the
    /// store selects for the name the client asked for. ALPN offers `h2` (unless `http2` is
    /// false) and `http/1.1`; a client that asks for neither gets HTTP/1.1.
    package static func serverContext(_ store: CertificateStore, http2: Bool = true) throws -> NIOSSLContext {
        let first = store.select(nil)
        var config = TLSConfiguration.makeServerConfiguration(
            certificateChain: first.chain.map { .certificate($0) }, privateKey: .privateKey(first.key))
        config.minimumTLSVersion = .tlsv12
        config.maximumTLSVersion = .tlsv13
        config.cipherSuites = cipherSuites
        config.applicationProtocols = http2 ? ["h2", "http/1.1"] : ["http/1.1"]
        config.sslContextCallback = { values, promise in
            let pair = store.select(values.serverHostname)
            var change = NIOSSLContextConfigurationOverride()
            change.certificateChain = pair.chain.map { .certificate($0) }
            change.privateKey = .privateKey(pair.key)
            promise.succeed(change)
        }
        return try NIOSSLContext(configuration: config)
    }

    /// The context of one TLS-ALPN-01 validation handshake (RFC 8737 §3): the challenge's
    /// self-signed certificate, and `acme-tls/1` as the only protocol.
    static func challengeContext(_ challenge: ACMEChallengeCertificate) throws -> NIOSSLContext {
        var config = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: challenge.certificateDER, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(challenge.privateKeyPEM.utf8), format: .pem)))
        config.minimumTLSVersion = .tlsv12
        config.applicationProtocols = [ACMEChallengeResponder.tlsALPNProtocol]
        return try NIOSSLContext(configuration: config)
    }
}

/// The plain listener beside an https one (`--http-port`): an ACME HTTP-01 challenge gets its
/// key authorization; every other request is sent to the same URL on https with a 308, which
/// keeps the method.
final class RedirectToHTTPS: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let httpsPort: Int
    let acme: ACMEChallengeResponder?
    private var head: HTTPRequestHead?

    init(httpsPort: Int, acme: ACMEChallengeResponder? = nil) {
        self.httpsPort = httpsPort
        self.acme = acme
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h): head = h
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(context, head)
        }
    }

    private func respond(_ context: ChannelHandlerContext, _ request: HTTPRequestHead) {
        var headers = HTTPHeaders()
        if let answer = acme?.http01Answer(path: request.uri) {
            return write(context, request, status: .ok, headers: headers, body: answer, contentType: "application/octet-stream")
        }
        if let host = Self.hostName(request.headers.first(name: "host")), request.uri.hasPrefix("/") {
            let port = httpsPort == 443 ? "" : ":\(httpsPort)"
            headers.add(name: "Location", value: "https://\(host)\(port)\(request.uri)")
        }
        let status: HTTPResponseStatus = headers.contains(name: "Location") ? .permanentRedirect : .badRequest
        write(context, request, status: status, headers: headers, body: "Use https.\n", contentType: "text/plain; charset=utf-8")
    }

    private func write(
        _ context: ChannelHandlerContext, _ request: HTTPRequestHead, status: HTTPResponseStatus, headers: HTTPHeaders, body: String,
        contentType: String
    ) {
        var headers = headers
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    /// The host of a Host header without its port, when it is a plain name or address (letters,
    /// digits, `-`, `.`, or a bracketed IPv6 address); nil otherwise.
    static func hostName(_ header: String?) -> String? {
        guard var host = header?.lowercased(), !host.isEmpty, host.count <= 253 else { return nil }
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let inner = host[host.index(after: host.startIndex)..<close]
            guard !inner.isEmpty, inner.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            return "[\(inner)]"
        }
        if let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }) else { return nil }
        return host
    }
}
