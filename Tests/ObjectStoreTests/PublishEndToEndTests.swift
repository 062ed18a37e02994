import FolioObjectStore
import FolioPublished
import FolioS3Signing
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// `folio-build publish` to real object stores on loopback, read back through a `folio-edge`
/// cache tier by the real `folio` client.
@Suite("folio-build publish: end to end", .serialized, .timeLimit(.minutes(10)))
struct PublishEndToEndTests {
    @Test("moto: publish, serve through a tier, sync; version 2 uploads only what changed")
    func moto() async throws {
        let server = try ObjectStoreServer.moto()
        defer { server.stop() }
        try await endToEnd(server)
    }

    @Test("SeaweedFS with an identity: signatures checked by a real server")
    func seaweed() async throws {
        let server = try ObjectStoreServer.seaweed(requireSignature: true)
        defer { server.stop() }
        try await endToEnd(server)
        // A wrong secret is refused in words, and nothing is published.
        let fixture = PublishFixture("s3-badsig")
        defer { fixture.cleanup() }
        try fixture.build()
        let wrong = AWSCredentials(accessKeyID: server.credentials.accessKeyID, secretAccessKey: "not-the-secret")
        let out = try fixture.publish(server, "s3://folio-site/other", env: server.environment(wrong))
        #expect(out.status == 1)
        #expect(out.stderr.contains("SignatureDoesNotMatch") || out.stderr.contains("AccessDenied"), "\(out.stderr)")
        #expect(out.stderr.contains("signature does not match") || out.stderr.contains("access denied"), "\(out.stderr)")
    }

    @Test("SeaweedFS without identities: a re-publish skips every immutable file; its conditional write keeps a held lock")
    func seaweedAnonymous() async throws {
        let server = try ObjectStoreServer.seaweed(requireSignature: false)
        defer { server.stop() }
        let fixture = PublishFixture("s3-weed-anon")
        defer { fixture.cleanup() }
        try fixture.build()
        try await server.createBucket("folio-anon")
        let files = PublishFixture.published(fixture.root)
        let mutable = files.keys.filter { PublishedHeaders.kind(of: $0) == .mutable }.count
        let first = try fixture.publish(server, "s3://folio-anon")
        #expect(first.status == 0 && PublishFixture.counts(first)! == (files.count, 0), "\(first.stdout) \(first.stderr)")
        let again = try fixture.publish(server, "s3://folio-anon")
        #expect(again.status == 0 && PublishFixture.counts(again)! == (mutable, files.count - mutable), "\(again.stdout) \(again.stderr)")
        // If-None-Match: * on an existing key: 412 from SeaweedFS too.
        let client = server.client("folio-anon")
        let held = PublishLock.Holder(token: "t3", owner: "carol", host: "w-1", pid: 9, since: Date())
        #expect(try await client.putIfAbsent(".folio-publish-lock", body: held.bytes))
        #expect(try await !client.putIfAbsent(".folio-publish-lock", body: Array("other".utf8)))
        await client.shutdown()
        let locked = try fixture.publish(server, "s3://folio-anon")
        #expect(locked.status == 2 && locked.stderr.contains("held by carol (pid 9 on w-1)"), "\(locked.stderr)")
    }

    private func endToEnd(_ server: ObjectStoreServer) async throws {
        let fixture = PublishFixture("s3-e2e-\(server.name)")
        defer { fixture.cleanup() }
        // A 12 MiB asset goes up in three 5 MiB parts.
        try fixture.write("images/large.bin", PublishFixture.noise(12 << 20, seed: 7))
        let v1 = try fixture.build()
        try await server.createBucket("folio-site")
        let multipart = ["--multipart-threshold", "5M", "--part-size", "5M"]
        let first = try fixture.publish(server, "s3://folio-site/apps/demo", multipart)
        try #require(first.status == 0, "\(first.stderr)")
        let files = PublishFixture.published(fixture.root).count
        #expect(PublishFixture.counts(first)! == (files, 0), "\(first.stdout)")
        try await compareThroughTier(server, fixture, version: v1.version)

        // Version 2: one sonnet changed.
        let sonnet = fixture.content + "/sonnets/018.txt"
        try FileIO.writeAtomically(Array(String(decoding: try FileIO.read(sonnet), as: UTF8.self).replacingOccurrences(of: "summer", with: "winter").utf8), to: sonnet)
        let before = PublishFixture.published(fixture.root)
        let v2 = try fixture.build()
        #expect(v2.version == v1.version + 1)
        let after = PublishFixture.published(fixture.root)
        let changed = after.filter { before[$0.key] != $0.value }.keys
        let second = try fixture.publish(server, "s3://folio-site/apps/demo", multipart)
        try #require(second.status == 0, "\(second.stderr)")
        // Uploaded: the new or changed files, and the mutable ones (manifest, mirrors, head) even when unchanged.
        let mutable = after.keys.filter { PublishedHeaders.kind(of: $0) == .mutable }
        let expected = Set(changed).union(mutable).count
        let counts = try #require(PublishFixture.counts(second))
        #expect(counts.uploaded == expected && counts.skipped == after.count - expected, "\(second.stdout); changed: \(changed.sorted())")
        #expect(counts.uploaded < 20, "\(second.stdout)")
        try await compareThroughTier(server, fixture, version: v2.version)
        // The stored headers are the edge's.
        try await checkStoredHeaders(server, fixture, v2)
    }

