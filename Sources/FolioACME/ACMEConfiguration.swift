import Foundation

/// What the ACME client needs: the certificate authority's directory, the names to certify, the
/// account's contact, extra trust roots for the directory's own TLS, where the state lives, and
/// when to renew and retry.
package struct ACMEConfiguration: Sendable {
    /// Let's Encrypt's production directory, the default.
    package static let letsEncryptProduction = "https://acme-v02.api.letsencrypt.org/directory"

    package var directoryURL: String
    /// The DNS names of the certificate (the first is its common name); lowercased by `validated()`.
    package var domains: [String]
    /// The account's contact address (`mailto:` is added); nil registers without one.
    package var contactEmail: String?
    /// A PEM file of certificate authorities trusted besides the system's, for the directory's
    /// own TLS (a test CA such as pebble's).
    package var extraTrustRootsPath: String?
    /// The state directory: account key and URL, certificate chain and key.
    package var stateDirectory: String
    /// Renew once this fraction of a certificate's lifetime has passed.
    package var renewalFraction: Double = 2.0 / 3.0
    /// The delays between failed attempts.
    package var backoff = ACMEBackoff(minimum: 60, maximum: 6 * 3600)
    /// Challenge types in order of preference.
    package var challengeTypes: [ACMEChallengeType] = [.http01, .tlsALPN01]
    /// The first delay between polls of a pending authorization or order, in seconds (a
    /// `Retry-After` from the server takes its place); later polls wait longer, up to 10 s.
    package var pollInterval: Double = 1
    /// How long one authorization or order may stay pending before the attempt fails, in seconds.
    package var pollTimeout: Double = 120
    /// The limit for one HTTP request to the directory, in seconds.
    package var requestTimeout: Double = 30

    package init(
        directoryURL: String = letsEncryptProduction, domains: [String], contactEmail: String? = nil,
        extraTrustRootsPath: String? = nil, stateDirectory: String
    ) {
        self.directoryURL = directoryURL
        self.domains = domains
        self.contactEmail = contactEmail
        self.extraTrustRootsPath = extraTrustRootsPath
        self.stateDirectory = stateDirectory
    }

    /// This configuration with the domains lowercased and without a trailing dot, or an error
    /// naming what is wrong.
    package func validated() throws(ACMEError) -> ACMEConfiguration {
        var copy = self
        copy.domains = domains.map { name in
            let lower = name.lowercased()
            return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
        }
        if let email = contactEmail, email.lowercased().hasPrefix("mailto:") { copy.contactEmail = String(email.dropFirst(7)) }
        guard !copy.domains.isEmpty else { throw ACMEError(step: "configuration", "no domain to certify") }
        for name in copy.domains { try Self.check(domain: name) }
        guard Set(copy.domains).count == copy.domains.count else {
            throw ACMEError(step: "configuration", "a domain is listed twice")
        }
        guard URL(string: directoryURL)?.host != nil else {
            throw ACMEError(step: "configuration", "directory URL \(directoryURL) is not an absolute URL")
        }
        if let contactEmail = copy.contactEmail, contactEmail.isEmpty || contactEmail.contains(where: { $0 == "," || $0.isWhitespace }) {
            throw ACMEError(step: "configuration", "contact email \(contactEmail) is not one address")
        }
        guard renewalFraction > 0, renewalFraction < 1 else {
            throw ACMEError(step: "configuration", "renewal fraction \(renewalFraction) is not between 0 and 1")
        }
        guard challengeTypes.contains(.http01) || challengeTypes.contains(.tlsALPN01) else {
            throw ACMEError(step: "configuration", "no challenge type to answer")
        }
        return copy
    }

    /// A DNS name the client can prove with HTTP-01 or TLS-ALPN-01: letters, digits, hyphens
    /// and dots, no wildcard (that needs DNS-01), not an IP address.
    static func check(domain: String) throws(ACMEError) {
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        let wellFormed =
            domain.utf8.count <= 253 && labels.count >= 2
            && labels.allSatisfy { !$0.isEmpty && $0.count <= 63 && $0.allSatisfy(allowed.contains) && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
        guard wellFormed else {
            let why = domain.hasPrefix("*.") ? "wildcards need DNS-01, which this client does not do" : "not a DNS name"
            throw ACMEError(step: "configuration", "domain \(domain): \(why)")
        }
        guard !(labels.last!.allSatisfy(\.isNumber)) else {
            throw ACMEError(step: "configuration", "domain \(domain): an IP address, not a DNS name")
        }
    }
}

/// The challenge types the client answers.
package enum ACMEChallengeType: String, Sendable, CaseIterable {
    /// A file at `http://DOMAIN/.well-known/acme-challenge/TOKEN` (RFC 8555 §8.3).
    case http01 = "http-01"
    /// A certificate served to the `acme-tls/1` ALPN protocol on port 443 (RFC 8737).
    case tlsALPN01 = "tls-alpn-01"
}

/// Exponential backoff with jitter between a minimum and a maximum delay, in seconds.
package struct ACMEBackoff: Sendable, Equatable {
    package var minimum: Double
    package var maximum: Double

    package init(minimum: Double, maximum: Double) {
        self.minimum = max(0, minimum)
        self.maximum = max(self.minimum, maximum)
    }

    /// The delay before retry `attempt` (1 after the first failure): `minimum × 2^(attempt−1)`
    /// capped at `maximum`, less a random part of up to half of it (`jitter` in 0..<1), never
    /// below `minimum`.
    package func delay(attempt: Int, jitter: Double) -> Double {
        let doublings = Double(min(max(attempt - 1, 0), 60))
        let base = min(maximum, minimum * pow(2, doublings))
        let spread = min(max(jitter, 0), 1) * base / 2
        return min(maximum, max(minimum, base - spread))
    }
}
