import FolioObjectStore
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// `folio-build prune s3://…` against moto: three versions published, pruned to the last two;
/// the bucket then holds what a prune of the same directory leaves, and a client syncs from it.
@Suite("folio-build prune: object storage", .serialized, .timeLimit(.minutes(10)))
struct PruneObjectStoreTests {
    static let bucket = "folio-prune"

    @Test("refused under a held lock; a dry run; --keep 2 leaves what a local prune leaves; a client syncs through a tier")
    func keepTwo() async throws {
        let server = try ObjectStoreServer.moto()
        defer { server.stop() }
        let fixture = PublishFixture("s3-prune")
        defer { fixture.cleanup() }
        try await server.createBucket(Self.bucket)
        let destination = "s3://\(Self.bucket)/site"
        var word = "summer’s day"
        for version in 1...3 {
            if version > 1 {
                try Self.edit(fixture, word, "day number \(version)")
                word = "day number \(version)"
            }
            try fixture.build()
            let r = try fixture.publish(server, destination)
            try #require(r.status == 0, "\(r.stderr)")
        }
        let client = server.client(Self.bucket)
        let before = try await keys(client)
        #expect(before.keys.contains("manifests/1.plist"))

        let held = PublishLock.Holder(token: "t1", owner: "carol", host: "w-1", pid: 9, since: Date())
        #expect(try await client.putIfAbsent("site/.folio-publish-lock", body: held.bytes))
        let locked = try prune(server, [destination, "--keep", "2"])
        #expect(locked.status == 2 && locked.stderr.contains("held by carol (pid 9 on w-1)"), "\(locked.stderr)")
        try await client.delete("site/.folio-publish-lock")

        // The local directory holds the same files: its prune says what the bucket must keep.
        let copy = fixture.dir + "/copy"
        try FileManager.default.copyItem(atPath: fixture.root, toPath: copy)
        let local = try Harness.run(Harness.binary("folio-build"), ["prune", copy, "--keep", "2"])
        try #require(local.status == 0, "\(local.stderr)")
        let expected = Set(PublishFixture.published(copy).keys)
        let gone = Set(before.keys).subtracting(expected)
        #expect(gone.contains("manifests/1.plist") && gone.count > 5, "\(gone.sorted())")

        let dry = try prune(server, [destination, "--keep", "2", "--dry-run"])
        #expect(dry.status == 0 && dry.stdout.contains("would remove \(gone.count) files"), "\(dry.stdout) \(dry.stderr)")
        #expect(try await keys(client) == before, "a refused prune or a dry run changed the bucket")

        let pruned = try prune(server, [destination, "--keep", "2"])
        let bytes = gone.reduce(0) { $0 + (before[$1] ?? 0) }
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stdout.contains("pruned \(destination): \(gone.count) files removed (\(bytes) bytes)"), "\(pruned.stdout)")
        #expect(Set(try await keys(client).keys) == expected)
        await client.shutdown()
        try syncThroughTier(server, fixture)
    }

    /// The keys under `site/` (relative) and their sizes.
    private func keys(_ client: S3Client) async throws -> [String: Int] {
        var out: [String: Int] = [:]
        for (key, size) in try await client.list(prefix: "site/") { out[String(key.dropFirst("site/".count))] = size }
        return out
    }

    private func prune(_ server: ObjectStoreServer, _ args: [String]) throws -> Harness.Output {
        try Harness.run(Harness.binary("folio-build"), ["prune"] + args, env: server.environment())
    }

    /// A fresh client syncs through a tier over the pruned bucket and reads the last edit.
    private func syncThroughTier(_ server: ObjectStoreServer, _ fixture: PublishFixture) throws {
        let tier = try EdgeProcess.start(
            root: fixture.root, args: ["--origin", server.endpoint + "/\(Self.bucket)/site", "--cache-dir", fixture.dir + "/tier-cache"])
        defer { tier.stop() }
        let cache = fixture.dir + "/client"
        let sync = try Harness.run(Harness.binary("folio"), ["--cache-dir", cache, "--edge", tier.baseURL, "sync"])
        #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        let read = try Harness.run(Harness.binary("folio"), ["--cache-dir", cache, "--edge", ClientUnreachable.url, "read", "sonnet", "18"])
        #expect(read.stdout.contains("day number 3"), "\(read.stdout) \(read.stderr)")
    }

    private static func edit(_ fixture: PublishFixture, _ old: String, _ new: String) throws {
        let path = fixture.content + "/sonnets/018.txt"
        let text = String(decoding: try FileIO.read(path), as: UTF8.self)
        #expect(text.contains(old))
        try FileIO.writeAtomically(Array(text.replacingOccurrences(of: old, with: new).utf8), to: path)
    }
}
