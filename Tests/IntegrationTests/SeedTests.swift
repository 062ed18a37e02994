import FolioTestSupport
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Testing

/// The bundled seed: reproducible from content/, and never read over a newer verified sync.
@Suite("seed")
struct SeedTests {
    /// `folio read sonnet N --verbose` and `folio status --json` with `FOLIO_SEED` set.
    private func reading(_ cache: String, edge: String, seed: String?) throws -> (status: String?, stderr: String, text: String) {
        let env = seed.map { ["FOLIO_SEED": $0] } ?? [:]
        let status = try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: cache, edge: edge, env: env))
        let read = try ClientTest.folio(["read", "sonnet", "18", "--verbose", "--offline"], cache: cache, edge: edge, env: env)
        #expect(read.status == 0, "\(read.stderr)")
        return (status["reading"]?.stringValue, read.stderr, read.stdout)
    }

    @Test("the committed seed is byte for byte a fresh publish of content/")
    func committedSeedIsReproducible() throws {
        let dir = Harness.tempDir("seed-fresh")
        defer { Harness.cleanup(dir) }
        let git = try Harness.run("/usr/bin/git", ["-C", Harness.repoRoot, "log", "-1", "--format=%ct", "--", "content"])
        let epoch = git.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(git.status == 0 && Int(epoch) != nil, "git log: \(git.stderr)")
        let out = try Harness.run(
            Harness.binary("folio-build"),
            ["--content", Harness.repoRoot + "/content", "--output", dir + "/public", "--quiet", "--seed", dir + "/seed.folioseed"],
            env: ["SOURCE_DATE_EPOCH": epoch, "FOLIO_SOURCE_REVISION": ""])
        try #require(out.status == 0, "\(out.stderr)")
        let fresh = try FileIO.read(dir + "/seed.folioseed")
        let committed = try FileIO.read(Harness.repoRoot + "/Sources/Client/Resources/seed.folioseed")
        #expect(fresh == committed, "Sources/Client/Resources/seed.folioseed is out of date with content/: run `make seed`")
        // And it is what the client reads: version 1 of its own history.
        let seed = try Manifest(bytes: try SeedArchive.decode(committed).manifestBytes)
        #expect(seed.version == 1)
        #expect(seed.history?.count == 32)
    }

    @Test("a sync of another publish history is read, even when the seed's version number is higher")
    func otherHistoryNeverHidesSync() throws {
        // The seed: version 4 of a history published elsewhere.
        let other = try ClientRoot.make("seed-other", floor: 4) { r in
            try r.replace(in: 18, "summer’s day", with: "seed day")
        }
        defer { other.cleanup() }
        let seedFile = other.dir + "/seed.folioseed"
        try other.publish(seed: seedFile)
        #expect(try other.manifest().version == 4)

        // Here: version 1, synced; a sonnet edited and published as version 2; synced again.
        let root = try ClientRoot.make("seed-mine", floor: 1)
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        #expect(try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL).status == 0)
        try root.replace(in: 18, "summer’s day", with: "winter's night")
        try root.publish()
        try edge.requireVersion(2)
        #expect(try ClientTest.folio(["sync", "--force"], cache: cache, edge: edge.baseURL).status == 0)
        #expect(try root.manifest().history != (try other.manifest().history))

        for seed in [seedFile, nil] {  // the version-4 seed, and the client's bundled one
            let r = try reading(cache, edge: ClientTest.unreachableEdge, seed: seed)
            #expect(r.status == "cache", "seed \(seed ?? "bundled")")
            #expect(r.stderr.contains("version 2 from the cache"), "\(r.stderr)")
            #expect(r.text.contains("winter's night"))
        }
    }

    @Test("a newer seed of the same history is read over an older cache, an older one is not")
    func sameHistoryComparesVersions() throws {
        let root = try ClientRoot.make("seed-same", floor: 1)
        defer { root.cleanup() }
        let seed1 = root.dir + "/seed-1.folioseed"
        try root.publish(seed: seed1)  // unchanged: still version 1
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        #expect(try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL).status == 0)

        // Version 2 published, and a seed made of it; the cache still holds version 1.
        try root.replace(in: 18, "summer’s day", with: "winter's night")
        let seed2 = root.dir + "/seed-2.folioseed"
        try root.publish(seed: seed2)
        try edge.requireVersion(2)
        let newer = try reading(cache, edge: ClientTest.unreachableEdge, seed: seed2)
        #expect(newer.status == "seed")
        #expect(newer.stderr.contains("version 2 from the seed"), "\(newer.stderr)")
        #expect(newer.text.contains("winter's night"))
        // The version-1 seed is not newer than the version-1 cache.
        #expect(try reading(cache, edge: ClientTest.unreachableEdge, seed: seed1).status == "cache")

        // Synced to version 3: both seeds are older, the cache is read.
        try root.replace(in: 18, "winter's night", with: "autumn's eve")
        try root.publish()
        try edge.requireVersion(3)
        #expect(try ClientTest.folio(["sync", "--force"], cache: cache, edge: edge.baseURL).status == 0)
        for seed in [seed1, seed2] {
            let r = try reading(cache, edge: ClientTest.unreachableEdge, seed: seed)
            #expect(r.status == "cache")
            #expect(r.text.contains("autumn's eve"))
        }
    }
}
