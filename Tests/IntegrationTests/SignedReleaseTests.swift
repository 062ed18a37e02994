import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Keys made with the real `folio keys`, in a directory beside (never inside) content and public.
struct SigningKeys {
    let dir: String

    static func make(in base: String, _ names: [String]) throws -> SigningKeys {
        let keys = SigningKeys(dir: base + "/keys")
        try FileIO.makeDirectory(keys.dir)
        for name in names {
            let out = try Harness.run(ClientTest.folioPath, ["keys", "generate", keys.dir + "/" + name])
            guard out.status == 0 else { throw HarnessError("folio keys generate \(name): \(out.stderr)") }
        }
        return keys
    }

    func pub(_ name: String) -> String { "\(dir)/\(name).pub" }
    func key(_ name: String) -> String { "\(dir)/\(name).key" }
    func secret(_ name: String) throws -> SecretKey { try SecretKey(contentsOf: key(name)) }

    /// `folio keys authorize`: a key list signed by `root`; returns its path.
    @discardableResult
    func authorize(
        _ signers: [String], version: Int, threshold: Int = 1, revoke: [String] = [], root: String = "root", validFor: String = "30d"
    ) throws -> String {
        let output = "\(dir)/keylist-\(root)-\(version).plist"
        var args = ["keys", "authorize", "--root", key(root)] + signers.map(pub)
        args += ["--threshold", String(threshold), "--list-version", String(version), "--valid-for", validFor, "--output", output]
        if !revoke.isEmpty { args += ["--revoke"] + revoke.map(pub) }
        let out = try Harness.run(ClientTest.folioPath, args)
        guard out.status == 0 else { throw HarnessError("folio keys authorize: \(out.stderr)") }
        return output
    }

    func signedList(_ path: String) throws -> SignedKeyList { try SignedKeyList(bytes: try FileIO.read(path)) }

    /// `folio-build` arguments that sign with `signers` under `keyList`.
    func buildArgs(_ signers: [String], keyList: String, validFor: String? = nil) -> [String] {
        ["--signing-key"] + signers.map(key) + ["--key-list", keyList] + (validFor.map { ["--valid-for", $0] } ?? [])
    }
}

/// A published root signed from its first version, a client that trusts its root, and a
/// malicious edge (Python's static server, which checks nothing) to serve forged manifests.
struct SignedSetup {
    let root: ClientRoot
    let keys: SigningKeys
    let keyList1: String
    let cache: ClientCache
    /// What the malicious edge serves: `objects/` of the real root and a manifest of ours.
    let evil: String

    static func make(_ label: String) throws -> SignedSetup {
        let keys = try SigningKeys.make(in: Harness.tempDir(label + "-keys"), ["root", "a", "b", "rogue"])
        let list = try keys.authorize(["a"], version: 1)
        let root = try ClientRoot.make(label, publishArgs: keys.buildArgs(["a"], keyList: list))
        let setup = SignedSetup(
            root: root, keys: keys, keyList1: list, cache: ClientCache(dir: root.dir + "/cache"), evil: root.dir + "/evil")
        try FileIO.makeDirectory(setup.evil)
        guard symlink(root.root + "/objects", setup.evil + "/objects") == 0 else { throw HarnessError("symlink failed") }
        return setup
    }

    var trustArgs: [String] { ["--trust", keys.pub("root")] }

    func cleanup() {
        root.cleanup()
        Harness.cleanup(FileIO.parent(of: keys.dir))
    }

    /// `folio ARGS --trust root.pub` with no bundled seed (unless `seed` is given).
    func folio(_ args: [String], edge: String, seed: String = "") throws -> Harness.Output {
        try ClientTest.folio(args + trustArgs, cache: cache.dir, edge: edge, env: ["FOLIO_SEED": seed])
    }

    func publishedBytes() throws -> [UInt8] { try FileIO.read(root.root + "/manifest.plist") }

    /// `folio-build -q` of the content into the root with `args`, its output returned.
    func build(_ args: [String]) throws -> Harness.Output {
        try Harness.run(
            Harness.binary("folio-build"), ["--content", root.content, "--output", root.root, "-q"] + args, env: ClientTest.buildEnv)
    }

