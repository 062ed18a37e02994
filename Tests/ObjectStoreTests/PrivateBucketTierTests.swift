import FolioPublished
import FolioS3Signing
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `folio-edge --origin s3://BUCKET/PREFIX` against real stores that refuse anonymous reads:
/// `folio-build publish` uploads into a private bucket, then tiers read it with the right, a
/// wrong, and no credentials; one fails over past a dead origin and a missing bucket, and one
/// has its credentials file rotated under it (SIGHUP).
@Suite("a tier over a private bucket", .serialized, .timeLimit(.minutes(10)))
struct PrivateBucketTierTests {
    static let bucket = "folio-private"

    @Test("SeaweedFS with an identity and no anonymous read: right credentials serve, wrong or none get 403s, the health check says why")
    func seaweed() async throws {
        let server = try ObjectStoreServer.seaweed(requireSignature: true, anonymousRead: false)
        defer { server.stop() }
        try await privateBucket(server, "s3://folio-private/apps/demo", denied: "403 AccessDenied: check AWS credentials")
        try await rotation(server)
    }

    /// At the bucket's root: moto's signature check percent-encodes a query value again, so it
    /// refuses any ListObjectsV2 whose prefix holds a `/` (boto3's own too), and a publish under
    /// a prefix lists it.
    @Test("moto with its IAM checking signatures: the same")
    func moto() async throws {
        let server = try ObjectStoreServer.motoWithIAM()
        defer { server.stop() }
        try await privateBucket(server, "s3://folio-private", denied: "403: check AWS credentials")
    }

    /// Publishes into the private bucket, then reads it through tiers with each kind of credentials.
    private func privateBucket(_ server: ObjectStoreServer, _ origin: String, denied: String) async throws {
        let fixture = PublishFixture("s3-private-\(server.name)")
        defer { fixture.cleanup() }
        let manifest = try fixture.build()
        try await server.createBucket(Self.bucket, publicRead: false)
        let published = try fixture.publish(server, origin)
        try #require(published.status == 0, "\(published.stdout) \(published.stderr)")
        let key = try S3Location(parsing: origin).key("manifest.plist")
        let direct = try RawHTTPConnection.fetch(port: server.port, "/\(Self.bucket)/\(key)")
        try #require(direct.status == 403, "the bucket must refuse anonymous reads: \(direct.status)")

        try await rightCredentials(server, fixture, manifest, origin)
        try await wrongCredentials(server, fixture, origin)
        try await noCredentials(server, fixture, origin, denied: denied)
        try await failover(server, fixture, origin)
    }

