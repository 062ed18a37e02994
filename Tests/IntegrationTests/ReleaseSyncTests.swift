import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// Channels, staged rollouts, halts and rollbacks made by the real `folio-build`, synced
/// in-process through ``FakeEdge`` by installs whose buckets are known.
@Suite("releases: channels, rollouts, halts, rollbacks")
struct ReleaseSyncTests {
    /// `folio-build release ARGS --output ROOT`; throws unless it succeeds.
    @discardableResult
    static func release(_ root: ClientRoot, _ args: [String]) throws -> String {
        let out = try Harness.run(Harness.binary("folio-build"), ["release"] + args + ["--output", root.root, "-q"], env: ClientTest.buildEnv)
        guard out.status == 0 else { throw HarnessError("folio-build release \(args): \(out.status) \(out.stderr)") }
        return out.stdout
    }

    static func sync(_ root: ClientRoot, cache: String, install: String, channel: String = Channel.production, context: ReleaseContext = ReleaseContext())
        async throws -> SyncReport
    {
        var s = SyncSettings(edge: "http://edge.invalid", transport: FakeEdge(root: root.root))
        s.force = true
        s.channel = channel
        s.installID = install
        s.context = context
        return try await Syncer(cache: ContentCache(dir: cache, edge: s.edge, channel: channel), settings: s).run()
    }

    /// Sonnet 18's object as the install holding `cache` sees it.
    static func sonnet18(_ cache: String, channel: String = Channel.production) throws -> String {
        let held = try #require(ContentCache(dir: cache, edge: "http://edge.invalid", channel: channel).current())
        let entry = try #require(held.manifest.entry("sonnets/018.plist"))
        let bytes = try #require(try ContentCache(dir: cache).object(entry))
        return try PlistValue.decode(bytes).readableText
    }

    /// Two install ids for `release` of the root's manifest: one inside its share, one outside.
    static func installs(_ root: ClientRoot, release: Int, basisPoints: Int) throws -> (inside: String, outside: String) {
        let m = try root.manifest()
        let ids = (0..<400).map { "install-\(1_000_000 + $0)" }
        let inside = try #require(ids.first { m.rolloutBucket(installID: $0, release: release) < basisPoints })
        let outside = try #require(ids.first { m.rolloutBucket(installID: $0, release: release) >= 2500 })
        return (inside, outside)
    }

    @Test("a 10% rollout reaches the installs in its share by delta; a halt brings them back; at 100% everyone has it")
    func stagedRollout() async throws {
        let root = try ClientRoot.make("release-rollout")
        defer { root.cleanup() }
        try root.replace(in: 18, "summer’s day", with: "staged day")
        try root.publish(["--rollout", "10"])
        let (inside, outside) = try Self.installs(root, release: 2, basisPoints: 1000)
        let (a, b) = (root.dir + "/cache-in", root.dir + "/cache-out")
        // Both start at version 2 from nothing, then take every change by delta.
        let firstIn = try await Self.sync(root, cache: a, install: inside)
        #expect(firstIn.release == 2 && firstIn.versionAfter == 2)
        #expect(try Self.sonnet18(a).contains("staged day"))
        #expect(try await Self.sync(root, cache: b, install: outside).release == nil)
        #expect(try Self.sonnet18(b).contains("summer’s day"))
        #expect(ContentCache(dir: a).current()?.state.releaseReasons.last?.hasPrefix("release 2 applies") == true)

        try Self.release(root, ["rollout", "--percent", "25"])
        let raised = try await Self.sync(root, cache: a, install: inside)
        #expect(raised.release == 2 && raised.objectsFetched == 0 && raised.method == "delta", "\(raised)")

        try Self.release(root, ["halt"])
        let halted = try await Self.sync(root, cache: a, install: inside)
        #expect(halted.release == nil && halted.versionAfter == 4)
        #expect(try Self.sonnet18(a).contains("summer’s day"))

        try Self.release(root, ["resume"])
        try Self.release(root, ["rollout", "--percent", "100"])
        #expect(try root.manifest().releases.isEmpty, "a release for everyone at 100% becomes the defaults")
        let everyone = try await Self.sync(root, cache: b, install: outside)
        #expect(everyone.versionAfter == 6 && everyone.method == "delta" && everyone.objectsPatched >= 1, "\(everyone)")
        #expect(try Self.sonnet18(b).contains("staged day"))
        let noOp = try await Self.sync(root, cache: b, install: outside)
        #expect(noOp.result == .notModified && noOp.requests == 1)
    }

