import Synchronization

/// The answers to the challenges in flight, for the servers that publish them: the edge's
/// plain HTTP listener asks `http01Answer(token:)` for `GET /.well-known/acme-challenge/TOKEN`,
/// and its TLS listener asks `tlsALPNCertificate(for:)` when a client offers ALPN `acme-tls/1`.
/// An answer is published before the ACME server is told the challenge is ready, and withdrawn
/// once its authorization is settled.
package final class ACMEChallengeResponder: Sendable {
    /// The path prefix of HTTP-01 requests (RFC 8555 §8.3).
    package static let http01PathPrefix = "/.well-known/acme-challenge/"
    /// The ALPN protocol of TLS-ALPN-01 validation handshakes (RFC 8737 §6.2).
    package static let tlsALPNProtocol = "acme-tls/1"

    private struct Answers {
        var http01: [String: String] = [:]
        var tlsALPN01: [String: ACMEChallengeCertificate] = [:]
    }

    private let answers = Mutex(Answers())

    package init() {}

    /// The key authorization to send (as `application/octet-stream`) for HTTP-01 `token`.
    package func http01Answer(token: String) -> String? {
        answers.withLock { $0.http01[token] }
    }

    /// The key authorization for a request path `/.well-known/acme-challenge/TOKEN` (query
    /// ignored); nil for any other path or an unknown token.
    package func http01Answer(path: String) -> String? {
        guard path.hasPrefix(Self.http01PathPrefix) else { return nil }
        let token = path.dropFirst(Self.http01PathPrefix.count).prefix { $0 != "?" }
        return http01Answer(token: String(token))
    }

    /// The self-signed certificate to present for `domain` (the SNI name, any case) on an
    /// `acme-tls/1` handshake.
    package func tlsALPNCertificate(for domain: String) -> ACMEChallengeCertificate? {
        let name = domain.lowercased()
        return answers.withLock { $0.tlsALPN01[name.hasSuffix(".") ? String(name.dropLast()) : name] }
    }

    /// Whether any answer is published (the edge may skip work otherwise).
    package var isEmpty: Bool {
        answers.withLock { $0.http01.isEmpty && $0.tlsALPN01.isEmpty }
    }

    func publish(_ answer: ACMEChallengeAnswer) {
        answers.withLock {
            switch answer {
            case .http01(let token, let keyAuthorization): $0.http01[token] = keyAuthorization
            case .tlsALPN01(let domain, let certificate): $0.tlsALPN01[domain] = certificate
            }
        }
    }

    func withdraw(_ answer: ACMEChallengeAnswer) {
        answers.withLock {
            switch answer {
            case .http01(let token, _): $0.http01[token] = nil
            case .tlsALPN01(let domain, _): $0.tlsALPN01[domain] = nil
            }
        }
    }
}

/// A TLS-ALPN-01 challenge certificate and its key.
package struct ACMEChallengeCertificate: Sendable, Equatable {
    package var certificateDER: [UInt8]
    package var certificatePEM: String
    /// The key as PKCS #8 PEM.
    package var privateKeyPEM: String
}
