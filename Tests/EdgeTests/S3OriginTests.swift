import FolioS3Signing
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import FolioEdge

/// A tier's `s3://` origin without a store: which key a target names, what a signed request
/// carries, which answers count as the bucket refusing the tier, and how the pool reports it.
/// (`PrivateBucketTierTests` runs it against moto and SeaweedFS.)
@Suite("an s3:// origin: keys, signed requests, refusals")
struct S3OriginTests {
    static let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE1234", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")

    static func origin(prefix: String = "apps/demo", credentials: AWSCredentials? = Self.credentials, addressing: S3Addressing = .path) -> S3Origin {
        let configuration = S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:9000")!, region: "eu-west-3", credentials: credentials, addressing: addressing,
            credentialSource: "profile 'tier' of /etc/folio/aws-credentials")
        return S3Origin(location: S3Location(bucket: "folio-private", prefix: prefix), configuration: configuration)
    }

    @Test("targets name keys under the prefix; the bucket itself, dot segments and bad escapes name none")
    func keys() {
        let o = Self.origin()
        #expect(o.key(for: "/manifest.plist") == "apps/demo/manifest.plist")
        #expect(o.key(for: "/objects/ab.plist?acl") == "apps/demo/objects/ab.plist", "the query is not S3's")
        #expect(o.key(for: "/a%20b/c%C3%A9.txt") == "apps/demo/a b/cé.txt")
        #expect(Self.origin(prefix: "").key(for: "/x/y") == "x/y")
        for none in ["/", "/?list-type=2", "/a/../../other/x", "/%2E%2E/x", "/./x", "/bad%zz", "relative"] {
            #expect(o.key(for: none) == nil, "\(none)")
        }
    }

    @Test("a GET is signed at its own date over host, x-amz-content-sha256 and x-amz-date; the client's conditions go on, unsigned")
    func signed() throws {
        var client = HTTPHeaders()
        client.add(name: "If-None-Match", value: "\"e1\"")
        client.add(name: "Range", value: "bytes=0-9")
        client.add(name: "Authorization", value: "Bearer the-client's")
        client.add(name: "X-Amz-Security-Token", value: "the-client's")
        client.add(name: "Cookie", value: "c=1")
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let r = try #require(try Self.origin().request(.GET, target: "/objects/a b.plist?acl", headers: client, date: date))
        #expect(r.url.absoluteString == "http://127.0.0.1:9000/folio-private/apps/demo/objects/a%20b.plist")
        #expect(r.headers.first(name: "host") == "127.0.0.1:9000")
        #expect(r.headers.first(name: "x-amz-date") == "20231114T221320Z")
        #expect(r.headers.first(name: "x-amz-content-sha256") == SigV4Signer.emptyPayloadHash)
        #expect(r.headers["authorization"].count == 1)
        let auth = try #require(r.headers.first(name: "authorization"))
        #expect(auth.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE1234/20231114/eu-west-3/s3/aws4_request, "))
        #expect(auth.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date, "), "\(auth)")
        #expect(!r.headers.contains(name: "x-amz-security-token") && !r.headers.contains(name: "cookie"))
        #expect(r.headers.first(name: "if-none-match") == "\"e1\"" && r.headers.first(name: "range") == "bytes=0-9")
        // A second later, its own date and so another signature.
        let later = try #require(try Self.origin().request(.GET, target: "/objects/a b.plist", headers: [:], date: date + 1))
        #expect(later.headers.first(name: "x-amz-date") == "20231114T221321Z")
        #expect(later.headers.first(name: "authorization") != auth)
    }

    @Test("a session token is sent as x-amz-security-token and signed; virtual-hosted addressing names the bucket in the host")
    func sessionToken() throws {
        var credentials = Self.credentials
        credentials.sessionToken = "FQoGZXIvYXdzE//token=="
        let r = try #require(try Self.origin(credentials: credentials, addressing: .virtual).request(.HEAD, target: "/manifest.plist", headers: [:], date: Date()))
        #expect(r.url.absoluteString == "http://folio-private.127.0.0.1:9000/apps/demo/manifest.plist")
        #expect(r.method == .HEAD)
        #expect(r.headers["x-amz-security-token"] == ["FQoGZXIvYXdzE//token=="])
        #expect(r.headers.first(name: "authorization")?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, ") == true)
    }

    @Test("without credentials the requests go unsigned")
    func unsigned() throws {
        let r = try #require(try Self.origin(credentials: nil).request(.GET, target: "/manifest.plist", headers: [:], date: Date()))
        #expect(!r.headers.contains(name: "authorization") && !r.headers.contains(name: "x-amz-date"))
        #expect(r.headers.first(name: "host") == "127.0.0.1:9000")
    }

    @Test("only GET and HEAD are sent: another method is 405 with Allow, a target naming no object 404")
    func notSent() {
        let put = S3Origin.notSent(ProxyRequest(method: .PUT, target: "/manifest.plist", headers: [:], body: nil))
        #expect(put.status == .methodNotAllowed && put.headers.first(name: "allow") == "GET, HEAD")
        let root = S3Origin.notSent(ProxyRequest(method: .GET, target: "/", headers: [:], body: nil))
        #expect(root.status == .notFound && root.headers.first(name: "cache-control") == "no-store")
    }

    static func error(_ code: String) -> ByteBuffer {
        ByteBuffer(string: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code><Message>m</Message><RequestId>r</RequestId></Error>")
    }

    @Test("the bucket refusing the tier (credentials, clock, region, bucket) fails the request; AccessDenied and NoSuchKey stay answers, but not to a health check")
    func refusals() {
        let o = Self.origin()
        #expect(o.refusal(status: 403, body: Self.error("SignatureDoesNotMatch"))?.description
            == "s3://folio-private/apps/demo: 403 SignatureDoesNotMatch: check AWS credentials (the secret access key) and the region")
        #expect(o.refusal(status: 400, body: Self.error("ExpiredToken"))?.reason.hasPrefix("400 ExpiredToken: the session token expired") == true)
        #expect(o.refusal(status: 403, body: Self.error("RequestTimeTooSkewed"))?.advice.contains("clock") == true)
        #expect(o.refusal(status: 403, body: Self.error("InvalidAccessKeyId")) != nil)
        #expect(o.refusal(status: 404, body: Self.error("NoSuchBucket")) != nil)
        #expect(o.refusal(status: 301, body: Self.error("PermanentRedirect")) != nil)
        // Answers about the object, or no verdict at all, go to the client.
        #expect(o.refusal(status: 403, body: Self.error("AccessDenied")) == nil)
        #expect(o.refusal(status: 404, body: Self.error("NoSuchKey")) == nil)
        #expect(o.refusal(status: 403, body: nil) == nil)
        for status: UInt in [200, 206, 304, 500, 503] { #expect(o.refusal(status: status, body: Self.error("SignatureDoesNotMatch")) == nil, "\(status)") }
        #expect(o.refusal(status: 503, body: Self.error("SlowDown")) == nil)
        // A health check reads the manifest, which is there: a 403 of any kind is the credentials'.
        #expect(o.refusal(status: 403, body: Self.error("AccessDenied"), checking: true)?.reason
            == "403 AccessDenied: check AWS credentials, and that they may s3:GetObject under the prefix")
        #expect(o.refusal(status: 403, body: nil, checking: true)?.reason.hasPrefix("403: check AWS credentials") == true)
        #expect(o.refusal(status: 404, body: Self.error("NoSuchKey"), checking: true) == nil, "nothing published yet")
    }

    @Test("a lone bucket is checked, and a refusal marks it down with why; two good checks bring it back")
    func poolReports() {
        let pool = OriginPool([.s3(Self.origin())])
        #expect(pool.isChecked && !pool.isFailover)
        #expect(pool.origins[0].name == "s3://folio-private/apps/demo" && pool.parameter(0) == "; origin=\"s3://folio-private/apps/demo\"")
        pool.failed(0, why: "a connection failed")
        #expect(pool.statuses()[0].up, "a lone origin's plain failure marks nothing, as before")
        pool.failed(0, why: "403 SignatureDoesNotMatch: check AWS credentials", refused: true)
        #expect(pool.statuses()[0].up == false && pool.statuses()[0].why == "403 SignatureDoesNotMatch: check AWS credentials")
        pool.checked(0, good: true)
        #expect(pool.statuses()[0].up == false)
        pool.checked(0, good: true)
        #expect(pool.statuses()[0].up && pool.statuses()[0].why == nil)
        #expect(!OriginPool(["http://a:1"]).isChecked)
        #expect(OriginPool([.http("http://a:1"), .s3(Self.origin())]).origins.map(\.name) == ["a:1", "s3://folio-private/apps/demo"])
    }

    @Test("/.folio/status's origins: each one's state, and why when down")
    func statusJSON() {
        let json = CacheAdmin.originsJSON([("s3://b/p", false, "403 AccessDenied: check \"it\""), ("a:1", true, nil)]).description
        #expect(json == #"[{"origin":"s3://b/p","up":false,"why":"403 AccessDenied: check \"it\""},{"origin":"a:1","up":true}]"#)
    }

    @Test("the signing note names the credentials' source and the key's last four characters, never the secret")
    func signingNote() {
        var credentials = Self.credentials
        credentials.sessionToken = "SESSIONTOKEN"
        let note = Self.origin(credentials: credentials).signingNote
        #expect(note.contains("access key ****1234 with a session token from profile 'tier' of /etc/folio/aws-credentials"), "\(note)")
        #expect(note.contains("http://127.0.0.1:9000, region eu-west-3, path-style"), "\(note)")
        #expect(!note.contains(Self.credentials.secretAccessKey) && !note.contains("AKIDEXAMPLE") && !note.contains("SESSIONTOKEN"))
        #expect(Self.origin(credentials: nil).signingNote.contains("no AWS credentials found, so its requests go unsigned"))
        let printed = "\(TierOrigin.s3(Self.origin(credentials: credentials)))"
        #expect(!printed.contains(Self.credentials.secretAccessKey) && !printed.contains("SESSIONTOKEN"), "\(printed)")
    }
}
