import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

/// The new first line of sonnet 18 in these tests.
private let winterLine = "Shall I compare thee to a winter’s day?"

/// Delta updates against the real binaries: folio-build writes the deltas, folio-edge (or a
/// plain static server) serves them, folio takes them.
@Suite("delta updates", .serialized)
struct DeltaSyncTests {
    /// A published root, an edge over it, and a cache synced to its first version.
    struct Setup {
        let root: ClientRoot
        let edge: EdgeProcess
        let cache: ClientCache

        static func make(_ label: String, publishArgs: [String] = []) throws -> Setup {
            let root = try ClientRoot.make(label, publishArgs: publishArgs)
            let edge: EdgeProcess
            do { edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs) } catch {
                root.cleanup()
                throw error
            }
            let setup = Setup(root: root, edge: edge, cache: ClientCache(dir: root.dir + "/cache"))
            let first = try setup.sync()
            guard first.status == 0 else { throw HarnessError("first sync: \(first.stderr)") }
            return setup
        }

        func cleanup() {
            edge.stop()
            root.cleanup()
        }

        func sync(_ extra: [String] = [], cache: ClientCache? = nil, edge: String? = nil, env: [String: String] = [:]) throws -> Harness.Output {
            try ClientTest.folio(["sync", "--force", "--json"] + extra, cache: (cache ?? self.cache).dir, edge: edge ?? self.edge.baseURL, env: ["FOLIO_SEED": ""].merging(env) { $1 })
        }

        /// Publishes the content again and waits until the edge serves the new version.
        func publish(_ args: [String] = []) throws {
            try root.publish(args)
            try edge.requireVersion(try root.manifest().version)
        }