    /// The cache as a refusal must leave it: the version, its manifest and every file held.
    func snapshot() throws -> [String] {
        let s = try #require(try cache.state())
        let manifests = ((try? FileIO.list(cache.dir + "/manifests")) ?? []).sorted()
        return ["\(s.version) \(s.manifestSHA256)"] + manifests + cache.objectNames().sorted()
    }
}

@Suite("signed releases", .serialized)
struct SignedReleaseTests {
    /// The manifest a forger starts from: the current one, as the next version (so that only the
    /// signature checks, not the rollback check, stand in the way).
    static func nextVersion(of bytes: [UInt8], expiresAt: Date? = nil) throws -> (manifest: Manifest, bytes: [UInt8]) {
        var m = try Manifest(bytes: bytes)
        m.version += 1
        if let expiresAt { m.expiresAt = expiresAt }
        return (m, BinaryPlist.encode(m.plist))
    }

    static func envelope(_ inner: [UInt8], signatures: [Signature], keyList: SignedKeyList) -> [UInt8] {
        BinaryPlist.encode(
            .dict([
                "schemaVersion": .int(2), "manifest": .data(Data(inner)), "keyList": .data(Data(keyList.bytes)),
                "signatures": .array(signatures.map { .dict(["keyID": .string($0.keyID), "signature": .data(Data($0.bytes))]) }),
            ]))
    }