    /// A tier over the bucket and a local edge over the directory: `folio` syncs through each
    /// and reads the same.
    private func compareThroughTier(_ server: ObjectStoreServer, _ fixture: PublishFixture, version: Int) async throws {
        let tier = try EdgeProcess.start(
            root: fixture.root, args: ["--origin", server.endpoint + "/folio-site/apps/demo", "--cache-dir", fixture.dir + "/tier-cache"])
        defer { tier.stop() }
        let local = try EdgeProcess.start(root: fixture.root)
        defer { local.stop() }
        var outputs: [[String]] = []
        for (edge, cache) in [(tier, fixture.dir + "/via-tier"), (local, fixture.dir + "/via-local")] {
            let sync = try Harness.run(Harness.binary("folio"), ["--cache-dir", cache, "--edge", edge.baseURL, "sync"])
            try #require(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
            let ls = try Harness.run(Harness.binary("folio"), ["--cache-dir", cache, "--edge", ClientUnreachable.url, "ls"])
            let read = try Harness.run(Harness.binary("folio"), ["--cache-dir", cache, "--edge", ClientUnreachable.url, "read", "18"])
            let big = try Harness.run(Harness.binary("folio"), ["--cache-dir", cache, "--edge", ClientUnreachable.url, "get", "images/large.bin"])
            outputs.append([ls.stdout, read.stdout, ContentHash.sha256Hex(big.stdoutBytes)])
            // The cache holds manifests as manifests/<N>-<sha256>.plist.
            #expect(try FileIO.list(cache + "/manifests").contains { $0.hasPrefix("\(version)-") })
        }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0][2] == ContentHash.sha256Hex(try FileIO.read(fixture.content + "/images/large.bin")))
        Harness.cleanup(fixture.dir + "/tier-cache")
    }

    /// Content-Type, Cache-Control and Content-Encoding as stored, against `PublishedHeaders`.
    private func checkStoredHeaders(_ server: ObjectStoreServer, _ fixture: PublishFixture, _ manifest: Manifest) async throws {
        let client = server.client("folio-site")
        let png = try #require(manifest.entry("images/quill.png"))
        let sonnet = try #require(manifest.entry("sonnets/018.plist"))
        let cases: [(String, String, String, String?)] = [
            (png.objectPath, "image/png", "public, max-age=31536000, immutable", nil),
            (sonnet.gzipObjectPath!, "application/x-plist", "public, max-age=31536000, immutable", "gzip"),
            ("manifest.plist", "application/x-plist", "public, max-age=60, stale-while-revalidate=300, stale-if-error=86400", nil),
            ("manifest.json", "application/json; charset=utf-8", "public, max-age=60, stale-while-revalidate=300, stale-if-error=86400", nil),
            ("manifests/\(manifest.version).plist", "application/x-plist", "public, max-age=31536000, immutable", nil),
        ]
        for (key, type, cc, encoding) in cases {
            let r = try await client.send(S3Request(method: "HEAD", key: "apps/demo/" + key))
            #expect(r.status == 200, "\(key)")
            #expect(r.headers.first(name: "Content-Type") == type, "\(key)")
            #expect(r.headers.first(name: "Cache-Control") == cc, "\(key)")
            #expect(r.headers.first(name: "Content-Encoding") == encoding, "\(key)")
        }
        await client.shutdown()
    }
}

/// An address where no edge listens, for reading the cache offline.
enum ClientUnreachable {
    static let url = "http://127.0.0.1:1"
}
