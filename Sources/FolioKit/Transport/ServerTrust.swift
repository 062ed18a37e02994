#if canImport(Security)
import Foundation
import Security

/// The edge's certificate chain checked against the system's authorities and the app's own
/// (`FolioHTTPConfiguration.certificateAuthorities`, DER): what a URLSession delegate answers
/// a server-trust challenge with.
enum ServerTrust {
    /// Whether `trust` evaluates with `anchors` added to the system's.
    static func evaluate(_ trust: SecTrust, anchors: [[UInt8]]) -> Bool {
        let certificates = anchors.compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
        guard SecTrustSetAnchorCertificates(trust, certificates as CFArray) == errSecSuccess,
            SecTrustSetAnchorCertificatesOnly(trust, false) == errSecSuccess
        else { return false }
        var error: CFError?
        return SecTrustEvaluateWithError(trust, &error)
    }
}
#endif
