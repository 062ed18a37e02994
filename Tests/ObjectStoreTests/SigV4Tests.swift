import FolioObjectStore
import FolioS3Signing
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

@Suite("SigV4 signer")
struct SigV4Tests {
    /// The AWS SigV4 test suite's `get-vanilla`: `GET /` to example.amazonaws.com, service
    /// `service`, AKIDEXAMPLE, 2015-08-30T12:36:00Z.
    @Test("get-vanilla from the AWS Signature Version 4 test suite")
    func getVanilla() {
        let signer = SigV4Signer(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1", service: "service")
        let request = SignableRequest(
            method: "GET", encodedPath: "/", headers: [("Host", "example.amazonaws.com")], payloadHash: SigV4Signer.emptyPayloadHash)
        let added = signer.sign(request, date: Date(timeIntervalSince1970: 1_440_938_160))
        #expect(added.first { $0.0 == "x-amz-date" }?.1 == "20150830T123600Z")
        #expect(
            added.last?.1
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, "
                + "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    /// The S3 documentation's "GET Object" example: the first 10 bytes of test.txt in
    /// examplebucket, 2013-05-24, signed with the empty payload's hash.
    @Test("the S3 API reference's GET Object example")
    func s3GetObjectExample() {
        let signer = SigV4Signer(
            credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1")
        let request = SignableRequest(
            method: "GET", encodedPath: "/test.txt", headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")],
            payloadHash: SigV4Signer.emptyPayloadHash)
        let added = signer.sign(request, date: Date(timeIntervalSince1970: 1_369_353_600))
        #expect(
            added.last?.1
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test("query encoding: RFC 3986 unreserved characters kept, the rest %XX, sorted by name then value")
    func queryEncoding() {
        #expect(SigV4Signer.uriEncode("a b+c/=~*é") == "a%20b%2Bc%2F%3D~%2A%C3%A9")
        #expect(SigV4Signer.uriEncode("dir/a b", keepSlash: true) == "dir/a%20b")
        #expect(SigV4Signer.canonicalQuery([("b", "2"), ("a", "z"), ("a", "y"), ("uploads", "")]) == "a=y&a=z&b=2&uploads=")
    }

    /// One request for the differential test.
    struct Case {
        var method: String
        var key: String
        var query: [(String, String)] = []
        var headers: [(String, String)] = []
        var body = ""
        var https = false
        var unsigned = false
        var token: String?
        var region = "us-east-1"
        var addressing = S3Addressing.path
    }

    static let cases: [Case] = [
        Case(method: "GET", key: "", query: [("list-type", "2"), ("prefix", "site/v 1+2"), ("continuation-token", "a/b=c+d==")]),
        Case(method: "PUT", key: "objects/ab.plist", headers: [("Content-Type", "application/x-plist"), ("Cache-Control", "public, max-age=31536000, immutable")], body: "bplist00 bytes"),
        Case(method: "PUT", key: "dir with space/ü&=+,;.plist.gz", headers: [("Content-Encoding", "gzip")], body: "x", region: "eu-central-1"),
        Case(method: "PUT", key: "big.bin", query: [("partNumber", "3"), ("uploadId", "2~abc/DEF+g==")], body: "part", https: true, unsigned: true),
        Case(method: "POST", key: "big.bin", query: [("uploads", "")], headers: [("Content-Type", "application/octet-stream")], token: "FQoGZXIvYXdzE//session+token=="),
        Case(method: "PUT", key: ".folio-publish-lock", headers: [("If-None-Match", "*")], body: "{}", https: true, addressing: .virtual),
        Case(method: "DELETE", key: "a~b*c'(d)!", https: true, token: "tok", region: "ap-southeast-2", addressing: .virtual),
    ]

    /// Our Authorization header for each case and botocore's `S3SigV4Auth` at the same time agree.
    @Test("differential against botocore's S3SigV4Auth (query characters, UNSIGNED-PAYLOAD, session token, both addressing styles)")
    func botocoreDifferential() throws {
        let date = Date(timeIntervalSince1970: 1_795_748_645)  // 2026-11-27T03:04:05Z
        var inputs: [[String: Any]] = []
        var ours: [(url: String, request: SignableRequest, signer: SigV4Signer)] = []
        for c in Self.cases {
            let endpoint = URL(string: c.https ? "https://s3.\(c.region).amazonaws.com" : "http://127.0.0.1:9000")!
            let creds = AWSCredentials(accessKeyID: "AKIDTEST", secretAccessKey: "secret/+key", sessionToken: c.token)
            let config = S3Configuration(endpoint: endpoint, region: c.region, credentials: creds, addressing: c.addressing)
            let url = config.url(bucket: "folio-bucket", key: c.key)
            let query = SigV4Signer.canonicalQuery(c.query)
            let full = url.absoluteString + (query.isEmpty ? "" : "?" + query)
            var host = url.host!
            if let port = url.port { host += ":\(port)" }
            let path = URLComponents(url: url, resolvingAgainstBaseURL: false)!.percentEncodedPath
            inputs.append([
                "key": creds.accessKeyID, "secret": creds.secretAccessKey, "token": c.token as Any, "method": c.method, "url": full,
                "headers": Dictionary(uniqueKeysWithValues: c.headers), "body": c.body, "region": c.region, "unsigned": c.unsigned,
            ])
            let request = SignableRequest(
                method: c.method, encodedPath: path.isEmpty ? "/" : path, query: c.query, headers: [("Host", host)] + c.headers,
                payloadHash: c.unsigned ? SigV4Signer.unsignedPayload : ContentHash.sha256Hex(Array(c.body.utf8)))
            ours.append((full, request, SigV4Signer(credentials: creds, region: c.region)))
        }
        let theirs = try Self.botocore(inputs)
        try #require(theirs.count == ours.count)
        for (i, (url, request, signer)) in ours.enumerated() {
            let added = signer.sign(request, date: date)
            #expect(theirs[i]["payload"] as? String == request.payloadHash, "\(url)")
            #expect(added.last?.1 == theirs[i]["authorization"] as? String, "\(request.method) \(url)")
            #expect(added.first { $0.0 == "x-amz-security-token" }?.1 == theirs[i]["token"] as? String)
        }
    }

    static func botocore(_ inputs: [[String: Any]]) throws -> [[String: Any]] {
        let dir = Harness.tempDir("botocore")
        defer { Harness.cleanup(dir) }
        try FileIO.writeAtomically(Array(botocoreScript.utf8), to: dir + "/sign.py")
        let stdin = try JSONSerialization.data(withJSONObject: inputs)
        let out = try Harness.run("/usr/bin/env", ["python3", dir + "/sign.py"], stdin: Array(stdin))
        guard out.status == 0 else { throw HarnessError("botocore signing failed: \(out.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(out.stdoutBytes)) as? [[String: Any]] ?? []
    }

    static let botocoreScript = """
        import datetime, json, sys, types
        from unittest import mock
        import botocore.auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        fixed = datetime.datetime(2026, 11, 27, 3, 4, 5)
        out = []
        for c in json.load(sys.stdin):
            req = AWSRequest(method=c["method"], url=c["url"], headers=c["headers"], data=c["body"].encode())
            if c["unsigned"]:
                req.context["client_config"] = types.SimpleNamespace(s3={"payload_signing_enabled": False})
            with mock.patch.object(botocore.auth, "get_current_datetime", return_value=fixed):
                botocore.auth.S3SigV4Auth(Credentials(c["key"], c["secret"], c["token"]), "s3", c["region"]).add_auth(req)
            out.append({"authorization": req.headers["Authorization"], "payload": req.headers["X-Amz-Content-SHA256"],
                        "token": req.headers.get("X-Amz-Security-Token")})
        print(json.dumps(out))
        """
}