    @Test("a malicious edge's manifests are each refused with their own exit code; the cache and offline reads stay")
    func maliciousEdge() async throws {
        let s = try SignedSetup.make("signed-evil")
        defer { s.cleanup() }
        // A verified sync of version 1 from the real edge.
        let edge = try EdgeProcess.start(root: s.root.root, args: ClientTest.edgeArgs)
        let first = try s.folio(["sync", "--json"], edge: edge.baseURL)
        edge.stop()
        #expect(first.status == 0, "\(first.stderr)")
        let poem = try s.folio(["read", "sonnet", "18", "--offline"], edge: ClientTest.unreachableEdge)
        #expect(poem.status == 0 && poem.stdout.contains("summer"), "\(poem.stderr)")
        let held = try s.snapshot()

        let current = try s.publishedBytes()
        let signed = try #require(try SignedManifest.decode(current))
        let a = try s.keys.secret("a")
        let next = try Self.nextVersion(of: current)
        func sign(_ keys: [SecretKey], _ inner: [UInt8] = next.bytes) -> [Signature] {
            keys.map { Signature(keyID: $0.keyID, bytes: $0.sign(SigningContext.manifest + inner)) }
        }
        let list1 = try s.keys.signedList(s.keyList1)
        let list2 = try s.keys.signedList(try s.keys.authorize(["b"], version: 2, revoke: ["a"]))
        let list3 = try s.keys.signedList(try s.keys.authorize(["a", "b"], version: 3, threshold: 2))
        let rogueList = try s.keys.signedList(try s.keys.authorize(["rogue"], version: 9, root: "rogue"))
        var tampered = next.manifest
        tampered.entries[0].sha256 = tampered.entries[1].sha256
        let expired = try Self.nextVersion(of: current, expiresAt: Date().addingTimeInterval(-3600))

        let cases: [(name: String, bytes: [UInt8], exit: Int32, says: String)] = [
            ("unsigned", next.bytes, 10, "not signed"),
            ("tampered", Self.envelope(BinaryPlist.encode(tampered.plist), signatures: sign([a]), keyList: list1), 11, "does not verify over the manifest's bytes"),
            ("signature over other bytes", Self.envelope(next.bytes, signatures: signed.signatures, keyList: list1), 11, "signature was made over other bytes"),
            ("unknown key", Self.envelope(next.bytes, signatures: sign([try s.keys.secret("rogue")]), keyList: list1), 12, "does not authorize"),
            ("revoked key", Self.envelope(next.bytes, signatures: sign([a]), keyList: list2), 13, "revokes"),
            ("too few keys", Self.envelope(next.bytes, signatures: sign([a]), keyList: list3), 14, "requires 2"),
            ("expired", Self.envelope(expired.bytes, signatures: sign([a], expired.bytes), keyList: list1), 15, "expired at"),
            ("key list not signed by the root", Self.envelope(next.bytes, signatures: sign([try s.keys.secret("rogue")]), keyList: rogueList), 16, "not trusted here"),
        ]
        let server = try PythonServer.staticFiles(root: s.evil)
        defer { server.stop() }
        for c in cases {
            try FileIO.writeAtomically(c.bytes, to: s.evil + "/manifest.plist")
            let out = try s.folio(["sync", "--force"], edge: server.url)
            #expect(out.status == c.exit, "\(c.name): exit \(out.status): \(out.stderr)")
            #expect(out.stderr.contains(c.says) && out.stderr.contains("the cache keeps its current version"), "\(c.name): \(out.stderr)")
            #expect(try s.snapshot() == held, "\(c.name): the cache changed")
            let status = try ClientTest.json(try s.folio(["status", "--json"], edge: server.url))
            #expect(status["lastResult"]?.stringValue == "refused", "\(c.name)")
            #expect(status["lastError"]?.stringValue?.contains(c.says) == true, "\(c.name): \(status)")
            #expect(status["signing"]?["trust"]?.stringValue == "verified", "\(c.name): what is held still verifies")
            let read = try s.folio(["read", "sonnet", "18", "--offline"], edge: server.url)
            #expect(read.status == 0 && read.stdout == poem.stdout, "\(c.name): \(read.stderr)")
            // A read that refreshes from the edge reports the refusal and reads the cache.
            try s.cache.age(by: 3600)
            let refreshing = try s.folio(["read", "sonnet", "18"], edge: server.url)
            #expect(refreshing.status == 0 && refreshing.stdout == poem.stdout, "\(c.name): \(refreshing.stderr)")
            #expect(refreshing.stderr.contains("warning: refused"), "\(c.name): \(refreshing.stderr)")
        }

        // An older, correctly signed version: to a client that has verified a newer one.
        let edge2 = try EdgeProcess.start(root: s.root.root, args: ClientTest.edgeArgs)
        try s.root.replace(in: 18, "compare thee", with: "liken thee")
        try s.root.publish(seed: s.root.dir + "/seed.folioseed", s.keys.buildArgs(["a"], keyList: s.keyList1))
        _ = try #require(await edge2.waitForVersion(2, timeout: 10))
        let second = try s.folio(["sync", "--force"], edge: edge2.baseURL)
        edge2.stop()
        #expect(second.status == 0, "\(second.stderr)")
        let atTwo = try s.snapshot()
        try FileIO.writeAtomically(current, to: s.evil + "/manifest.plist")
        let rollback = try s.folio(["sync", "--force"], edge: server.url)
        #expect(rollback.status == 17 && rollback.stderr.contains("older than version 2 already verified here"), "exit \(rollback.status): \(rollback.stderr)")
        #expect(try s.snapshot() == atTwo)
        // The same version number with other content, correctly signed: refused too.
        var twin = try Manifest(bytes: try s.publishedBytes())
        twin.notice = "not what was published"
        let twinBytes = BinaryPlist.encode(twin.plist)
        try FileIO.writeAtomically(Self.envelope(twinBytes, signatures: sign([a], twinBytes), keyList: list1), to: s.evil + "/manifest.plist")
        let twinSync = try s.folio(["sync", "--force"], edge: server.url)
        #expect(twinSync.status == 17 && twinSync.stderr.contains("with other bytes"), "exit \(twinSync.status): \(twinSync.stderr)")
        #expect(try s.snapshot() == atTwo)

        // To a fresh client whose bundled seed is newer (version 2), or is version 2 with other
        // content: refused, and it reads the seed.
        let fresh = ClientCache(dir: s.root.dir + "/fresh")
        let seedPath = s.root.dir + "/seed.folioseed"
        for served in [current, try FileIO.read(s.evil + "/manifest.plist")] {
            try FileIO.writeAtomically(served, to: s.evil + "/manifest.plist")
            let freshSync = try ClientTest.folio(
                ["sync", "--trust", s.keys.pub("root")], cache: fresh.dir, edge: server.url, env: ["FOLIO_SEED": seedPath])
            #expect(freshSync.status == 17 && freshSync.stderr.contains("bundled seed"), "exit \(freshSync.status): \(freshSync.stderr)")
            #expect(fresh.objectNames().isEmpty)
        }
        let fromSeed = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: fresh.dir, edge: server.url, env: ["FOLIO_SEED": seedPath])
        #expect(fromSeed.status == 0 && fromSeed.stdout.contains("liken thee"), "\(fromSeed.stderr)")
    }

    @Test("rotation: a key list naming a new key is followed without an update; the revoked key is then refused")
    func rotation() async throws {
        let s = try SignedSetup.make("signed-rotation")
        defer { s.cleanup() }
        let edge = try EdgeProcess.start(root: s.root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        #expect(try s.folio(["sync"], edge: edge.baseURL).status == 0)

        // The root authorizes b and revokes a; the same content is published again, signed by b.
        let list2 = try s.keys.authorize(["b"], version: 2, revoke: ["a"])
        let build = try s.build(s.keys.buildArgs(["b"], keyList: list2))
        #expect(build.status == 0 && build.stdout.contains("published version 2 (was 1, signature renewed)"), "\(build.stdout) \(build.stderr)")
        _ = try #require(await edge.waitForVersion(2, timeout: 10))
        let rotated = try s.folio(["sync", "--force", "--json"], edge: edge.baseURL)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(try ClientSyncSummary(rotated).versionAfter == 2)
        let b = try s.keys.secret("b")
        let report = try ClientTest.json(rotated)
        #expect(report["signers"]?.arrayValue == [.string(b.keyID)] && report["keyListVersion"]?.intValue == 2, "\(rotated.stdout)")
        let status = try ClientTest.json(try s.folio(["status", "--json"], edge: edge.baseURL))
        #expect(status["signing"]?["signers"]?.arrayValue?.first?.stringValue == b.keyID)
        #expect(status["signing"]?["keyListVersion"]?.intValue == 2)
        #expect(status["signing"]?["trust"]?.stringValue == "verified")

        // `folio diff` shows the change of signer and key list (and no content difference).
        let shown = try s.folio(["diff", s.root.root + "/manifests/1.plist", s.root.root + "/manifests/2.plist"], edge: edge.baseURL)
        #expect(shown.status == 0, "no content changed: \(shown.stdout) \(shown.stderr)")
        #expect(shown.stdout.contains("! signing: signed by another key: key ") && shown.stdout.contains("! signing: key list version: 1 → 2"), "\(shown.stdout)")

        // The revoked key: a newer version it signed, under the new list or replaying the old one.
        let server = try PythonServer.staticFiles(root: s.evil)
        defer { server.stop() }
        let next = try Self.nextVersion(of: try s.publishedBytes())
        let a = try s.keys.secret("a")
        let byA = [Signature(keyID: a.keyID, bytes: a.sign(SigningContext.manifest + next.bytes))]
        try FileIO.writeAtomically(Self.envelope(next.bytes, signatures: byA, keyList: try s.keys.signedList(list2)), to: s.evil + "/manifest.plist")
        let revoked = try s.folio(["sync", "--force"], edge: server.url)
        #expect(revoked.status == 13, "\(revoked.stderr)")
        try FileIO.writeAtomically(Self.envelope(next.bytes, signatures: byA, keyList: try s.keys.signedList(s.keyList1)), to: s.evil + "/manifest.plist")
        let replayed = try s.folio(["sync", "--force"], edge: server.url)
        #expect(replayed.status == 17 && replayed.stderr.contains("replayed key list"), "\(replayed.stderr)")
        #expect(try #require(try s.cache.state()).version == 2)
    }

    @Test("a no-op signed sync is one request under 1 KB; a build renews a signature past half its life")
    func noOpAndFreeze() async throws {
        let s = try SignedSetup.make("signed-noop")
        defer { s.cleanup() }
        let edge = try EdgeProcess.start(root: s.root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        #expect(try s.folio(["sync"], edge: edge.baseURL).status == 0)
        let noop = try ClientSyncSummary(try s.folio(["sync", "--force", "--json"], edge: edge.baseURL))
        #expect(noop.result == "notModified" && noop.requests == 1 && noop.bytes < 1024, "\(noop)")

        // A publish signed for 2 s: once it is past, a build signs it again as a new version.
        let short = try s.build(s.keys.buildArgs(["a"], keyList: s.keyList1, validFor: "4s"))
        #expect(short.status == 0 && short.stdout.contains("signature renewed"), "\(short.stdout) \(short.stderr)")
        ClientTest.sleep(ms: 2100)
        let same = try s.build(s.keys.buildArgs(["a"], keyList: s.keyList1))
        #expect(same.status == 0 && same.stdout.contains("signature renewed") && same.stdout.contains("version 3"), "\(same.stdout)")
        let again = try s.build(s.keys.buildArgs(["a"], keyList: s.keyList1))
        #expect(again.status == 0 && again.stdout.contains("up to date at version 3"), "re-running publishes nothing: \(again.stdout)")
    }

    @Test("a freeze: when the version an edge keeps answering 304 for expires, sync refuses it and reads go on")
    func freeze() async throws {
        let s = try SignedSetup.make("signed-freeze")
        defer { s.cleanup() }
        let short = try s.build(s.keys.buildArgs(["a"], keyList: s.keyList1, validFor: "30s"))
        #expect(short.status == 0 && short.stdout.contains("signature renewed"), "\(short.stdout) \(short.stderr)")
        let edge = try EdgeProcess.start(root: s.root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        // The library's sync, with no clock-skew allowance, and a clock moved past the expiry
        // for the second sync (a wait would race a loaded machine).
        var trust = try Trust(files: [s.keys.pub("root")])
        trust.skew = 0
        var settings = SyncSettings(edge: edge.baseURL, transport: Transports.forEdge(edge.baseURL))
        settings.trust = trust
        settings.force = true
        let cache = ContentCache(dir: s.cache.dir)
        #expect(try await Syncer(cache: cache, settings: settings).run().result == .updated)
        let held = try s.snapshot()
        settings.now = { Date().addingTimeInterval(60) }
        do {
            _ = try await Syncer(cache: cache, settings: settings).run()
            Issue.record("an expired manifest was accepted again")
        } catch let error as FolioError {
            #expect(error.code == .expired && error.message.contains("expired at"), "\(error)")
        }
        #expect(try s.snapshot() == held)
        #expect(try s.cache.state()?.lastResult == "refused")
        let view = try #require(ContentView.local(cache: cache, seed: nil))
        #expect(try view.plist("sonnets/018.plist")["number"]?.intValue == 18)
    }

    @Test("folio-edge --trust refuses to serve a manifest that does not verify, as an origin and as a cache tier")
    func edges() async throws {
        let s = try SignedSetup.make("signed-edge")
        defer { s.cleanup() }
        let good = try s.publishedBytes()
        // As an origin: a good version serves; an unsigned publish is rejected, the good one stays.
        let edge = try EdgeProcess.start(root: s.root.root, args: ClientTest.edgeArgs + s.trustArgs)
        defer { edge.stop() }
        let unsigned = try #require(try SignedManifest.decode(good)).manifestBytes
        try FileIO.writeAtomically(unsigned, to: s.root.root + "/manifest.plist")
        #expect(await edge.waitForLog("does not verify under --trust", timeout: 5), "\(edge.log)")
        #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").body == good)
        let keyList = try RawHTTPConnection.fetch(port: edge.port, "/keylist.plist")
        let published = try s.keys.signedList(s.keyList1).bytes
        #expect(keyList.status == 200 && keyList.body == published)
        let refusedStart = try Harness.run(Harness.binary("folio-edge"), ["--root", s.root.root, "--port", "0"] + s.trustArgs)
        #expect(refusedStart.status == 1 && refusedStart.stderr.contains("not signed"), "\(refusedStart.stderr)")
        try FileIO.writeAtomically(good, to: s.root.root + "/manifest.plist")

        // As a cache tier in front of an origin that serves a forged manifest: 502, nothing stored;
        // then the good one: stored and served.
        try FileIO.writeAtomically(unsigned, to: s.evil + "/manifest.plist")
        let origin = try PythonServer.staticFiles(root: s.evil)
        defer { origin.stop() }
        let tier = try EdgeProcess.start(root: s.root.root, args: ["--origin", origin.url] + s.trustArgs)
        defer { tier.stop() }
        let refused = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
        #expect(refused.status == 502, "\(refused.status)")
        #expect(refused.header("cache-status")?.contains("untrusted-manifest") == true, "\(refused.headers)")
        #expect(refused.text.contains("not signed"))
        try FileIO.writeAtomically(good, to: s.evil + "/manifest.plist")
        let served = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
        #expect(served.status == 200 && served.body == good)
        let client = try s.folio(["sync", "--json"], edge: tier.baseURL)
        #expect(client.status == 0, "\(client.stderr)")
    }

    @Test("folio-build refuses keys it must not use, with the reason and public/ unchanged")
    func builderRefusals() throws {
        let s = try SignedSetup.make("signed-build")
        defer { s.cleanup() }
        let before = Harness.snapshot(s.root.root)
        let build = s.build
        // A secret key inside the content directory.
        try FileIO.writeAtomically(try FileIO.read(s.keys.key("a")), to: s.root.content + "/a.key")
        chmod(s.root.content + "/a.key", 0o600)
        let inside = try build(["--signing-key", s.root.content + "/a.key", "--key-list", s.keyList1])
        #expect(inside.status == 1 && inside.stderr.contains("keep secret keys outside"), "\(inside.stderr)")
        unlink(s.root.content + "/a.key")
        // A key the list does not authorize; too few keys for the threshold; a readable secret key.
        let unauthorized = try build(s.keys.buildArgs(["b"], keyList: s.keyList1))
        #expect(unauthorized.status == 1 && unauthorized.stderr.contains("does not authorize it"), "\(unauthorized.stderr)")
        let two = try s.keys.authorize(["a", "b"], version: 2, threshold: 2)
        let tooFew = try build(s.keys.buildArgs(["a"], keyList: two))
        #expect(tooFew.status == 1 && tooFew.stderr.contains("requires 2 signatures"), "\(tooFew.stderr)")
        chmod(s.keys.key("b"), 0o644)
        let readable = try build(s.keys.buildArgs(["a", "b"], keyList: two))
        #expect(readable.status == 1 && readable.stderr.contains("chmod 600"), "\(readable.stderr)")
        let missing = try build(["--signing-key", s.keys.key("a")])
        #expect(missing.status != 0 && missing.stderr.contains("go together"), "\(missing.stderr)")
        #expect(Harness.snapshot(s.root.root) == before, "a refused build left public/ as it was")

        // `folio keys generate` never overwrites, and the secret key is private.
        let again = try Harness.run(ClientTest.folioPath, ["keys", "generate", s.keys.dir + "/a"])
        #expect(again.status == 1 && again.stderr.contains("already exists"))
        var st = stat()
        #expect(stat(s.keys.key("root"), &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    @Test("FolioKit: a store that trusts a root refuses a forged manifest with a code, and keeps reading")
    func library() async throws {
        let s = try SignedSetup.make("signed-kit")
        defer { s.cleanup() }
        let trust = try FolioTrust(publicKeys: [String(decoding: try FileIO.read(s.keys.pub("root")), as: UTF8.self)])
        let edge = try EdgeProcess.start(root: s.root.root, args: ClientTest.edgeArgs)
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: s.cache.dir, trust: trust)
        #expect(try await store.sync().result == .updated)
        edge.stop()
        let next = try Self.nextVersion(of: try s.publishedBytes())
        let rogue = try s.keys.secret("rogue")
        try FileIO.writeAtomically(
            Self.envelope(next.bytes, signatures: [Signature(keyID: rogue.keyID, bytes: rogue.sign(SigningContext.manifest + next.bytes))], keyList: try s.keys.signedList(s.keyList1)),
            to: s.evil + "/manifest.plist")
        let server = try PythonServer.staticFiles(root: s.evil)
        defer { server.stop() }
        let forged = try FolioStore(edge: server.url, cacheDirectory: s.cache.dir, trust: trust)
        do {
            try await forged.sync(force: true)
            Issue.record("a forged manifest was accepted")
        } catch {
            #expect(error.code == .unknownSigner && error.isTrustFailure && error.hasContent)
        }
        #expect(try forged.plist(at: "sonnets/018.plist")["number"]?.intValue == 18)
    }
}