    @Test("an install joining a release rebuilds its objects from the delta; rollback republishes old entries as a newer version")
    func deltaIntoReleaseAndRollback() async throws {
        let root = try ClientRoot.make("release-delta")
        defer { root.cleanup() }
        let cache = root.dir + "/cache"
        let install = "install-for-delta-0001"
        _ = try await Self.sync(root, cache: cache, install: install, context: ReleaseContext(platform: "ios"))
        try root.replace(in: 18, "summer’s day", with: "targeted day")
        try root.publish(["--target", "platform=ios", "--critical"])
        let android = try await Self.sync(root, cache: root.dir + "/cache-android", install: install, context: ReleaseContext(platform: "android"))
        #expect(android.release == nil && android.versionAfter == 2 && !android.critical, "only the release is critical")
        let ios = try await Self.sync(root, cache: cache, install: install, context: ReleaseContext(platform: "ios"))
        #expect(ios.release == 2 && ios.result == .updated && ios.objectsPatched >= 1 && ios.objectsFetched == 0, "\(ios)")
        #expect(ios.critical && ios.message.contains("critical: apply it at once"), "\(ios.message)")
        #expect(try Self.sonnet18(cache).contains("targeted day"))

        try Self.release(root, ["rollback", "--to", "1"])
        let back = try await Self.sync(root, cache: cache, install: install, context: ReleaseContext(platform: "ios"))
        #expect(back.versionAfter == 3 && back.release == nil)
        #expect(try Self.sonnet18(cache).contains("summer’s day"))
        let m = try root.manifest()
        let first = try Manifest(bytes: try FileIO.read(root.root + "/manifests/1.plist"))
        #expect(m.version == 3 && m.releases.isEmpty && m.entries == first.entries)
    }

    @Test("a channel has its own versions over shared objects; promote publishes them into production; a manifest of another channel is refused")
    func channelsAndPromote() async throws {
        let root = try ClientRoot.make("release-channels")
        defer { root.cleanup() }
        try root.replace(in: 18, "summer’s day", with: "beta day")
        try root.publish(["--channel", "beta"])
        let cache = root.dir + "/cache"
        let beta = try await Self.sync(root, cache: cache, install: "install-0000000000000001", channel: "beta")
        #expect(beta.versionAfter == 1 && beta.result == .updated)
        #expect(try Self.sonnet18(cache, channel: "beta").contains("beta day"))
        #expect(FileIO.exists(root.root + "/channels/beta/manifest.plist") && !FileIO.exists(root.root + "/channels/beta/objects"))
        // Production is another environment of the same cache.
        _ = try await Self.sync(root, cache: cache, install: "install-0000000000000001")
        #expect(try Self.sonnet18(cache).contains("summer’s day"))

        try Self.release(root, ["promote", "--from", "beta", "--to", "production"])
        let promoted = try await Self.sync(root, cache: cache, install: "install-0000000000000001")
        #expect(promoted.versionAfter == 2 && promoted.objectsFetched == 0, "every object is held from beta: \(promoted)")
        #expect(promoted.method == "delta" && promoted.requests == 2, "a promote is a delta from production's version 1: \(promoted)")
        #expect(try Self.sonnet18(cache).contains("beta day"))

        // An edge serving beta's manifest as production's is refused.
        try FileIO.writeAtomically(try FileIO.read(root.root + "/channels/beta/manifest.plist"), to: root.root + "/manifest.plist")
        do {
            _ = try await Self.sync(root, cache: root.dir + "/cache-2", install: "install-0000000000000002")
            Issue.record("production took beta's manifest")
        } catch let error as FolioError {
            #expect(error.message.contains("channel beta's, not production's"), "\(error.message)")
        }
    }

    @Test("folio diff compares channels (#NAME) and releases (+N), and reports releases added")
    func diffChannelsAndReleases() throws {
        let root = try ClientRoot.make("release-diff")
        defer { root.cleanup() }
        try root.replace(in: 18, "summer’s day", with: "beta day")
        try root.publish(["--channel", "beta"])
        try root.publish(["--rollout", "10"])
        func diff(_ a: String, _ b: String) throws -> Harness.Output {
            try ClientTest.folio(["diff", a, b], cache: root.dir + "/cache", edge: ClientTest.unreachableEdge)
        }
        let channels = try diff(root.root, root.root + "#beta")
        #expect(channels.status == 1 && channels.stdout.contains("~ sonnets/018.plist") && channels.stdout.contains("beta day"), "\(channels.stdout)")
        let release = try diff(root.root, root.root + "+2")
        #expect(release.status == 1 && release.stdout.contains("beta day") && !release.stdout.contains("r release"), "\(release.stdout)")
        let versions = try diff(root.root + "/manifests/1.plist", root.root + "/manifests/2.plist")
        #expect(versions.status == 1 && versions.stdout.contains("r release 2: none → 10%"), "\(versions.stdout)")
        let noChannel = try diff(root.root + "#nope", root.root)
        #expect(noChannel.status == 2 && noChannel.stderr.contains("has no channel nope; it has production, beta"), "\(noChannel.stderr)")
        let noRelease = try diff(root.root + "+9", root.root)
        #expect(noRelease.status == 2 && noRelease.stderr.contains("has no release 9; it has 2"), "\(noRelease.stderr)")
    }
}
