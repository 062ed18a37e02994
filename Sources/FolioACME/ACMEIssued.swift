import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate the client obtained or found in its state directory: the PEM chain and key,
/// where they are on disk, and what the leaf certifies for how long.
package struct ACMEIssued: Sendable {
    /// The chain, leaf first, as PEM.
    package var chainPEM: [UInt8]
    /// The certificate's private key, PKCS #8 PEM.
    package var keyPEM: [UInt8]
    /// The files holding them (`certificate.pem`, `certificate.key` in the state directory).
    package var chainPath: String
    package var keyPath: String
    package var notBefore: Date
    package var notAfter: Date
    /// The leaf's DNS subjectAltNames.
    package var domains: [String]
    /// The leaf's serial number, in hex.
    package var serialNumber: String

    /// The moment to renew: `fraction` of the way from notBefore to notAfter.
    package func renewalDate(fraction: Double) -> Date {
        ACMERenewal.date(notBefore: notBefore, notAfter: notAfter, fraction: fraction)
    }

    /// Whether the leaf names every one of `names`.
    package func covers(_ names: [String]) -> Bool { Set(names).isSubset(of: Set(domains)) }
}

/// The renewal arithmetic.
package enum ACMERenewal {
    /// `notBefore + fraction × (notAfter − notBefore)`.
    package static func date(notBefore: Date, notAfter: Date, fraction: Double) -> Date {
        notBefore.addingTimeInterval(fraction * notAfter.timeIntervalSince(notBefore))
    }
}

/// Checks a chain before it is trusted with anything: it parses, its leaf holds the
/// certificate key's public key, names the domains, and is valid now.
enum ACMEChainCheck {
    struct Leaf {
        var notBefore: Date
        var notAfter: Date
        var domains: [String]
        var serialNumber: String
    }

    static func check(chainPEM: [UInt8], key: P256.Signing.PrivateKey, domains: [String]?, now: Date) throws(ACMEError) -> Leaf {
        let certificates: [Certificate]
        do {
            let documents = try PEMDocument.parseMultiple(pemString: String(decoding: chainPEM, as: UTF8.self))
            certificates = try documents.filter { $0.discriminator == "CERTIFICATE" }.map { try Certificate(derEncoded: $0.derBytes) }
        } catch {
            throw ACMEError(step: "certificate", "the chain is not PEM certificates (\(error))")
        }
        guard let leaf = certificates.first else { throw ACMEError(step: "certificate", "the chain holds no certificate") }
        guard leaf.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw ACMEError(step: "certificate", "the certificate is not for the certificate key")
        }
        let names = (try? leaf.extensions.subjectAlternativeNames)?.compactMap { name -> String? in
            if case .dnsName(let dns) = name { return dns.lowercased() }
            return nil
        } ?? []
        if let domains, !Set(domains).isSubset(of: Set(names)) {
            throw ACMEError(step: "certificate", "the certificate names \(names.joined(separator: ", ")), not \(domains.joined(separator: ", "))")
        }
        guard leaf.notValidAfter > now, leaf.notValidBefore < leaf.notValidAfter else {
            throw ACMEError(step: "certificate", "the certificate expired at \(leaf.notValidAfter)")
        }
        let serial = leaf.serialNumber.bytes.map { String(format: "%02x", $0) }.joined()
        return Leaf(notBefore: leaf.notValidBefore, notAfter: leaf.notValidAfter, domains: names, serialNumber: serial)
    }
}
