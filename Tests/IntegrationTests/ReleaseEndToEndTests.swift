import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// The whole release flow with the real programs: a signed beta channel, a promote as a 10%
/// rollout, a halt that reaches clients within one manifest lifetime, a rollback, and a
/// tampered share refused; every client behind a cache tier.
@Suite("releases end to end: signed, through a cache tier", .serialized)
struct ReleaseEndToEndTests {
    struct Setup {
        let root: ClientRoot
        let keys: SigningKeys
        let signArgs: [String]

        /// `folio-build ARGS --output ROOT` signed; throws unless it succeeds.
        func build(_ args: [String], content: Bool = true) throws {
            let base = content ? ["--content", root.content] : []
            let out = try Harness.run(Harness.binary("folio-build"), args + base + ["--output", root.root, "-q"] + signArgs, env: ClientTest.buildEnv)
            guard out.status == 0 else { throw HarnessError("folio-build \(args): \(out.stderr)") }
        }

        func release(_ args: [String]) throws { try build(["release"] + args, content: false) }

        /// `folio ARGS` through `edge`, trusting the root key, with its own cache per install.
        func folio(_ args: [String], install: String, edge: String) throws -> Harness.Output {
            try ClientTest.folio(
                args + ["--trust", keys.pub("root"), "--install-id", install], cache: root.dir + "/cache-" + install, edge: edge)
        }

        /// The `release` of `folio sync --json` (nil for the defaults), failing on any error.
        func syncedRelease(_ install: String, edge: String, channel: String? = nil, force: Bool = true) throws -> (version: Int?, release: Int?) {
            let out = try folio(["sync", "--json"] + (force ? ["--force"] : []) + (channel.map { ["--channel", $0] } ?? []), install: install, edge: edge)
            guard out.status == 0 else { throw HarnessError("folio sync (\(install)): \(out.status) \(out.stderr)") }
            let json = try ClientTest.json(out)
            return (json["versionAfter"]?.intValue, json["release"]?.intValue)
        }

        /// Syncs every 200 ms until the install has `want` (a tier may hold the manifest for its
        /// max-age); returns how long that took, or throws with what the last sync said.
        func syncUntil(
            _ want: (version: Int?, release: Int?), _ install: String, edge: String, force: Bool = true, limit: Duration = .seconds(30),
            explain: () -> String = { "" }
        ) async throws -> Duration {
            let start = ContinuousClock.now
            var last = ""
            while ContinuousClock.now - start < limit {
                let args = ["sync", "--json"] + (force ? ["--force"] : [])
                let out = try folio(args, install: install, edge: edge)
                let json = try? ClientTest.json(out)
                if out.status == 0, json?["versionAfter"]?.intValue == want.version, json?["release"]?.intValue == want.release {
                    return ContinuousClock.now - start
                }
                last = "exit \(out.status): \(out.stdout) \(out.stderr)"
                try await Task.sleep(for: .milliseconds(200))
            }
            throw HarnessError("\(install) did not reach \(want) in \(limit); the last sync: \(last)\(explain())")
        }
    }

    static func setup(_ label: String) throws -> Setup {
        let keys = try SigningKeys.make(in: Harness.tempDir(label + "-keys"), ["root", "ci"])
        let list = try keys.authorize(["ci"], version: 1)
        let args = keys.buildArgs(["ci"], keyList: list)
        let root = try ClientRoot.make(label, publishArgs: args)
        return Setup(root: root, keys: keys, signArgs: args)
    }

    /// Ids inside and outside a release's share of the production manifest.
    static func installs(_ root: ClientRoot, release: Int, basisPoints: Int) throws -> (inside: String, outside: String) {
        let m = try root.manifest()
        let ids = (0..<500).map { "e2e-install-\(100_000 + $0)" }
        return (
            try #require(ids.first { m.rolloutBucket(installID: $0, release: release) < basisPoints }),
            try #require(ids.first { m.rolloutBucket(installID: $0, release: release) >= basisPoints })
        )
    }

