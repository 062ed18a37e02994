import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EdgeIntegration {
    /// `folio-build publish DIR http(s)://EDGE` against the real folio-edge: digest deploys,
    /// and every refusal leaving the previous version served whole.
    @Suite("folio-edge: push deploys", .serialized)
    struct EdgeDeployTests {
        @Test("a deploy to an edge started from an initial root, an unchanged one, a one-line edit taken as a delta")
        func deployRedeployEdit() throws {
            let s = try DeploySetup.make("deploy-flow")
            defer { s.cleanup() }
            try s.expectServesWhole(1)
            let lacking = try DeploySetup.objectFiles(s.src).subtracting(try DeploySetup.objectFiles(s.edgeRoot))
            let first = try s.deploy()
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("deployed version 2 to \(s.url):"), "\(first.stdout)")
            // Each lacking file uploaded or rebuilt by the edge (from a variant sent or the delta).
            let (sent, rebuilt) = (DeploySetup.objectsUploaded(first) ?? -1, DeploySetup.objectsRebuilt(first) ?? -1)
            #expect(sent + rebuilt == lacking.count && sent < lacking.count / 2, "\(first.stdout)")
            try s.expectServesWhole(2)
            #expect(try s.edgeManifestBytes() == FileIO.read(s.src + "/manifest.plist"))
            let entry = try #require(try Manifest(bytes: try s.edgeManifestBytes()).entry("sonnets/018.plist"))
            #expect(try RawHTTPConnection.fetch(port: s.edge.port, "/content/sonnets/018.plist").body == FileIO.read(s.src + "/" + entry.objectPath))

            let again = try s.deploy()
            #expect(again.status == 0, "\(again.stderr)")
            #expect(DeploySetup.objectsUploaded(again) == 0, "\(again.stdout)")
            #expect(again.stdout.contains("deployed version 2 to \(s.url): 0 files uploaded (0 KB, 0 bytes)"), "\(again.stdout)")
            try s.expectServesWhole(2)

            // A client synced to version 2 through the edge.
            let cache = ClientCache(dir: s.dir + "/cache")
            let sync = { try ClientTest.folio(["sync", "--force", "--json"], cache: cache.dir, edge: s.edge.baseURL, env: ["FOLIO_SEED": ""]) }
            #expect(try sync().status == 0)

            let changed = try s.editSonnet()
            let dry = try s.deploy(["--dry-run"])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.contains("would upload objects/"), "\(dry.stdout)")
            #expect(dry.stdout.contains("nothing was changed"), "\(dry.stdout)")
            try s.expectServesWhole(2)

            let edit = try s.deploy()
            DeploySetup.expectEditDeployed(edit, changed: changed)
            // The begin, then one plan that carries the brotli variants predicted and commits.
            #expect(edit.stdout.contains("round 1:") && !edit.stdout.contains("round 2:"), "\(edit.stdout)")
            try s.expectServesWhole(3)
            try s.expectSameFiles()
            let r = try ClientTest.json(try sync())
            #expect(r["method"]?.stringValue == "delta", "\(r)")
            #expect(r["objectsFetched"]?.intValue == 0, "\(r)")
        }

        @Test("a channel's version deploys beside production, which stays as it was")
        func channel() throws {
            let s = try DeploySetup.make("deploy-channel")
            defer { s.cleanup() }
            #expect(try s.deploy().status == 0)
            try EdgePublishTests.editSonnet18(in: s.content, to: "winter’s day")
            try s.rebuild(["--channel", "beta"])
            let dry = try s.deploy(["--dry-run"])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.contains("would upload channels/beta/manifest.plist"), "\(dry.stdout)")  // no delta into beta's first version
            for production in ["would upload head.plist", "would upload manifest", "would upload deltas/"] {
                #expect(!dry.stdout.contains(production), "\(dry.stdout)")  // production's unchanged
            }
            let r = try s.deploy()
            #expect(r.status == 0, "\(r.stderr)")
            try s.expectServesWhole(2)
            let beta = try FileIO.read(s.src + "/channels/beta/manifest.plist")
            #expect(try FileIO.read(s.edgeRoot + "/channels/beta/manifest.plist") == beta)
            #expect(try RawHTTPConnection.fetch(port: s.edge.port, "/channels/beta/manifest.plist").body == beta)
            let entry = try #require(try Manifest(bytes: beta).entry("sonnets/018.plist"))
            let object = try RawHTTPConnection.fetch(port: s.edge.port, "/" + entry.objectPath)
            #expect(object.status == 200 && entry.matches(object.body))
        }

        @Test("over https with a private CA, on the edge's only listener")
        func https() throws {
            let pki = try TestPKI(Harness.tempDir("deploy-pki"))
            defer { Harness.cleanup(pki.dir) }
            let (cert, key) = try pki.leaf("localhost")
            let s = try DeploySetup.make("deploy-https", edgeArgs: ["--tls-cert", cert, "--tls-key", key], adminListen: false)
            defer { s.cleanup() }
            let url = "https://127.0.0.1:\(s.edge.port)"
            let untrusted = try s.deploy(url: url)
            #expect(untrusted.status == 1, "\(untrusted.stdout)")
            #expect(untrusted.stderr.contains("could not begin the deploy") && untrusted.stderr.contains("--ca"), "\(untrusted.stderr)")
            let r = try s.deploy(["--ca", pki.ca], url: url)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("deployed version 2 to \(url)"), "\(r.stdout)")
            // Fetched with curl and the CA (whatever the test stack's TLS settings).
            let get = { (path: String) in try EdgeCurl.request(url + path, options: ["--cacert", pki.ca, "--http1.1"], headers: []).response }
            #expect(try get("/healthz").text == "ok version 2\n")
            #expect(try get("/manifest.plist").body == FileIO.read(s.src + "/manifest.plist"))
        }

        @Test("an admin listener off loopback speaks https with the edge's certificate; a deploy reaches it with --ca")
        func adminOverHTTPS() throws {
            let pki = try TestPKI(Harness.tempDir("deploy-admin-pki"))
            defer { Harness.cleanup(pki.dir) }
            let (cert, key) = try pki.leaf("localhost")
            let s = try DeploySetup.make(
                "deploy-admin-https", edgeArgs: ["--tls-cert", cert, "--tls-key", key, "--admin-listen", "0.0.0.0:0"], adminListen: false)
            defer { s.cleanup() }
            let admin = try #require(s.edge.adminPort)
            #expect(s.edge.stdoutText.contains("admin listening on https://0.0.0.0:\(admin)"), "\(s.edge.stdoutText)")
            // Plain http is not answered there.
            #expect((try? EdgeCurl.request("http://127.0.0.1:\(admin)/metrics", options: ["--http1.1"], headers: []).response.status) != 200)
            let url = "https://127.0.0.1:\(admin)"
            let r = try s.deploy(["--ca", pki.ca], url: url)
            #expect(r.status == 0 && r.stdout.contains("deployed version 2 to \(url)"), "\(r.stdout) \(r.stderr)")
            let metrics = try EdgeCurl.request(url + "/metrics", options: ["--cacert", pki.ca, "--http1.1"], headers: []).response
            #expect(metrics.status == 200 && metrics.text.contains("folio_edge_loaded_version 2"), "\(metrics.text.prefix(300))")
        }

        @Test("a wrong token, a second deploy, a corrupt object, a missing one, a truncated upload: refused, version 1 whole")
        func refusals() throws {
            let s = try DeploySetup.make("deploy-refusals")
            defer { s.cleanup() }
            let before = try s.edgeManifestBytes()

            try FileIO.writeAtomically(Array("not-the-deploy-token-at-all\n".utf8), to: s.dir + "/wrong")
            let wrong = try Harness.run(Harness.binary("folio-build"), ["publish", s.src, s.url, "--token-file", s.dir + "/wrong"])
            #expect(wrong.status == 1)
            #expect(wrong.stderr.contains("401") && wrong.stderr.contains("wrong deploy token"), "\(wrong.stderr)")
            #expect(try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy", token: "x").status == 401)
            // A client of the first protocol, and a channel name that would leave the root.
            let old = try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy", body: Array(#"{"version":2,"holder":"x","force":false,"files":[]}"#.utf8))
            #expect(old.status == 400 && old.text.contains("protocol 5"), "\(old.text)")
            // A client of protocol 4, which plans and commits in separate requests.
            let four = try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy", body: Array(#"{"protocol":4,"version":2,"holder":"x","force":false,"channels":{},"files":[]}"#.utf8))
            #expect(four.status == 400 && four.text.contains("protocol 5, the client speaks 4"), "\(four.text)")
            let zeros = String(repeating: "0", count: 64)
            let evil = #"{"protocol":5,"version":2,"holder":"x","force":false,"channels":{"../etc":{"version":2,"sha256":"\#(zeros)","size":1}},"files":[]}"#
            let escape = try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy", body: Array(evil.utf8))
            #expect(escape.status == 400 && escape.text.contains("not a channel name"), "\(escape.text)")

            let id = try DeployRaw.begin(port: s.adminPort, holder: "alice@ci pid 7", version: 2)
            let second = try s.deploy()
            #expect(second.status == 2, "\(second.stderr)")
            #expect(second.stderr.contains("409") && second.stderr.contains("alice@ci pid 7"), "\(second.stderr)")
            #expect(try DeployRaw.request(port: s.adminPort, "DELETE", "/.folio/deploy/\(id)").status == 200)

            // An object the edge asks for (its brotli variant: the smallest), in every form.
            let new = try DeploySetup.objectFiles(s.src).subtracting(try DeploySetup.objectFiles(s.edgeRoot))
            let victim = try #require(new.sorted().first { !$0.hasSuffix(".gz") && !$0.hasSuffix(".br") && new.contains($0 + ".br") })
            let corrupt = try copy(s.src, to: s.dir + "/corrupt")
            var bytes = try FileIO.read(corrupt + "/objects/" + victim)
            bytes[bytes.count / 2] ^= 0x55
            try FileIO.writeAtomically(bytes, to: corrupt + "/objects/" + victim)
            try FileIO.writeAtomically(try Gzip.compress(bytes), to: corrupt + "/objects/" + victim + ".gz")
            try FileIO.writeAtomically(try Brotli.compress(bytes, quality: 5), to: corrupt + "/objects/" + victim + ".br")
            let bad = try s.deploy(from: corrupt)
            #expect(bad.status == 1)
            #expect(bad.stderr.contains("422") && bad.stderr.contains("objects/\(victim)") && bad.stderr.contains("hash"), "\(bad.stderr)")
            try s.expectServesWhole(1)

            let missing = try copy(s.src, to: s.dir + "/missing")
            for name in [victim, victim + ".gz", victim + ".br"] { try? FileManager.default.removeItem(atPath: missing + "/objects/" + name) }
            let never = try s.deploy(from: missing)
            #expect(never.status != 0)
            #expect(never.stderr.contains("objects/\(victim)"), "\(never.stderr)")
            try s.expectServesWhole(1)
            try manifestAlone(s)
            #expect(try s.edgeManifestBytes() == before)

            try truncatedUploads(s, victim: victim)
            try s.expectServesWhole(1)
            let ok = try s.deploy()
            #expect(ok.status == 0, "\(ok.stderr)")
            try s.expectServesWhole(2)
        }

        /// A manifest sent without its objects: the plan asks for them, the commit refuses.
        private func manifestAlone(_ s: DeploySetup) throws {
            let manifest = try FileIO.read(s.src + "/manifest.plist")
            let id = try DeployRaw.begin(
                port: s.adminPort, holder: "manifest only", version: 2, sha256: ContentHash.sha256Hex(manifest), size: manifest.count)
            #expect(try DeployRaw.request(port: s.adminPort, "PUT", "/.folio/deploy/\(id)/manifest.plist", body: manifest).status == 201)
            let plan = try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy/\(id)/plan")
            #expect(plan.status == 200 && plan.text.contains("objects/"), "\(plan.text)")
            let commit = try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy/\(id)/commit")
            #expect(commit.status == 422 && commit.text.contains("never sent"), "\(commit.text)")
            try s.expectServesWhole(1)
        }

        /// A body cut short by a closed connection stages nothing; a gzip variant cut short is
        /// refused with 422.
        private func truncatedUploads(_ s: DeploySetup, victim: String) throws {
            let id = try DeployRaw.begin(port: s.adminPort, holder: "truncating test", version: 2)
            for path in ["objects/../manifest.plist", "etc/passwd", ".deploy/x/manifest.plist", "objects/notahash.plist"] {
                let r = try DeployRaw.request(port: s.adminPort, "PUT", "/.folio/deploy/\(id)/\(path)", body: [1, 2, 3])
                #expect(r.status == 400, "\(path): \(r.status) \(r.text)")
            }
            #expect(try DeployRaw.request(port: s.adminPort, "PUT", "/.folio/deploy/not-an-id/head.plist", body: [1]).status == 404)
            // Batches of files: a body that is not one, or names a file outside the layout, is refused with where.
            let batches: [([UInt8], String)] = [
                (Array("head.plist\nten\nxx".utf8), "size 'ten'"), (Array("head.plist\n10\nabc".utf8), "cut short: 3 of its 10"),
                (Array("no newline at all".utf8), "no path line at byte 0"), ([], "empty"),
                (DeployFileBatch.encode([("head.plist", [1]), ("etc/passwd", [1])]), "'etc/passwd' is not a file of a published directory"),
            ]
            for (body, words) in batches {
                let r = try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy/\(id)/files", body: body)
                #expect(r.status == 400 && r.text.contains(words), "\(words): \(r.status) \(r.text)")
            }
            #expect(try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy/not-an-id/files", body: DeployFileBatch.encode([("head.plist", [1])])).status == 404)
            let whole = try FileIO.read(s.src + "/objects/" + victim)
            let c = try RawHTTPConnection(port: s.adminPort)
            let head = RawHTTPConnection.head(
                "PUT", "/.folio/deploy/\(id)/objects/\(victim)",
                headers: [("Authorization", "Bearer \(DeploySetup.token)"), ("Content-Length", "\(whole.count)")])
            try c.send(Array(head.utf8) + whole.prefix(whole.count / 2))
            c.close()
            ClientTest.sleep(ms: 200)
            #expect(!FileIO.exists(s.edgeRoot + "/.deploy/\(id)/objects/\(victim)"))
            let gz = try #require(try FileIO.list(s.src + "/objects").first { $0.hasSuffix(".gz") && !FileIO.exists(s.edgeRoot + "/objects/" + $0) })
            let gzBytes = try FileIO.read(s.src + "/objects/" + gz)
            let cut = try DeployRaw.request(port: s.adminPort, "PUT", "/.folio/deploy/\(id)/objects/\(gz)", body: Array(gzBytes.prefix(gzBytes.count - 8)))
            #expect(cut.status == 422, "\(cut.text)")
            #expect(cut.text.contains("truncated"), "\(cut.text)")
            let commit = try DeployRaw.request(port: s.adminPort, "POST", "/.folio/deploy/\(id)/commit")
            #expect(commit.status == 422, "\(commit.text)")  // no manifest sent
            #expect(try DeployRaw.request(port: s.adminPort, "PUT", "/.folio/deploy/\(id)/head.plist").status == 404)  // the lock is let go
        }

        @Test("a gzip variant the edge makes at another size than the manifest's is asked for and sent")
        func gzipOfAnotherSize() throws {
            let s = try DeploySetup.make("deploy-gzip-size")
            defer { s.cleanup() }
            // A new object whose gzip variant was made at level 12 (a level the builder never uses),
            // the manifest saying so; the edge makes the object from its brotli variant.
            var manifest = try Manifest(bytes: try FileIO.read(s.src + "/manifest.plist"))
            let present = try DeploySetup.objectFiles(s.edgeRoot)
            let i = try #require(manifest.entries.firstIndex { $0.brotliObjectPath != nil && !present.contains(FileIO.lastComponent(of: $0.objectPath)) })
            let entry = manifest.entries[i]
            let gzip = try Gzip.compress(try FileIO.read(s.src + "/" + entry.objectPath), level: 12)
            try #require(gzip.count != entry.gzipSize, "level 12 gives the builder's size")
            try FileIO.writeAtomically(gzip, to: s.src + "/" + entry.gzipObjectPath!)
            manifest.entries[i].gzipSize = gzip.count
            try FileIO.writeAtomically(BinaryPlist.encode(manifest.plist), to: s.src + "/manifest.plist")
            for stale in ["manifest.plist.gz", "manifest.plist.br"] { unlink(s.src + "/" + stale) }  // the unpatched manifest's
            let r = try s.deploy()
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try FileIO.read(s.edgeRoot + "/" + entry.gzipObjectPath!) == gzip)
            let served = try RawHTTPConnection.fetch(port: s.edge.port, "/" + entry.objectPath, headers: [("Accept-Encoding", "gzip")])
            #expect(served.status == 200 && served.body == gzip, "\(served.status)")
        }

        @Test("objects the edge has that a new build gave brotli variants: the variants are sent and served")
        func variantsAddedToObjectsServed() throws {
            let s = try DeploySetup.make("deploy-new-variant", buildArgs: ["--no-brotli"])
            defer { s.cleanup() }
            #expect(try s.deploy().status == 0)
            try s.expectServesWhole(2)
            // The same objects, now with brotli variants. Before, the edge took the objects it
            // had as they were, moved the manifest into place, could not load it, and kept
            // serving version 2 over a root naming files it lacked.
            try s.rebuild(["--brotli-quality", "11"])
            let manifest = try Manifest(bytes: try FileIO.read(s.src + "/manifest.plist"))
            let gained = manifest.entries.filter { $0.brotliObjectPath != nil && FileIO.exists(s.edgeRoot + "/" + $0.objectPath) }
            try #require(!gained.isEmpty, "no object of version 2 gained a brotli variant")
            let r = try s.deploy()
            #expect(r.status == 0, "\(r.stderr)")
            try s.expectServesWhole(3)
            try s.expectSameFiles()
            let entry = gained[0]
            let served = try RawHTTPConnection.fetch(port: s.edge.port, "/" + entry.objectPath, headers: [("Accept-Encoding", "br")])
            let brotli = try FileIO.read(s.src + "/" + entry.brotliObjectPath!)
            #expect(served.status == 200 && served.body == brotli, "\(served.status)")
        }

        @Test("a rollback is refused (exit 3) without --force, and deployed with it")
        func rollback() throws {
            let s = try DeploySetup.make("deploy-rollback")
            defer { s.cleanup() }
            #expect(try s.deploy().status == 0)
            try s.expectServesWhole(2)
            let back = try s.deploy(from: s.v1)
            #expect(back.status == 3, "\(back.stderr)")
            #expect(back.stderr.contains("roll it back") && back.stderr.contains("--force"), "\(back.stderr)")
            try s.expectServesWhole(2)
            let forced = try s.deploy(["--force"], from: s.v1)
            #expect(forced.status == 0, "\(forced.stderr)")
            try s.expectServesWhole(1)
        }

        @Test("a manifest signed under a key list the edge's --trust root did not sign is refused")
        func untrustedSignature() throws {
            let keys = try SigningKeys.make(in: Harness.tempDir("deploy-keys"), ["root", "ci", "evil"])
            defer { Harness.cleanup(FileIO.parent(of: keys.dir)) }
            let trusted = try keys.authorize(["ci"], version: 1)
            let forged = try keys.authorize(["evil"], version: 2, root: "evil")
            let s = try DeploySetup.make("deploy-trust", edgeArgs: ["--trust", keys.pub("root")], buildArgs: keys.buildArgs(["ci"], keyList: trusted))
            defer { s.cleanup() }
            try s.rebuild(keys.buildArgs(["evil"], keyList: forged))
            let r = try s.deploy()
            #expect(r.status == 1)
            #expect(r.stderr.contains("422") && r.stderr.contains("--trust"), "\(r.stderr)")
            try s.expectServesWhole(1)
        }

        @Test("a deploy client killed mid-upload: the edge serves version 1 whole, its lock goes stale, the next deploy succeeds")
        func killedClient() async throws {
            let s = try DeploySetup.make("deploy-killed", edgeArgs: ["--deploy-lock-timeout", "5"])
            defer { s.cleanup() }
            // An object no delta or prediction gives and too large to go with a plan: the first
            // plan names it, so the deploy cannot end with that plan (it commits when it lacks
            // nothing), and the client uploads it on its own.
            try FileIO.writeAtomically((0..<(6 << 20)).map { _ in UInt8.random(in: 0...255) }, to: s.content + "/images/noise.bin")
            try s.rebuild()  // version 3
            let client = try BuilderProcess(["publish", s.src, s.url, "--token-file", s.tokenFile, "--concurrency", "1"])
            #expect(await s.edge.waitForLog("deploy begun", timeout: 20), "\(s.edge.log)")
            // The edge stopped while the client is mid-deploy (a deploy takes a fraction of a
            // second), so the client is killed waiting on an upload; then the edge goes on.
            s.edge.signal(SIGSTOP)
            try await Task.sleep(for: .milliseconds(200))
            let killed = client.killNow()
            let bySignal = client.finish()
            s.edge.signal(SIGCONT)
            try #require(killed && bySignal, "the deploy ended before it could be killed")
            try s.expectServesWhole(1, staging: true)
            let blocked = try s.deploy()
            #expect(blocked.status == 2, "\(blocked.stderr)")
            #expect(blocked.stderr.contains("pid \(client.pid)"), "\(blocked.stderr)")
            try await Task.sleep(for: .milliseconds(5500))
            let next = try s.deploy()
            #expect(next.status == 0, "\(next.stderr)")
            try s.expectServesWhole(3)
            #expect(s.edge.log.contains("took over a stale deploy lock"))
        }

        @Test("the token is refused over plain http to an address that is not loopback, before anything is sent")
        func plainHTTPRefused() throws {
            let src = Harness.tempDir("deploy-plain")
            defer { Harness.cleanup(src) }
            try DeploySetup.build(Harness.repoRoot + "/content", into: src)
            for url in ["http://192.0.2.1:9443", "http://example.com"] {
                let started = Date()
                let r = try Harness.run(Harness.binary("folio-build"), ["publish", src, url], env: ["FOLIO_DEPLOY_TOKEN": DeploySetup.token])
                #expect(r.status == 1)
                #expect(r.stderr.contains("refusing to send the deploy token over plain http"), "\(r.stderr)")
                #expect(Date().timeIntervalSince(started) < 5)
            }
        }

        @Test("--deploy-token-file is refused with --origin, and deploys are off without it")
        func edgeOptions() throws {
            let r = try Harness.run(
                Harness.binary("folio-edge"), ["--origin", "http://127.0.0.1:1", "--deploy-token-file", "/nonexistent"])
            #expect(r.status != 0)
            #expect(r.stderr.contains("--deploy-token-file is for serving a published directory"), "\(r.stderr)")
            let fixture = try EdgeFixture.make("deploy-off")
            defer { fixture.cleanup() }
            let edge = try EdgeProcess.start(root: fixture.root, args: ["--admin-listen", "127.0.0.1:0"])
            defer { edge.stop() }
            let off = try DeployRaw.request(port: try #require(edge.adminPort), "POST", "/.folio/deploy")
            #expect(off.status == 403, "\(off.text)")
            #expect(off.text.contains("--deploy-token-file"))
        }

        private func copy(_ from: String, to: String) throws -> String {
            try FileManager.default.copyItem(atPath: from, toPath: to)
            return to
        }
    }
}
