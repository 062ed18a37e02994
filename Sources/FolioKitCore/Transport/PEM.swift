import Foundation

/// Certificates in PEM text (RFC 7468): the DER bytes of each `CERTIFICATE` block.
package enum PEM {
    private static let begin = "-----BEGIN CERTIFICATE-----"
    private static let end = "-----END CERTIFICATE-----"

    /// Every certificate block of `text` that decodes to a DER SEQUENCE; empty when none does.
    package static func certificates(_ text: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var rest = Substring(text)
        while let start = rest.range(of: begin), let stop = rest[start.upperBound...].range(of: end) {
            let body = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            if let der = Data(base64Encoded: String(body)), der.first == 0x30 { out.append(Array(der)) }
            rest = rest[stop.upperBound...]
        }
        return out
    }
}
