import Crypto
import SwiftASN1
import X509

/// The certificate signing request sent to finalize an order (RFC 8555 §7.4): the first
/// domain as common name, every domain as a subjectAltName, signed by the certificate key.
enum ACMECSR {
    static func der(domains: [String], key: P256.Signing.PrivateKey) throws -> [UInt8] {
        let extensions = try Certificate.Extensions {
            SubjectAlternativeNames(domains.map { .dnsName($0) })
        }
        let csr = try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName(domains[0]) }, privateKey: .init(key),
            attributes: CertificateSigningRequest.Attributes([try .init(ExtensionRequest(extensions: extensions))]),
            signatureAlgorithm: .ecdsaWithSHA256)
        var serializer = DER.Serializer()
        try serializer.serialize(csr)
        return serializer.serializedBytes
    }
}