        /// The deltas published into the current version, decoded.
        func deltasIntoCurrent() throws -> [String: DeltaBundle] {
            let sha = ContentHash.sha256Hex(try FileIO.read(root.root + "/manifest.plist"))
            var out: [String: DeltaBundle] = [:]
            for name in try FileIO.list(root.root + "/deltas") where name.hasSuffix("-\(sha).plist") {
                out[name] = try DeltaBundle(bytes: try FileIO.read(root.root + "/deltas/" + name))
            }
            return out
        }
    }

    /// The sync summary's fields.
    private func summary(_ out: Harness.Output) throws -> PlistValue {
        #expect(out.status == 0, "\(out.stderr)")
        return try ClientTest.json(out)
    }

    /// Requires `cache` to hold exactly what a fresh whole sync of the same edge holds: the
    /// manifest file and every object it lists, byte for byte.
    private func expectSameAsFreshSync(_ cache: ClientCache, edge: String, label: String) throws {
        let fresh = ClientCache(dir: Harness.tempDir(label))
        defer { Harness.cleanup(fresh.dir) }
        let out = try ClientTest.folio(["sync", "--no-delta"], cache: fresh.dir, edge: edge, env: ["FOLIO_SEED": ""])
        #expect(out.status == 0, "\(out.stderr)")
        let manifest = try fresh.currentManifest()
        #expect(try cache.currentManifest() == manifest)
        let a = try #require(try cache.state())
        let b = try #require(try fresh.state())
        #expect(a.manifestSHA256 == b.manifestSHA256)
        #expect(try FileIO.read(cache.dir + "/manifests/\(a.version)-\(a.manifestSHA256).plist") == FileIO.read(fresh.dir + "/manifests/\(b.version)-\(b.manifestSHA256).plist"))
        for entry in manifest.entries {
            #expect(try FileIO.read(cache.objectPath(entry.sha256)) == FileIO.read(fresh.objectPath(entry.sha256)), "\(entry.path)")
        }
        #expect(cache.badObjects().isEmpty)
    }

    @Test("a one-line edit reaches a synced client in under 2 KB, as a fresh sync would have it")
    func oneLineEdit() throws {
        let s = try Setup.make("delta-oneline")
        defer { s.cleanup() }
        try s.root.replace(in: 18, ClientSyncTests.summerLine, with: winterLine)
        try s.publish()
        let r = try summary(try s.sync())
        #expect(r["method"]?.stringValue == "delta")
        #expect(r["objectsPatched"]?.intValue == 3)  // the sonnet, index.plist and all.plist
        #expect(r["objectsFetched"]?.intValue == 0)
        #expect(r["requests"]?.intValue == 2)  // head.plist and the delta
        let bytes = try #require(r["bytes"]?.intValue)
        #expect(bytes < 2048, "a one-line edit cost \(bytes) bytes")
        #expect((r["bytesSaved"]?.intValue ?? 0) > 80_000, "\(r)")
        try expectSameAsFreshSync(s.cache, edge: s.edge.baseURL, label: "delta-oneline-fresh")
        let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: s.cache.dir, edge: s.edge.baseURL)
        #expect(read.stdout.contains(winterLine))
        let status = try ClientTest.folio(["status"], cache: s.cache.dir, edge: s.edge.baseURL)
        #expect(status.stdout.contains("last update: delta from version 1: 3 objects patched, 0 fetched whole"), "\(status.stdout)")
        let statusJSON = try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: s.cache.dir, edge: s.edge.baseURL))
        #expect(statusJSON["lastUpdate"]?.stringValue?.hasPrefix("delta from version 1") == true)
        // The next sync is a revalidation of head.plist: one 304.
        let again = try summary(try s.sync())
        #expect(again["result"]?.stringValue == "notModified")
        #expect(again["requests"]?.intValue == 1)
        #expect((again["bodyBytes"]?.intValue ?? -1) == 0)
    }

    @Test("signed: the rebuilt manifest verifies; a one-line edit still costs under 2 KB")
    func signedOneLineEdit() throws {
        let keys = try SigningKeys.make(in: Harness.tempDir("delta-signed-keys"), ["root", "a"])
        defer { Harness.cleanup(FileIO.parent(of: keys.dir)) }
        let list = try keys.authorize(["a"], version: 1)
        let signArgs = keys.buildArgs(["a"], keyList: list)
        let s = try Setup.make("delta-signed", publishArgs: signArgs)
        defer { s.cleanup() }
        let trust = ["--trust", keys.pub("root")]
        #expect(try s.sync(trust).status == 0)
        try s.root.replace(in: 18, ClientSyncTests.summerLine, with: winterLine)
        try s.publish(signArgs)
        let r = try summary(try s.sync(trust))
        #expect(r["method"]?.stringValue == "delta")
        #expect(r["signers"]?.arrayValue?.count == 1)
        let bytes = try #require(r["bytes"]?.intValue)
        #expect(bytes < 2048, "a signed one-line edit cost \(bytes) bytes")
        try expectSameAsFreshSync(s.cache, edge: s.edge.baseURL, label: "delta-signed-fresh")
    }

    @Test("chains: one delta from the last K versions, two through the waypoint, whole objects beyond")
    func chains() throws {
        let history = ["--delta-history", "2"]
        let s = try Setup.make("delta-chain", publishArgs: history)
        defer { s.cleanup() }
        let behind = ClientCache(dir: s.root.dir + "/behind")  // stays at version 1 until the end
        #expect(try s.sync(cache: behind).status == 0)
        let words = ["winter’s", "autumn’s", "spring’s", "morning’s", "evening’s"]
        var held: [Int: ClientCache] = [:]
        for (i, word) in words.enumerated() {
            let before = i == 0 ? "summer’s" : words[i - 1]
            try s.root.replace(in: 18, "compare thee to a \(before) day", with: "compare thee to a \(word) day")
            try s.publish(history)
            let version = try s.root.manifest().version
            let cache = ClientCache(dir: s.root.dir + "/at\(version)")
            #expect(try s.sync(["--no-delta"], cache: cache).status == 0)
            held[version] = cache
        }
        // Now at version 6, with deltas from 4 and 5; the waypoint is 4, reached from 2 and 3.
        let head = try DeltaHead(bytes: try FileIO.read(s.root.root + "/head.plist"))
        #expect(head.version == 6)
        #expect(head.deltasFrom == [4, 5])
        #expect(head.waypoint?.version == 4)

        let direct = try summary(try s.sync(cache: held[5]!))
        #expect(direct["method"]?.stringValue == "delta")
        #expect(direct["deltaSteps"]?.intValue == 1)
        let chained = try summary(try s.sync(cache: held[3]!))
        #expect(chained["method"]?.stringValue == "delta-chain", "\(chained)")
        #expect(chained["deltaSteps"]?.intValue == 2)
        #expect(chained["objectsFetched"]?.intValue == 0)
        #expect(chained["requests"]?.intValue == 3)
        try expectSameAsFreshSync(held[3]!, edge: s.edge.baseURL, label: "delta-chain-fresh")
        // Version 1 is further behind than two deltas reach: the manifest and objects whole.
        let gap = try summary(try s.sync(cache: behind))
        #expect(gap["method"]?.stringValue == "whole")
        #expect(gap["objectsFetched"]?.intValue == 3)
        #expect(gap["deltaFallback"]?.stringValue?.contains("no delta from version 1") == true, "\(gap)")
        try expectSameAsFreshSync(behind, edge: s.edge.baseURL, label: "delta-gap-fresh")
        // Old deltas are pruned: only those into the last K versions and the current one remain.
        let targets = Set(try FileIO.list(s.root.root + "/deltas").compactMap { name in
            PublishedLayout.deltaPair(ofFile: name.hasSuffix(".gz") ? String(name.dropLast(3)) : name)?.to
        })
        let kept = try Set([4, 5, 6].map { ContentHash.sha256Hex(try FileIO.read(s.root.root + "/manifests/\($0).plist")) })
        #expect(targets.isSubset(of: kept) && targets.count == 3, "\(targets)")
        for cache in held.values { Harness.cleanup(cache.dir) }
    }

    @Test("a corrupted delta is refused and the objects come whole; a bad object edit costs only that object")
    func corrupted() throws {
        let root = try ClientRoot.make("delta-corrupt")
        defer { root.cleanup() }
        let server = try PythonServer.staticFiles(root: root.root)
        defer { server.stop() }
        let cache = ClientCache(dir: root.dir + "/cache")
        func sync() throws -> PlistValue {
            try summary(try ClientTest.folio(["sync", "--force", "--json"], cache: cache.dir, edge: server.url, env: ["FOLIO_SEED": ""]))
        }
        _ = try sync()
        try root.replace(in: 18, ClientSyncTests.summerLine, with: winterLine)
        try root.publish()
        let deltaName = try #require(try FileIO.list(root.root + "/deltas").first { $0.hasSuffix(".plist") })
        let deltaPath = root.root + "/deltas/" + deltaName
        let original = try FileIO.read(deltaPath)

        // 1. The manifest edit damaged: nothing of the delta is used.
        let bundle = try DeltaBundle(bytes: original)
        var broken = bundle
        broken.manifest = .dict(["d": .dict(["version": .dict(["v": .int(99)])])])
        try FileIO.writeAtomically(broken.bytes, to: deltaPath)
        let r1 = try sync()
        #expect(r1["method"]?.stringValue == "whole")
        #expect(r1["objectsFetched"]?.intValue == 3)
        #expect(r1["deltaFallback"]?.stringValue?.contains("does not rebuild the manifest") == true, "\(r1)")
        try expectSameAsFreshSync(cache, edge: server.url, label: "delta-corrupt-fresh1")

        // 2. Garbage bytes: refused the same way. (A cache at version 1 again.)
        let second = ClientCache(dir: root.dir + "/cache2")
        try FileIO.writeAtomically(Array("bplist00 not really".utf8), to: deltaPath)
        try syncToVersion1(root, second)
        let r2 = try summary(try ClientTest.folio(["sync", "--force", "--json"], cache: second.dir, edge: server.url, env: ["FOLIO_SEED": ""]))
        #expect(r2["method"]?.stringValue == "whole")
        #expect(r2["deltaFallback"] != nil)
        try expectSameAsFreshSync(second, edge: server.url, label: "delta-corrupt-fresh2")

        // 3. One object's edit wrong: that object is fetched whole, the others are patched.
        let third = ClientCache(dir: root.dir + "/cache3")
        var wrongObject = bundle
        let sonnet = try #require(bundle.objects["sonnets/018.plist"])
        wrongObject.objects["sonnets/018.plist"] = .dict(["d": .dict(["number": .dict(["v": .int(7)])])])
        #expect(sonnet != wrongObject.objects["sonnets/018.plist"])
        try FileIO.writeAtomically(wrongObject.bytes, to: deltaPath)
        try syncToVersion1(root, third)
        let r3 = try summary(try ClientTest.folio(["sync", "--force", "--json"], cache: third.dir, edge: server.url, env: ["FOLIO_SEED": ""]))
        #expect(r3["method"]?.stringValue == "delta")
        #expect(r3["objectsPatched"]?.intValue == 2)
        #expect(r3["objectsFetched"]?.intValue == 1)
        #expect(r3["deltaFallback"]?.stringValue?.contains("did not verify") == true, "\(r3)")
        try expectSameAsFreshSync(third, edge: server.url, label: "delta-corrupt-fresh3")
        // --verbose says so; without it the sync is as quiet as any.
        try FileIO.writeAtomically(broken.bytes, to: deltaPath)
        let fourth = ClientCache(dir: root.dir + "/cache4")
        try syncToVersion1(root, fourth)
        let quiet = try ClientTest.folio(["sync", "--force"], cache: fourth.dir, edge: server.url, env: ["FOLIO_SEED": ""])
        #expect(quiet.status == 0 && !quiet.stdout.contains("delta") && quiet.stderr.isEmpty, "\(quiet.stdout) \(quiet.stderr)")
        let fifth = ClientCache(dir: root.dir + "/cache5")
        try syncToVersion1(root, fifth)
        let verbose = try ClientTest.folio(["sync", "--force", "--verbose"], cache: fifth.dir, edge: server.url, env: ["FOLIO_SEED": ""])
        #expect(verbose.stdout.contains("deltas not used:"), "\(verbose.stdout)")
    }

    @Test("a whole-sonnet rewrite is patched; an edit no smaller than its object is not published and the object comes whole")
    func largerThanTarget() throws {
        let s = try Setup.make("delta-larger")
        defer { s.cleanup() }
        try s.root.rewriteLines(of: 18) { i, _ in "An entirely new line number \(i), written over the old one" }
        try s.publish()
        let bundle = try #require(try s.deltasIntoCurrent().values.first)
        // Every published object edit is smaller, gzipped, than its target gzipped.
        let manifest = try s.root.manifest()
        #expect(bundle.objects.count == 3)
        for (path, edit) in bundle.objects {
            let entry = try #require(manifest.entry(path))
            let encoded = BinaryPlist.encode(edit)
            #expect(min(encoded.count, try Gzip.compress(encoded).count) < entry.gzipSize ?? entry.size, "\(path)")
        }
        let r = try summary(try s.sync())
        #expect(r["method"]?.stringValue == "delta")
        #expect(r["objectsPatched"]?.intValue == 3)
        try expectSameAsFreshSync(s.cache, edge: s.edge.baseURL, label: "delta-larger-fresh")

        // A root whose object changes entirely: its edit would be the object and more.
        let dir = Harness.tempDir("delta-larger-lib")
        defer { Harness.cleanup(dir) }
        let root = dir + "/public"
        func words(_ seed: String) -> PlistValue { .array((0..<300).map { .string("\(seed) \($0) \(ContentHash.sha256Hex(Array("\(seed)\($0)".utf8)).prefix(12))") }) }
        try DeltaBuilderFixture.publish(root, ["a.plist": words("first"), "b.plist": .dict(["title": .string("One"), "lines": words("kept")])])
        try DeltaBuilderFixture.publish(root, ["a.plist": words("second"), "b.plist": .dict(["title": .string("Two"), "lines": words("kept")])])
        let v2 = try Manifest(bytes: try FileIO.read(root + "/manifest.plist"))
        let names = try FileIO.list(root + "/deltas").filter { $0.hasSuffix(".plist") }
        #expect(names.count == 1)
        let lib = try DeltaBundle(bytes: try FileIO.read(root + "/deltas/" + names[0]))
        #expect(lib.objects["a.plist"] == nil, "an edit as large as a.plist was published")
        #expect(lib.objects["b.plist"] != nil)
        let edge = try EdgeProcess.start(root: root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = ClientCache(dir: dir + "/cache")
        try syncToVersion1(root, cache)
        let r2 = try summary(try s.sync(cache: cache, edge: edge.baseURL))
        #expect(r2["method"]?.stringValue == "delta")
        #expect(r2["objectsPatched"]?.intValue == 1)
        #expect(r2["objectsFetched"]?.intValue == 1)
        #expect(try cache.currentManifest() == v2)
        try expectSameAsFreshSync(cache, edge: edge.baseURL, label: "delta-larger-lib-fresh")
    }

    @Test("kill -9 during a delta sync leaves the previous or the new version readable, never a mix")
    func killDuringApply() throws {
        let s = try Setup.make("delta-kill")
        defer { s.cleanup() }
        let v1 = try s.root.manifest()
        // A delta with work in it: every sonnet's last line changed.
        for n in 1...154 { try s.root.rewriteLines(of: n) { i, line in i == 13 ? line + " ~" : line } }
        try s.publish()
        let v2 = try s.root.manifest()
        #expect(try s.deltasIntoCurrent().values.first?.objects.count ?? 0 > 100)

        let clock = ContinuousClock()
        // Calibrate: a copy of the version 1 cache, then one timed delta sync.
        func resetToV1() throws {
            Harness.cleanup(s.cache.dir)
            _ = try Harness.run("/bin/cp", ["-a", s.root.dir + "/v1cache", s.cache.dir])
        }
        _ = try Harness.run("/bin/cp", ["-a", s.cache.dir, s.root.dir + "/v1cache"])
        let started = clock.now
        let calibration = try summary(try s.sync())
        #expect(calibration["method"]?.stringValue == "delta")
        let elapsed = clock.now - started
        let span = max(100, Int(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15))

        var killed = 0
        for round in 0..<12 {
            try resetToV1()
            let p = try ClientProcess(["sync", "--force", "--cache-dir", s.cache.dir, "--edge", s.edge.baseURL])
            ClientTest.sleep(ms: Int.random(in: 0...span))
            if p.killNow() { killed += 1 }
            _ = p.wait(timeout: 30)
            p.finish()
            let held = try s.cache.currentManifest()
            #expect(held == v1 || held == v2, "round \(round)")
            #expect(s.cache.mismatchedEntries(held).isEmpty, "round \(round)")
            #expect(s.cache.badObjects().isEmpty, "round \(round)")
            let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: s.cache.dir, edge: s.edge.baseURL)
            #expect(read.status == 0, "round \(round): \(read.stderr)")
            // And the next sync completes it.
            let next = try s.sync()
            #expect(next.status == 0, "round \(round): \(next.stderr)")
            #expect(try s.cache.currentManifest() == v2)
        }
        #expect(killed >= 1, "no kill landed during a sync")
        try expectSameAsFreshSync(s.cache, edge: s.edge.baseURL, label: "delta-kill-fresh")
    }

    @Test("every layer: an old client, an edge without deltas, a cache tier in between")
    func layers() throws {
        let s = try Setup.make("delta-layers")
        defer { s.cleanup() }
        try s.root.replace(in: 18, ClientSyncTests.summerLine, with: winterLine)
        try s.publish()
        // An old client asks for manifest.plist and objects, as it always did; the manifest keeps
        // the layout it reads (no new keys), and head.plist and deltas/ are beside it.
        let manifest = try PlistValue.decode(try FileIO.read(s.root.root + "/manifest.plist"))
        #expect(Set(manifest.dictValue?.keys.map { $0 } ?? []) == ["schemaVersion", "version", "createdAt", "cacheHints", "entries", "sourceRevision", "history"])
        #expect(manifest["schemaVersion"]?.intValue == 1)
        let old = ClientCache(dir: s.root.dir + "/old")
        #expect(try s.sync(["--no-delta"], cache: old).status == 0)
        try expectSameAsFreshSync(old, edge: s.edge.baseURL, label: "delta-layers-old")

        // Through a cache tier: deltas are immutable objects to it.
        let tier = try EdgeProcess.start(root: s.root.root, args: ["--origin", s.edge.baseURL, "--threads", "1"])
        defer { tier.stop() }
        let viaTier = ClientCache(dir: s.root.dir + "/tier")
        try syncToVersion1(s.root, viaTier)
        let r = try summary(try s.sync(cache: viaTier, edge: tier.baseURL))
        #expect(r["method"]?.stringValue == "delta", "\(r)")
        try expectSameAsFreshSync(viaTier, edge: s.edge.baseURL, label: "delta-layers-tier")
        let deltaURL = try #require(try FileIO.list(s.root.root + "/deltas").first { $0.hasSuffix(".plist") })
        let headers = try Harness.run("/usr/bin/curl", ["-s", "-D", "-", "-o", "/dev/null", tier.baseURL + "/deltas/" + deltaURL])
        #expect(headers.stdout.contains("immutable"), "\(headers.stdout)")

        // An edge with no deltas (published with --delta-history 0): whole objects, and the
        // client stops asking for head.plist until the version changes.
        let plain = try ClientRoot.make("delta-layers-plain", publishArgs: ["--delta-history", "0"])
        defer { plain.cleanup() }
        #expect(!FileIO.exists(plain.root + "/head.plist"))
        let plainEdge = try EdgeProcess.start(root: plain.root, args: ClientTest.edgeArgs)
        defer { plainEdge.stop() }
        let c = ClientCache(dir: plain.dir + "/cache")
        #expect(try s.sync(cache: c, edge: plainEdge.baseURL).status == 0)
        let noop1 = try summary(try s.sync(cache: c, edge: plainEdge.baseURL))
        #expect(noop1["requests"]?.intValue == 2)  // head.plist 404, then the manifest
        let noop2 = try summary(try s.sync(cache: c, edge: plainEdge.baseURL))
        #expect(noop2["requests"]?.intValue == 1)
        try plain.replace(in: 18, ClientSyncTests.summerLine, with: winterLine)
        try plain.publish(["--delta-history", "0"])
        try plainEdge.requireVersion(try plain.manifest().version)
        let update = try summary(try s.sync(cache: c, edge: plainEdge.baseURL))
        #expect(update["method"]?.stringValue == "whole")
        #expect(update["objectsFetched"]?.intValue == 3)
        try expectSameAsFreshSync(c, edge: plainEdge.baseURL, label: "delta-layers-plain")
    }

    /// Syncs `cache` to version 1 of `root` (its versioned manifest and objects behind a static
    /// server), as a client synced before the current version was published.
    private func syncToVersion1(_ root: ClientRoot, _ cache: ClientCache) throws {
        try syncToVersion1(root.root, cache)
    }

    private func syncToVersion1(_ root: String, _ cache: ClientCache) throws {
        let v1 = Harness.tempDir("delta-v1")
        defer { Harness.cleanup(v1) }
        try FileIO.writeAtomically(try FileIO.read(root + "/manifests/1.plist"), to: v1 + "/manifest.plist")
        guard symlink(root + "/objects", v1 + "/objects") == 0 else { throw HarnessError("symlink failed") }
        let old = try PythonServer.staticFiles(root: v1)
        defer { old.stop() }
        let out = try ClientTest.folio(["sync"], cache: cache.dir, edge: old.url, env: ["FOLIO_SEED": ""])
        guard out.status == 0 else { throw HarnessError("sync to version 1: \(out.stderr)") }
    }
}
