import Crypto
import Foundation
import SwiftASN1
import X509

/// TLS-ALPN-01 challenge certificates (RFC 8737 §3): self-signed, for the one domain, with the
/// critical acmeIdentifier extension holding the SHA-256 digest of the key authorization.
package enum TLSALPNChallenge {
    /// id-pe-acmeIdentifier, 1.3.6.1.5.5.7.1.31.
    package static let acmeIdentifierOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 1, 31]

    /// The extension's value: `Authorization ::= OCTET STRING (SIZE (32))`, DER.
    package static func extensionValue(keyAuthorization: String) -> [UInt8] {
        let digest = Array(SHA256.hash(data: Array(keyAuthorization.utf8)))
        var serializer = DER.Serializer()
        try! serializer.serialize(ASN1OctetString(contentBytes: digest[...]))  // 32 bytes cannot fail
        return serializer.serializedBytes
    }

    /// A fresh P-256 key and a certificate for `domain` valid from a day ago for a week.
    package static func certificate(domain: String, keyAuthorization: String, now: Date = Date()) throws -> ACMEChallengeCertificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(domain) }
        let extensions = try Certificate.Extensions {
            SubjectAlternativeNames([.dnsName(domain)])
            Certificate.Extension(oid: acmeIdentifierOID, critical: true, value: extensionValue(keyAuthorization: keyAuthorization)[...])
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-86400), notValidAfter: now.addingTimeInterval(7 * 86400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return ACMEChallengeCertificate(
            certificateDER: serializer.serializedBytes, certificatePEM: try certificate.serializeAsPEM().pemString,
            privateKeyPEM: key.pemRepresentation)
    }
}
