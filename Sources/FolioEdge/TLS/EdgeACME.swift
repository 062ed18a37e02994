import Crypto
import FolioACME
import Foundation
import Logging
import NIOSSL
import ServiceLifecycle
import SwiftASN1
import X509

/// `--acme`: keeps the ACME certificate in the state directory current (`ACMEManager`) and
/// serves each one issued from the next handshake on, without dropping a connection. HTTP-01
/// challenges are answered on the plain `--http-port` listener (`RedirectToHTTPS`).
struct ACMEService: Service {
    let manager: ACMEManager
    let certificates: CertificateStore
    let logger: Logger

    func run() async throws {
        let (certificates, logger) = (self.certificates, self.logger)
        try await cancelWhenGracefulShutdown {
            try await manager.run { issued in
                do {
                    certificates.installACME(try CertificatePair.load(certificate: issued.chainPath, key: issued.keyPath))
                    logger.info(
                        "serving the ACME certificate",
                        metadata: [
                            "names": "\(issued.domains.joined(separator: ","))", "serial": "\(issued.serialNumber)",
                            "valid_until": "\(ISO8601DateFormatter().string(from: issued.notAfter))",
                        ])
                } catch {
                    logger.error("kept the previous certificate: the issued one cannot be served: \(error)")
                }
            }
        }
    }

    /// The manager, and the pair to serve until it delivers: the certificate stored by an earlier
    /// run, or a temporary self-signed one for the names (the first start, for a few seconds).
    static func prepare(_ configuration: ACMEConfiguration, logger: Logger) async throws -> (ACMEManager, CertificatePair) {
        let manager: ACMEManager
        do { manager = try ACMEManager(configuration: configuration, logger: logger) } catch {
            throw EdgeStartupError("--acme: \(error)")
        }
        if let stored = await manager.loadCertificate(), let pair = try? CertificatePair.load(certificate: stored.chainPath, key: stored.keyPath) {
            return (manager, pair)
        }
        do { return (manager, try CertificatePair.temporary(manager.configuration.domains)) } catch {
            throw EdgeStartupError("--acme: cannot make the temporary certificate: \(error)")
        }
    }
}

extension CertificatePair {
    /// A self-signed P-256 certificate for `names`, valid for a day.
    static func temporary(_ names: [String]) throws -> CertificatePair {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        let name = try DistinguishedName { CommonName(names.first ?? "localhost") }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey), notValidBefore: now - 60,
            notValidAfter: now + 86400, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { SubjectAlternativeNames(names.map { .dnsName($0) }) },
            issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return CertificatePair(
            certificatePath: "(temporary self-signed)", keyPath: "(in memory)",
            chain: [try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)],
            key: try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem), names: names, notValidAfter: now + 86400)
    }
}
