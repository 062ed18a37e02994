import FolioObjectStore
import FolioPublished
import FolioS3Signing
import FolioSupport
import FolioTestSupport
import Foundation
import Synchronization
import Testing

/// What keeps a bucket's published version whole: the upload order under a polling reader,
/// retries and failures behind a fault-injecting proxy, the lock, the version check, and the
/// errors a user sees.
@Suite("folio-build publish: order, faults, lock, errors", .serialized, .timeLimit(.minutes(10)))
struct PublishSafetyTests {
    static let bucket = "folio-safety"

    /// A moto store with the bucket, and a fixture built once; both cleaned up after `body`.
    func withStore(_ label: String, _ body: (ObjectStoreServer, PublishFixture, S3Client) async throws -> Void) async throws {
        let server = try ObjectStoreServer.moto()
        defer { server.stop() }
        let fixture = PublishFixture(label)
        defer { fixture.cleanup() }
        try await server.createBucket(Self.bucket)
        let client = server.client(Self.bucket)
        do {
            try await body(server, fixture, client)
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// The bucket's current manifest under `prefix`, or nil.
    static func currentManifest(_ client: S3Client, _ prefix: String) async throws -> Manifest? {
        try await client.get(prefix + "/manifest.plist").map { try Manifest(bytes: $0) }
    }

    @Test("a reader polling manifest.plist during a publish of 300 new objects never sees one named that is missing")
    func pollingReader() async throws {
        // On a thread of its own: about 900 requests, one after another (ThreadsExecutor).
        try await Harness.onOwnThread { _ in try await pollingReaderBody() }
    }

    func pollingReaderBody() async throws {
        try await withStore("s3-poll") { server, fixture, client in
            let v1 = try fixture.build()
            try #require(try fixture.publish(server, "s3://\(Self.bucket)/poll").status == 0)
            for i in 0..<300 { try fixture.write("images/many/\(i).bin", PublishFixture.noise(1500, seed: UInt64(i))) }
            let v2 = try fixture.build()
            // Objects are immutable: one seen present stays present, and is not asked for again.
            var present = Set<String>()
            #expect(try await Self.missingObjects(client, try #require(try await Self.currentManifest(client, "poll")), known: &present).isEmpty)
            // On a thread of its own: a task blocked in a subprocess would hold one of the few
            // threads the polling loop needs.
            let run = PublishRun()
            Thread {
                run.output = try? fixture.publish(server, "s3://\(Self.bucket)/poll", ["--concurrency", "1"])
                run.done.store(true, ordering: .releasing)
            }.start()
            var checked: [Int: Int] = [:]  // version -> times seen
            var polls = 0
            while true {
                let done = run.done.load(ordering: .acquiring)
                let manifest = try #require(try await Self.currentManifest(client, "poll"))
                polls += 1
                let missing = try await Self.missingObjects(client, manifest, known: &present)
                #expect(missing.isEmpty, "version \(manifest.version) names missing objects: \(missing.prefix(5))")
                checked[manifest.version, default: 0] += 1
                if done { break }
            }
            let out = try #require(run.output)
            #expect(out.status == 0, "\(out.stderr)")
            // Both versions seen (how often depends on how busy the machine is).
            #expect(checked[v1.version] ?? 0 >= 1, "polled \(polls) times: \(checked)")
            #expect(checked[v2.version] ?? 0 >= 1, "polled \(polls) times: \(checked)")
        }
    }

    /// The publish running on its own thread: its output, once `done`.
    final class PublishRun: @unchecked Sendable {
        var output: Harness.Output?
        let done = Atomic<Bool>(false)
    }

    /// The objects (and variants) a manifest names that the bucket lacks (HEAD each).
    static func missingObjects(_ client: S3Client, _ manifest: Manifest, known: inout Set<String>) async throws -> [String] {
        var missing: [String] = []
        for entry in manifest.entries {
            for path in [entry.objectPath, entry.gzipObjectPath, entry.brotliObjectPath].compactMap({ $0 }) where !known.contains(path) {
                if try await client.exists("poll/" + path) { known.insert(path) } else { missing.append(path) }
            }
        }
        return missing
    }

    @Test("503s are retried and the publish succeeds; 500s after the 5th PUT fail it: the previous version stays, the lock goes")
    func faults() async throws {
        try await withStore("s3-faults") { server, fixture, client in
            let script = String(decoding: try FileIO.read(Harness.repoRoot + "/Tests/ObjectStoreTests/fault_proxy.py"), as: UTF8.self)
            let v1 = try fixture.build()
            let flaky = try PythonServer.start(script, args: ["\(server.port)", "flaky", "7"])
            defer { flaky.stop() }
            let ok = try fixture.publish(server, "s3://\(Self.bucket)/site", env: ["AWS_ENDPOINT_URL": flaky.url])
            #expect(ok.status == 0, "\(ok.stderr)")
            let stats = try Harness.run("/usr/bin/env", ["curl", "-s", flaky.url + "/__stats"]).stdout
            let faults = try #require(try JSONSerialization.jsonObject(with: Data(stats.utf8)) as? [String: Int])
            #expect(faults["faults", default: 0] >= 50, "\(stats)")  // every 7th of ~530 keys
            #expect(try await Self.currentManifest(client, "site")?.version == v1.version)

            try fixture.write("images/new.bin", PublishFixture.noise(4000, seed: 1))
            let v2 = try fixture.build()
            let failing = try PythonServer.start(script, args: ["\(server.port)", "fail-after", "5"])
            defer { failing.stop() }
            let failed = try fixture.publish(server, "s3://\(Self.bucket)/site", env: ["AWS_ENDPOINT_URL": failing.url])
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("InternalError"), "\(failed.stderr)")
            #expect(failed.stderr.contains("version \(v1.version) is still the current one"), "\(failed.stderr)")
            #expect(try await Self.currentManifest(client, "site")?.version == v1.version)
            #expect(try await client.get("site/.folio-publish-lock") == nil)
            // Straight to the store it goes through, and only what the failed run did not upload.
            let retried = try fixture.publish(server, "s3://\(Self.bucket)/site")
            #expect(retried.status == 0, "\(retried.stderr)")
            #expect(try await Self.currentManifest(client, "site")?.version == v2.version)
        }
    }

    @Test("a multipart upload whose part fails is aborted: no upload is left open, nothing is published")
    func multipartAbort() async throws {
        try await withStore("s3-multipart") { server, fixture, client in
            try fixture.write("images/large.bin", PublishFixture.noise(11 << 20, seed: 3))
            try fixture.build()
            let script = String(decoding: try FileIO.read(Harness.repoRoot + "/Tests/ObjectStoreTests/fault_proxy.py"), as: UTF8.self)
            let proxy = try PythonServer.start(script, args: ["\(server.port)", "fail-part", "2"])
            defer { proxy.stop() }
            let out = try fixture.publish(
                server, "s3://\(Self.bucket)/site", ["--multipart-threshold", "5M", "--part-size", "5M"], env: ["AWS_ENDPOINT_URL": proxy.url])
            #expect(out.status == 1)
            #expect(out.stderr.contains("could not upload part 2 of") && out.stderr.contains("nothing was published there before"), "\(out.stderr)")
            let uploads = try await client.send(S3Request(method: "GET", key: "", query: [("uploads", "")]))
            #expect(uploads.status == 200)
            #expect(XMLText.all("UploadId", in: String(decoding: uploads.body, as: UTF8.self)).isEmpty, "\(String(decoding: uploads.body, as: UTF8.self))")
            #expect(try await Self.currentManifest(client, "site") == nil)
            #expect(try await client.get("site/.folio-publish-lock") == nil)
        }
    }

    @Test("a held lock names its holder and refuses; a stale one is broken with --break-lock; the lock is released after")
    func lock() async throws {
        try await withStore("s3-lock") { server, fixture, client in
            try fixture.build()
            let key = "site/.folio-publish-lock"
            let fresh = PublishLock.Holder(token: "t1", owner: "alice", host: "build-7", pid: 4242, since: Date().addingTimeInterval(-30))
            try await client.put(key, body: fresh.bytes)
            for args in [[], ["--break-lock"]] {
                let out = try fixture.publish(server, "s3://\(Self.bucket)/site", args)
                #expect(out.status == 2)
                #expect(out.stderr.contains("held by alice (pid 4242 on build-7) since"), "\(out.stderr)")
            }
            var stale = fresh
            stale.since = Date().addingTimeInterval(-7200)
            try await client.put(key, body: stale.bytes)
            let refused = try fixture.publish(server, "s3://\(Self.bucket)/site", ["--lock-timeout", "3600"])
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("2 h ago") && refused.stderr.contains("run again with --break-lock"), "\(refused.stderr)")
            let broken = try fixture.publish(server, "s3://\(Self.bucket)/site", ["--break-lock"])
            #expect(broken.status == 0, "\(broken.stderr)")
            #expect(try await client.get(key) == nil)
        }
    }

