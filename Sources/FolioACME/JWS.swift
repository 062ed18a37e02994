import Crypto
import Foundation

/// JSON Web Signatures as ACME requests carry them (RFC 8555 §6.2): flattened JSON
/// serialization, ES256, the account's `jwk` before it has a URL and its `kid` after, and the
/// nonce and URL in the protected header.
package enum JWS {
    /// How the protected header names the key.
    package enum KeyID: Sendable, Equatable {
        /// The public key itself (newAccount, and revocation by certificate key).
        case jwk
        /// The account URL.
        case kid(String)
    }

    struct ProtectedHeader: Encodable {
        var alg = "ES256"
        var jwk: JWK?
        var kid: String?
        var nonce: String
        var url: String
    }

    struct Body: Codable {
        var protected: String
        var payload: String
        var signature: String
    }

    /// The request body for `url`: `payload` (nil for POST-as-GET, whose payload is empty)
    /// signed with `key`.
    package static func sign(payload: [UInt8]?, url: String, nonce: String, key: ACMEAccountKey, keyID: KeyID) throws -> [UInt8] {
        var header = ProtectedHeader(nonce: nonce, url: url)
        switch keyID {
        case .jwk: header.jwk = key.jwk
        case .kid(let account): header.kid = account
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let protected = Base64URL.encode(try encoder.encode(header))
        let payloadText = payload.map { Base64URL.encode($0) } ?? ""
        let signingInput = Array((protected + "." + payloadText).utf8)
        let signature = try key.privateKey.signature(for: signingInput)
        let body = Body(protected: protected, payload: payloadText, signature: Base64URL.encode(signature.rawRepresentation))
        return Array(try encoder.encode(body))
    }
}
