import Foundation

/// How the client answers authorizations: the challenge types it prefers, and how it polls.
struct ACMEChallengePlan: Sendable {
    var types: [ACMEChallengeType]
    var pollInterval: Double
    var pollTimeout: Double

    /// The most preferred challenge the authorization offers that can still be answered.
    func choose(_ authorization: ACMEAuthorization) throws(ACMEError) -> ACMEChallenge {
        for type in types {
            let candidate = authorization.challenges.first { $0.type == type.rawValue && ($0.status == "pending" || $0.status == "processing") }
            if let candidate { return candidate }
        }
        let offered = authorization.challenges.map(\.type).joined(separator: ", ")
        let answered = types.map(\.rawValue).joined(separator: ", ")
        throw ACMEError(
            step: "authorization", "\(authorization.identifier.value) offers no challenge this client answers (offered: \(offered); answered: \(answered))")
    }

    /// The answer to `challenge` for `domain`: a key authorization to serve over HTTP, or a
    /// TLS-ALPN-01 certificate.
    func answer(_ challenge: ACMEChallenge, for domain: String, key: ACMEAccountKey) throws -> ACMEChallengeAnswer {
        guard let token = challenge.token, !token.isEmpty, Base64URL.decode(token) != nil else {
            throw ACMEError(step: "authorization", "the \(challenge.type) challenge for \(domain) has no valid token")
        }
        let keyAuthorization = key.keyAuthorization(token: token)
        switch challenge.type {
        case ACMEChallengeType.http01.rawValue:
            return .http01(token: token, keyAuthorization: keyAuthorization)
        default:
            return .tlsALPN01(domain: domain, certificate: try TLSALPNChallenge.certificate(domain: domain, keyAuthorization: keyAuthorization))
        }
    }
}

/// One published answer to a challenge.
enum ACMEChallengeAnswer: Sendable {
    case http01(token: String, keyAuthorization: String)
    case tlsALPN01(domain: String, certificate: ACMEChallengeCertificate)

    var type: ACMEChallengeType {
        switch self {
        case .http01: .http01
        case .tlsALPN01: .tlsALPN01
        }
    }
}