    @Test("through a store that ignores If-None-Match, a held lock is still refused and left as it was")
    func lockWithoutConditionalWrites() async throws {
        try await withStore("s3-lock-noinm") { server, fixture, client in
            try fixture.build()
            let script = String(decoding: try FileIO.read(Harness.repoRoot + "/Tests/ObjectStoreTests/fault_proxy.py"), as: UTF8.self)
            let proxy = try PythonServer.start(script, args: ["\(server.port)", "no-conditions", "0"])
            defer { proxy.stop() }
            let held = PublishLock.Holder(token: "t2", owner: "bob", host: "ci-3", pid: 77, since: Date())
            try await client.put("site/.folio-publish-lock", body: held.bytes)
            let out = try fixture.publish(server, "s3://\(Self.bucket)/site", env: ["AWS_ENDPOINT_URL": proxy.url])
            #expect(out.status == 2)
            #expect(out.stderr.contains("held by bob (pid 77 on ci-3)"), "\(out.stderr)")
            #expect(try await client.get("site/.folio-publish-lock").flatMap(PublishLock.Holder.init(bytes:))?.token == held.token)
            // Free, it is taken, read back, and released.
            try await client.delete("site/.folio-publish-lock")
            let ok = try fixture.publish(server, "s3://\(Self.bucket)/site", env: ["AWS_ENDPOINT_URL": proxy.url])
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(try await client.get("site/.folio-publish-lock") == nil)
        }
    }

