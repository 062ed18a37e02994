import Crypto
import Foundation

/// The account's P-256 key: its public JWK, its RFC 7638 thumbprint, and key authorizations.
package struct ACMEAccountKey: Sendable {
    package let privateKey: P256.Signing.PrivateKey

    package init(_ privateKey: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) {
        self.privateKey = privateKey
    }

    /// A key from its PEM (PKCS #8 or SEC 1).
    package init(pem: String) throws {
        privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
    }

    /// The private key as PKCS #8 PEM.
    package var pem: String { privateKey.pemRepresentation }

    /// The public key as a JWK (RFC 7518 §6.2): just the members RFC 7638 requires.
    package var jwk: JWK {
        let point = privateKey.publicKey.rawRepresentation  // X ‖ Y, 32 bytes each
        return JWK(crv: "P-256", kty: "EC", x: Base64URL.encode(point.prefix(32)), y: Base64URL.encode(point.suffix(32)))
    }

    /// The SHA-256 JWK thumbprint (RFC 7638), base64url.
    package var thumbprint: String { JWK.thumbprint(of: jwk.members) }

    /// `token.thumbprint`, the answer to a challenge (RFC 8555 §8.1).
    package func keyAuthorization(token: String) -> String { token + "." + thumbprint }
}

/// An EC public JSON Web Key, and RFC 7638 thumbprints.
package struct JWK: Codable, Sendable, Equatable {
    package var crv: String
    package var kty: String
    package var x: String
    package var y: String

    /// The required members by name.
    package var members: [String: String] { ["crv": crv, "kty": kty, "x": x, "y": y] }

    /// RFC 7638 §3: the required members in lexicographic order, without whitespace, hashed
    /// with SHA-256, base64url.
    package static func thumbprint(of members: [String: String]) -> String {
        Base64URL.encode(SHA256.hash(data: Array(canonicalJSON(members).utf8)))
    }

    /// `{"a":"…","b":"…"}`: members sorted by name (their UTF-16 code units, RFC 7638 §3.3),
    /// strings escaped as JSON requires.
    package static func canonicalJSON(_ members: [String: String]) -> String {
        let sorted = members.sorted { Array($0.key.utf16).lexicographicallyPrecedes($1.key.utf16) }
        return "{" + sorted.map { quoted($0.key) + ":" + quoted($0.value) }.joined(separator: ",") + "}"
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
