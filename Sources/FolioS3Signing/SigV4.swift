import Crypto
import FolioSupport
import Foundation

/// The access key, secret and optional session token a request is signed with.
package struct AWSCredentials: Sendable, Equatable {
    package var accessKeyID: String
    package var secretAccessKey: String
    package var sessionToken: String?

    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// Printed (in a log line, a configuration dump) without the secret or the session token.
extension AWSCredentials: CustomStringConvertible, CustomDebugStringConvertible {
    package var description: String {
        "AWSCredentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>\(sessionToken == nil ? "" : ", sessionToken: <redacted>"))"
    }

    package var debugDescription: String { description }
}

/// One request to sign: method, the path as sent (already percent-encoded), query parameters
/// (not encoded), headers, and the payload's SHA-256 hex (or `UNSIGNED-PAYLOAD`).
package struct SignableRequest: Sendable {
    package var method: String
    package var encodedPath: String
    package var query: [(String, String)]
    package var headers: [(String, String)]
    package var payloadHash: String

    package init(method: String, encodedPath: String, query: [(String, String)] = [], headers: [(String, String)], payloadHash: String) {
        self.method = method
        self.encodedPath = encodedPath
        self.query = query
        self.headers = headers
        self.payloadHash = payloadHash
    }
}

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) in the `Authorization` header, as S3 takes it:
/// the path is encoded once and not normalised.
package struct SigV4Signer: Sendable {
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"
    package static let emptyPayloadHash = ContentHash.sha256Hex([UInt8]())

    package var credentials: AWSCredentials
    package var region: String
    package var service: String

    package init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to add to `request` (`x-amz-date`, `x-amz-content-sha256`, the session token
    /// when there is one, and `Authorization`), signed at `date`.
    package func sign(_ request: SignableRequest, date: Date) -> [(String, String)] {
        let stamp = Self.timestamp(date)
        var added: [(String, String)] = [("x-amz-date", stamp)]
        if service == "s3" { added.append(("x-amz-content-sha256", request.payloadHash)) }
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        var full = request
        full.headers += added
        let scope = "\(stamp.prefix(8))/\(region)/\(service)/aws4_request"
        let (canonical, signedHeaders) = Self.canonicalRequest(full)
        let toSign = "AWS4-HMAC-SHA256\n\(stamp)\n\(scope)\n\(ContentHash.sha256Hex(Array(canonical.utf8)))"
        let signature = ContentHash.hex(hmac(signingKey(day: String(stamp.prefix(8))), toSign))
        let auth = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return added + [("Authorization", auth)]
    }

    /// The canonical request and its signed-header list.
    package static func canonicalRequest(_ r: SignableRequest) -> (text: String, signedHeaders: String) {
        var merged: [String: [String]] = [:]
        for (name, value) in r.headers {
            merged[name.lowercased(), default: []].append(trimmed(value))
        }
        let names = merged.keys.sorted()
        let headerLines = names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined()
        let signed = names.joined(separator: ";")
        let text = [r.method, r.encodedPath, canonicalQuery(r.query), headerLines, signed, r.payloadHash].joined(separator: "\n")
        return (text, signed)
    }

    /// Query parameters encoded and sorted by name, then value.
    package static func canonicalQuery(_ query: [(String, String)]) -> String {
        let encoded: [(name: String, value: String)] = query.map { (uriEncode($0.0), uriEncode($0.1)) }
        let sorted = encoded.sorted { (a, b) -> Bool in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { $0.name + "=" + $0.value }.joined(separator: "&")
    }

    /// RFC 3986 encoding: everything but `A-Za-z0-9-._~` (and `/` when `keepSlash`) as `%XX`.
    package static func uriEncode(_ s: String, keepSlash: Bool = false) -> String {
        var out = ""
        for byte in s.utf8 {
            if isUnreserved(byte) || (keepSlash && byte == UInt8(ascii: "/")) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// `A-Z a-z 0-9 - . _ ~`.
    private static func isUnreserved(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
    }

    /// `20150830T123600Z`.
    package static func timestamp(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// A header value with outer spaces removed and inner runs of spaces made one.
    private static func trimmed(_ v: String) -> String {
        v.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }

    private func signingKey(day: String) -> [UInt8] {
        let kDate = hmac(Array("AWS4\(credentials.secretAccessKey)".utf8), day)
        return hmac(hmac(hmac(kDate, region), service), "aws4_request")
    }

    private func hmac(_ key: [UInt8], _ text: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: SymmetricKey(data: key)))
    }
}
