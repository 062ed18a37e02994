import Crypto
import FolioACME
import FolioSupport
import FolioTestSupport
import Foundation
import Logging
import SwiftASN1
import X509

/// Certificates and state directories made up for the tests.
enum Fixtures {
    static let domains = ["edge.folio.test", "www.folio.test"]

    /// A logger that drops everything (the default one would print to the test's output).
    static let quietLogger = Logger(label: "folio.acme.test") { _ in SwiftLogNoOpLogHandler() }

    /// A self-signed certificate for `domains` and its key, as PEM, valid from `notBefore` for
    /// `lifetime` seconds.
    static func selfSigned(
        _ domains: [String] = domains, notBefore: Date = Date() - 3600, lifetime: Double = 90 * 86400
    ) throws -> (chain: String, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(domains[0]) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: notBefore,
            notValidAfter: notBefore + lifetime, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { SubjectAlternativeNames(domains.map { .dnsName($0) }) }, issuerPrivateKey: .init(key))
        return (try certificate.serializeAsPEM().pemString + "\n", key)
    }

    /// A state directory as a previous run would have left it: an account registered at
    /// `directoryURL` and a certificate for the domains.
    static func existingState(at dir: String, directoryURL: String, accountURL: String) throws {
        try FileIO.makeDirectory(dir)
        let (chain, key) = try selfSigned()
        try write(ACMEAccountKey().pem, dir + "/account.key", mode: 0o600)
        try write(#"{"account": "\#(accountURL)", "directory": "\#(directoryURL)"}"# + "\n", dir + "/account.json", mode: 0o644)
        try write(chain, dir + "/certificate.pem", mode: 0o644)
        try write(key.pemRepresentation, dir + "/certificate.key", mode: 0o600)
    }

    static func write(_ text: String, _ path: String, mode: mode_t) throws {
        try FileIO.writeAtomically(Array(text.utf8), to: path)
        chmod(path, mode)
    }

    /// The certificates of a PEM chain, leaf first.
    static func certificates(_ pem: [UInt8]) throws -> [Certificate] {
        try PEMDocument.parseMultiple(pemString: String(decoding: pem, as: UTF8.self)).map { try Certificate(derEncoded: $0.derBytes) }
    }

    /// The DNS names in a certificate's subjectAltName.
    static func dnsNames(_ certificate: Certificate) throws -> [String] {
        Array(try certificate.extensions.subjectAlternativeNames ?? SubjectAlternativeNames()).compactMap {
            if case .dnsName(let name) = $0 { return name }
            return nil
        }
    }

    /// Polls `condition` every 10 ms for up to `timeout` seconds.
    static func eventually(timeout: Double, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