    @Test("a directory older than the bucket is refused (exit 3) unless --force")
    func rollback() async throws {
        try await withStore("s3-rollback") { server, fixture, client in
            try fixture.build()
            let old = fixture.dir + "/old"
            try FileManager.default.copyItem(atPath: fixture.root, toPath: old)
            try fixture.write("images/new.bin", PublishFixture.noise(4000, seed: 2))
            let v2 = try fixture.build()
            try #require(try fixture.publish(server, "s3://\(Self.bucket)/site").status == 0)
            let env = server.environment()
            let refused = try Harness.run(Harness.binary("folio-build"), ["publish", old, "s3://\(Self.bucket)/site"], env: env)
            #expect(refused.status == 3)
            #expect(refused.stderr.contains("is at version \(v2.version), \(old) at \(v2.version - 1)"), "\(refused.stderr)")
            #expect(try await Self.currentManifest(client, "site")?.version == v2.version)
            let forced = try Harness.run(Harness.binary("folio-build"), ["publish", old, "s3://\(Self.bucket)/site", "--force"], env: env)
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(try await Self.currentManifest(client, "site")?.version == v2.version - 1)
        }
    }

    @Test("errors say what is wrong: URL, directory, credentials, bucket")
    func errors() async throws {
        try await withStore("s3-errors") { server, fixture, _ in
            try fixture.build()
            let cases: [(args: [String], env: [String: String], says: String)] = [
                (["publish", fixture.root, "s3:/x"], [:], "is not an s3:// URL"),
                (["publish", fixture.root, "s3://"], [:], "names no bucket"),
                (["publish", fixture.content, "s3://\(Self.bucket)/p"], [:], "is not a published directory"),
                (["publish", fixture.root, "s3://\(Self.bucket)/p"], ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""], "no credentials"),
                (["publish", fixture.root, "s3://no-such-bucket/p"], [:], "there is no bucket 'no-such-bucket'"),
                (["publish", fixture.root, "s3://\(Self.bucket)/p"], ["AWS_ENDPOINT_URL": "http://127.0.0.1:1"], "could not reach the store at http://127.0.0.1:1"),
            ]
            for c in cases {
                let out = try Harness.run(Harness.binary("folio-build"), c.args, env: server.environment().merging(c.env) { $1 })
                #expect(out.status == 1, "\(c.args): \(out.stderr)")
                #expect(out.stderr.hasPrefix("folio-build: error: ") && out.stderr.contains(c.says), "\(c.args): \(out.stderr)")
                #expect(!out.stderr.contains("ObjectStoreError") && !out.stderr.contains("/Sources/"), "\(out.stderr)")
            }
        }
    }
}