    @Test("beta, a promote as a 10% rollout, a halt within one manifest lifetime, a rollback; a changed share refused")
    func flow() async throws {
        let s = try Self.setup("release-e2e")
        defer {
            s.root.cleanup()
            Harness.cleanup(FileIO.parent(of: s.keys.dir))
        }
        try s.root.replace(in: 18, "summer’s day", with: "beta day")
        try s.build(["--channel", "beta"])
        let origin = try EdgeProcess.start(root: s.root.root, args: ClientTest.edgeArgs + ["--manifest-max-age", "1", "--trust", s.keys.pub("root")])
        defer { origin.stop() }
        let tier = try EdgeProcess.start(root: s.root.root, args: ["--origin", origin.baseURL, "--threads", "1"])
        defer { tier.stop() }

        // A beta install reads beta's content, signed and verified, through the tier.
        #expect(try s.syncedRelease("beta-tester-000001", edge: tier.baseURL, channel: "beta").version == 1)
        let read = try s.folio(["read", "sonnet", "18", "--offline", "--channel", "beta"], install: "beta-tester-000001", edge: tier.baseURL)
        #expect(read.stdout.contains("beta day"), "\(read.stdout) \(read.stderr)")

        // Promoted to production for 10% of installs: one inside, one outside.
        try s.release(["promote", "--from", "beta", "--to", "production", "--rollout", "10"])
        try origin.requireVersion(2)
        let (inside, outside) = try Self.installs(s.root, release: 2, basisPoints: 1000)
        #expect(try s.syncedRelease(inside, edge: tier.baseURL) == (2, 2))
        #expect(try s.syncedRelease(outside, edge: tier.baseURL) == (2, nil))
        let status = try s.folio(["status"], install: inside, edge: tier.baseURL)
        #expect(status.stdout.contains("release:     release 2") && status.stdout.contains("release 2 applies: bucket"), "\(status.stdout)")

        // A halt: the install inside comes back by itself, without --force, once its copy's
        // lifetime (1 s) is over and the tier has revalidated (it may serve the stale head once,
        // stale-while-revalidate): each sync waits out the lifetime, the install is back by the third.
        try s.release(["halt"])
        try origin.requireVersion(3)
        var seen: [String] = []
        while seen.count < 3, seen.last != "3 nil" {
            try await Task.sleep(for: .milliseconds(1100))
            let now = try s.syncedRelease(inside, edge: tier.baseURL, force: false)
            seen.append("\(now.version.map(String.init) ?? "nil") \(now.release.map(String.init) ?? "nil")")
        }
        #expect(seen.last == "3 nil", "syncs after the halt, each a lifetime apart, gave (version release): \(seen)")

        // A rollback is a newer version with version 1's entries: taken, never a downgrade.
        try s.release(["rollback", "--to", "1"])
        try origin.requireVersion(4)
        // The tier serves a new manifest once it has prefetched its objects, for at most 30 s
        // (HTTPCache.prefetchLimit), and the stale one meanwhile; a full `make test` once took
        // longer than that here, so the wait goes past it, and a failure says what the tier did.
        _ = try await s.syncUntil((4, nil), outside, edge: tier.baseURL, limit: .seconds(45)) {
            let head = try? RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            let log = (try? String(contentsOfFile: tier.logPath, encoding: .utf8)) ?? ""
            return "; the tier's manifest now: \(head.map { "\($0.status) \($0.header("Cache-Status") ?? "")" } ?? "no answer")"
                + "; the tier's log ends: \(log.split(separator: "\n").suffix(15).joined(separator: "\n"))"
        }
        let poem = try s.folio(["read", "sonnet", "18", "--offline"], install: outside, edge: tier.baseURL)
        #expect(poem.stdout.contains("summer’s day"), "\(poem.stdout)")

        // A tampered share (a valid signature over other bytes) is refused like any forgery.
        try s.release(["promote", "--from", "beta", "--to", "production", "--rollout", "10"])
        try origin.requireVersion(5)
        let bytes = try FileIO.read(s.root.root + "/manifest.plist")
        let signed = try #require(try SignedManifest.decode(bytes))
        var forged = signed.manifest
        forged.releases[0].rolloutBasisPoints = 10_000
        let evil = s.root.dir + "/evil"
        try FileIO.makeDirectory(evil)
        try FileIO.writeAtomically(
            SignedReleaseTests.envelope(BinaryPlist.encode(forged.plist), signatures: signed.signatures, keyList: signed.keyList), to: evil + "/manifest.plist")
        let server = try PythonServer.staticFiles(root: evil)
        defer { server.stop() }
        let refused = try s.folio(["sync", "--force", "--no-delta"], install: outside, edge: server.url)
        #expect(refused.status == 11, "\(refused.status) \(refused.stderr)")
    }
}
