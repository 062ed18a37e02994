import AsyncHTTPClient
import FolioS3Signing
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// A tier's `s3://BUCKET/PREFIX` origin, read as CloudFront's origin access control reads a
/// private bucket: each request is a GET or HEAD of the key under the prefix that the target's
/// path names, signed with SigV4 at the time it is sent (with the credentials, region, endpoint
/// and addressing `folio-build publish` uses; unsigned when there are no credentials). The
/// tier's credentials must not be lent to anything else: no other method, no query (S3 reads
/// `?acl` and the like as other operations), no listing of the bucket, and of the client's
/// fields only its conditions and range go on (unsigned; the signature covers `host` and the
/// `x-amz-` fields).
package struct S3Origin: Sendable, Equatable {
    package var location: S3Location
    package var configuration: S3Configuration

    package init(location: S3Location, configuration: S3Configuration) {
        self.location = location
        self.configuration = configuration
    }

    /// The client fields a request to the bucket keeps.
    static let forwardedFields = ["range", "if-range", "if-none-match", "if-modified-since", "if-match", "if-unmodified-since"]

    /// The key `target` names under the prefix: its path percent-decoded, without the leading
    /// `/` and the query. Nil for a target that names no object: the bucket or prefix itself
    /// (a listing), a `.` or `..` segment, a path that does not decode.
    func key(for target: String) -> String? {
        guard let path = EdgeHandler.path(of: target), path.hasPrefix("/") else { return nil }
        let relative = String(path.dropFirst())
        guard !relative.isEmpty, !relative.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." })
        else { return nil }
        return location.key(relative)
    }

    /// The signed request for a GET or HEAD of `target` with the client's `headers`, at `date`;
    /// nil when the target names no object.
    func request(_ method: HTTPMethod, target: String, headers: HTTPHeaders, date: Date) throws -> HTTPClient.Request? {
        guard let key = key(for: target) else { return nil }
        let url = configuration.url(bucket: location.bucket, key: key)
        var fields = HTTPHeaders(configuration.signedFields(method: method.rawValue, url: url, payloadHash: SigV4Signer.emptyPayloadHash, date: date))
        for name in Self.forwardedFields {
            for value in headers[name] { fields.add(name: name, value: value) }
        }
        return try HTTPClient.Request(url: url.absoluteString, method: method, headers: fields)
    }

    /// What the tier answers itself for a request the bucket is not asked: 405 for a method but
    /// GET and HEAD, 404 for a target that names no object.
    static func notSent(_ request: ProxyRequest) -> ProxyResponse {
        let allowed = request.method == .GET || request.method == .HEAD
        var r = CacheAdmin.text(
            allowed ? .notFound : .methodNotAllowed,
            allowed ? "no such object\n" : "an s3:// origin is only read: GET and HEAD\n")
        if !allowed { r.headers.add(name: "Allow", value: "GET, HEAD") }
        return r
    }

    // MARK: - Saying how it is read

    /// How its requests go, without the secret: the credentials' source and access key (its
    /// last four characters), the endpoint, the region and the addressing; or that they go
    /// unsigned, and what to set.
    package var signingNote: String {
        let c = configuration
        let reach = "\(c.endpoint.absoluteString), region \(c.region), \(c.addressing == .path ? "path-style" : "virtual-hosted") addressing"
        guard let credentials = c.credentials else {
            return "\(location.url): no AWS credentials found, so its requests go unsigned to \(reach) (a private bucket answers them 403): "
                + "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE and the AWS credentials file"
        }
        let key = "****" + credentials.accessKeyID.suffix(4)
        let token = credentials.sessionToken == nil ? "" : " with a session token"
        return "\(location.url): requests signed (SigV4) with access key \(key)\(token) from \(c.credentialSource ?? "the AWS settings"), to \(reach)"
    }

    /// Logs `signingNote` for each bucket among `origins` (a warning when it has no credentials).
    static func logSigning(_ origins: [TierOrigin], _ logger: Logger) {
        for case .s3(let bucket) in origins {
            if bucket.configuration.credentials == nil { logger.warning("\(bucket.signingNote)") } else { logger.info("\(bucket.signingNote)") }
        }
    }

    // MARK: - Answers that say the tier cannot read the bucket

    /// S3 error codes that say the tier cannot read the bucket at all, whatever the object (its
    /// credentials, its clock, the region, the bucket), and what to do about each.
    static let refusals: [String: String] = [
        "SignatureDoesNotMatch": "check AWS credentials (the secret access key) and the region",
        "InvalidAccessKeyId": "check AWS credentials (the access key ID)",
        "ExpiredToken": "the session token expired: renew the AWS credentials, then reload (SIGHUP)",
        "InvalidToken": "the session token is not valid: check AWS_SESSION_TOKEN or aws_session_token",
        "TokenRefreshRequired": "the session token expired: renew the AWS credentials, then reload (SIGHUP)",
        "RequestTimeTooSkewed": "this machine's clock is more than 15 minutes off: set it right (NTP)",
        "AuthorizationHeaderMalformed": "the bucket is in another region: set AWS_REGION to it",
        "PermanentRedirect": "the bucket is in another region: set AWS_REGION to it, or AWS_ENDPOINT_URL",
        "NoSuchBucket": "there is no such bucket at the endpoint: check the bucket name and AWS_ENDPOINT_URL",
        "AllAccessDisabled": "all access to the bucket is disabled",
    ]

    /// Advice for `AccessDenied`, which a health check (of a manifest that must be there) reads
    /// as the credentials' fault; for a request it stays an answer (S3 also gives it for a
    /// missing key to credentials that may not list the bucket).
    static let accessDenied = "check AWS credentials, and that they may s3:GetObject under the prefix"

    /// The error an answer stands for when it says the tier cannot read the bucket; nil otherwise.
    func refusal(status: UInt, body: ByteBuffer?, checking: Bool = false) -> S3OriginRefused? {
        guard (300..<500).contains(status), status != 304 else { return nil }
        let code = body.flatMap { $0.readableBytes <= 64 << 10 ? XMLText.first("Code", in: Array($0.readableBytesView)) : nil }
        if let code, let advice = Self.refusals[code] { return S3OriginRefused(origin: location.url, status: status, code: code, advice: advice) }
        guard checking, status != 404 else { return nil }
        let advice = status == 403 ? Self.accessDenied : status == 400 ? "check the region and AWS credentials" : "check the endpoint and region"
        return S3OriginRefused(origin: location.url, status: status, code: code, advice: advice)
    }
}

/// An S3 origin's answer that the tier cannot read the bucket (see `S3Origin.refusals`): it
/// fails like an unreachable origin (the next origin is asked, a stale copy may stand in, else
/// 502), and the origin's health says why.
struct S3OriginRefused: Error, CustomStringConvertible {
    let origin: String
    let status: UInt
    let code: String?
    let advice: String

    /// `403 SignatureDoesNotMatch: check AWS credentials …`.
    var reason: String { "\(status)\(code.map { " " + $0 } ?? ""): \(advice)" }

    /// `s3://bucket/prefix: 403 SignatureDoesNotMatch: check AWS credentials …`.
    var description: String { "\(origin): \(reason)" }
}