    private func rightCredentials(_ server: ObjectStoreServer, _ fixture: PublishFixture, _ manifest: Manifest, _ origin: String) async throws {
        let tier = try Self.tier(fixture, server.environment(), [origin])
        defer { tier.stop() }
        #expect(tier.log.contains("\(origin): requests signed (SigV4) with access key ****\(server.credentials.accessKeyID.suffix(4))"), "\(tier.log)")
        #expect(tier.log.contains("from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment") && !tier.log.contains(server.credentials.secretAccessKey))
        let manifestBytes = try FileIO.read(fixture.root + "/manifest.plist")
        let first = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
        #expect(first.status == 200 && first.body == manifestBytes, "\(first.status) \(first.text)")
        let png = try #require(manifest.entry("images/quill.png"))
        let pngBytes = try FileIO.read(fixture.root + "/" + png.objectPath)
        let object = try RawHTTPConnection.fetch(port: tier.port, "/" + png.objectPath)
        #expect(object.status == 200 && object.body == pngBytes)
        #expect(first.header("cache-status")?.contains("stored; origin=\"\(origin)\"") == true, "\(first.headers)")
        // The tier's conditional revalidation (If-None-Match, unsigned beside the signature) is a 304 from the store.
        let etag = try #require(first.header("etag"))
        let revalidated = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: [("If-None-Match", etag), ("Cache-Control", "no-cache")])
        #expect(revalidated.status == 304 && revalidated.header("cache-status")?.contains("fwd-status=304") == true, "\(revalidated.headers)")
        // The real client syncs through it.
        let sync = try Harness.run(Harness.binary("folio"), ["--cache-dir", fixture.dir + "/client", "--edge", tier.baseURL, "sync"])
        #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        #expect(try Self.originStatus(tier).first?["up"] as? Bool == true)
        // A key that needs escaping is signed as it is sent: the store says it is missing, not that the signature is wrong.
        // (moto's own check refuses `+`, `(` and non-ASCII in a key from boto3 too.)
        for target in ["/missing%20key.txt"] + (server.name == "moto" ? [] : ["/missing%C3%A9+(1)*.txt"]) {
            let missing = try RawHTTPConnection.fetch(port: tier.port, target)
            #expect(missing.status == 404, "\(target): \(missing.status) \(missing.text)")
        }
        // Nothing but GET and HEAD of objects under the prefix is sent with the tier's credentials.
        #expect(try RawHTTPConnection.fetch(port: tier.port, "DELETE", "/manifest.plist").status == 405)
        #expect(try RawHTTPConnection.fetch(port: tier.port, "/").status == 404)
    }

    private func wrongCredentials(_ server: ObjectStoreServer, _ fixture: PublishFixture, _ origin: String) async throws {
        let wrong = AWSCredentials(accessKeyID: server.credentials.accessKeyID, secretAccessKey: "not-the-secret")
        let tier = try Self.tier(fixture, server.environment(wrong), [origin])
        defer { tier.stop() }
        let answer = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
        #expect(answer.status == 502 && answer.text.contains("403 SignatureDoesNotMatch"), "\(answer.status) \(answer.text)")
        #expect(answer.header("cache-status")?.contains("detail=origin-refused") == true)
        let down = "origin \(origin) is down: 403 SignatureDoesNotMatch: check AWS credentials"
        #expect(await tier.waitForLog(down, timeout: 10), "\(tier.log)")
        let status = try Self.originStatus(tier).first
        #expect(status?["up"] as? Bool == false && (status?["why"] as? String)?.hasPrefix("403 SignatureDoesNotMatch") == true, "\(String(describing: status))")
        _ = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
        try await Task.sleep(for: .milliseconds(500))
        #expect(tier.log.components(separatedBy: down).count == 2, "reported once: \(tier.log)")
    }

    private func noCredentials(_ server: ObjectStoreServer, _ fixture: PublishFixture, _ origin: String, denied: String) async throws {
        let env = server.environment().merging(["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""]) { $1 }
        let tier = try Self.tier(fixture, env, [origin])
        defer { tier.stop() }
        #expect(tier.log.contains("\(origin): no AWS credentials found, so its requests go unsigned"), "\(tier.log)")
        let answer = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
        #expect(answer.status == 403, "\(answer.status) \(answer.text)")
        #expect(await tier.waitForLog("origin \(origin) is down: \(denied)", timeout: 10), "\(tier.log)")
    }

    /// A dead http origin and a bucket that does not exist, then the private bucket: served by the last.
    private func failover(_ server: ObjectStoreServer, _ fixture: PublishFixture, _ origin: String) async throws {
        let dead = try ObjectStoreServer.freePorts(1)[0]
        let origins = ["http://127.0.0.1:\(dead)", "s3://folio-no-such-bucket/x", origin]
        let tier = try Self.tier(fixture, server.environment(), origins)
        defer { tier.stop() }
        let answer = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
        #expect(answer.status == 200 && answer.header("cache-status")?.contains("origin=\"\(origin)\"") == true, "\(answer.headers)")
        let deadline = Date().addingTimeInterval(10)
        var states: [[String: Any]] = []
        while Date() < deadline {
            states = try Self.originStatus(tier)
            if states.map({ $0["up"] as? Bool }) == [false, false, true] { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(states.map { $0["up"] as? Bool } == [false, false, true], "\(states)")
        #expect((states.dropFirst().first?["why"] as? String)?.hasPrefix("404 NoSuchBucket: there is no such bucket") == true, "\(states)")
    }

    /// Credentials in a profile file, rotated to wrong ones and back, each applied by SIGHUP: the
    /// cached manifest keeps being served meanwhile, and the refusal is reported once.
    private func rotation(_ server: ObjectStoreServer) async throws {
        let fixture = PublishFixture("s3-rotate-\(server.name)")
        defer { fixture.cleanup() }
        try fixture.build()
        let published = try fixture.publish(server, "s3://folio-private/rotated")
        try #require(published.status == 0, "\(published.stderr)")
        let file = fixture.dir + "/aws-credentials"
        func write(_ secret: String) throws {
            let text = "[tier]\naws_access_key_id = \(server.credentials.accessKeyID)\naws_secret_access_key = \(secret)\n"
            try FileIO.writeAtomically(Array(text.utf8), to: file)
        }
        try write(server.credentials.secretAccessKey)
        let env = server.environment().merging(
            ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": file, "AWS_PROFILE": "tier"]) { $1 }
        let tier = try Self.tier(fixture, env, ["s3://folio-private/rotated"])
        defer { tier.stop() }
        #expect(tier.log.contains("from profile 'tier' of \(file)"), "\(tier.log)")
        #expect(try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist").status == 200)

        try write("rotated-away")
        try await Self.reload(tier, count: 1)
        let down = "origin s3://folio-private/rotated is down: 403 SignatureDoesNotMatch"
        #expect(await tier.waitForLog(down, timeout: 10), "\(tier.log)")
        // Made stale, the copy it has keeps being served (its revalidations refused meanwhile);
        // a client that will take no stored copy gets a 502 that says the origin refused.
        let manifestBytes = try FileIO.read(fixture.root + "/manifest.plist")
        for _ in 0..<3 {
            _ = try RawHTTPConnection.fetch(port: tier.port, "PURGE", "/manifest.plist", headers: Self.auth + [("Folio-Purge", "soft")])
            let stale = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            #expect(stale.status == 200 && stale.body == manifestBytes, "\(stale.headers)")
            try await Task.sleep(for: .milliseconds(100))
        }
        let refused = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: [("Cache-Control", "no-cache")])
        #expect(refused.status == 502 && refused.header("cache-status")?.contains("detail=origin-refused") == true, "\(refused.headers)")
        #expect(try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist").status == 200, "the refusal removed nothing")
        #expect(tier.log.components(separatedBy: down).count == 2, "reported once: \(tier.log)")

        try write(server.credentials.secretAccessKey)
        try await Self.reload(tier, count: 2)
        #expect(await tier.waitForLog("origin s3://folio-private/rotated is up again", timeout: 10), "\(tier.log)")
        let fresh = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: [("Cache-Control", "no-cache")])
        #expect(fresh.status == 200 && fresh.header("cache-status")?.contains("fwd-status=304") == true, "\(fresh.headers)")
    }

    // MARK: - Helpers

    static let token = "private-bucket-purge-token"
    static var auth: [(String, String)] { [("Authorization", "Bearer \(token)")] }

    /// A tier over `origins` (checked every 200 ms), with a purge token for `/.folio/status`.
    static func tier(_ fixture: PublishFixture, _ env: [String: String], _ origins: [String]) throws -> EdgeProcess {
        let tokenFile = fixture.dir + "/purge-token"
        try FileIO.writeAtomically(Array(token.utf8), to: tokenFile)
        chmod(tokenFile, 0o600)
        let args = origins.flatMap { ["--origin", $0] } + ["--purge-token-file", tokenFile, "--health-interval-ms", "200"]
        return try EdgeProcess.start(root: "", args: args, env: env)
    }

    /// SIGHUP, then waits for the `count`-th "reloaded the configuration".
    static func reload(_ tier: EdgeProcess, count: Int) async throws {
        tier.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while tier.log.components(separatedBy: "reloaded the configuration").count <= count {
            guard Date() < deadline else { throw HarnessError("no reload: \(tier.log)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// `/.folio/status`'s origins.
    static func originStatus(_ tier: EdgeProcess) throws -> [[String: Any]] {
        let r = try RawHTTPConnection.fetch(port: tier.port, "/.folio/status", headers: auth)
        let object = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
        return object?["origins"] as? [[String: Any]] ?? []
    }
}
