import FolioTestSupport
import FolioPublished
import FolioSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `folio sync` against the real folio-edge serving a root published by the real folio-build.
@Suite("folio sync (live edge)", .serialized)
struct ClientSyncTests {
    static let summerLine = "Shall I compare thee to a summer’s day?"
    static let winterLine = "Shall I compare thee to a winter’s night?"

    /// A published root, its edge, and an empty cache dir (inside the root's temp dir).
    func withEdge(
        _ label: String, edgeArgs: [String] = [], _ body: (ClientRoot, EdgeProcess, ClientCache) throws -> Void
    ) throws {
        let root = try ClientRoot.make(label)
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs + edgeArgs)
        defer { edge.stop() }
        try body(root, edge, ClientCache(dir: root.dir + "/cache"))
    }

    @Test("first sync into an empty cache: one manifest request, each distinct object once, all verified")
    func firstSync() throws {
        try withEdge("client-first") { root, edge, cache in
            let manifest = try root.manifest()
            let distinct = Set(manifest.entries.map(\.sha256))
            #expect(distinct.count > 150)

            let out = try ClientTest.folio(["sync", "--json"], cache: cache.dir, edge: edge.baseURL)
            #expect(out.status == 0, "\(out.stderr)")
            let s = try ClientSyncSummary(out)
            #expect(s.result == "updated")
            #expect(s.requests == 1 + distinct.count)
            #expect(s.objectsFetched == distinct.count)
            #expect(s.versionBefore == nil)
            #expect(s.versionAfter == manifest.version)

            #expect(FileIO.exists(cache.statePath))
            #expect(Set(cache.objectNames()) == Set(distinct.map { $0 + ".plist" }))
            #expect(cache.badObjects().isEmpty)
            let state = try #require(try cache.state())
            #expect(state.version == manifest.version)
            #expect(state.lastResult == "updated")
            #expect(try cache.currentManifest() == manifest)
            #expect(cache.missingEntries(manifest).isEmpty)
            #expect(cache.mismatchedEntries(manifest).isEmpty)
        }
    }

    @Test("a second sync right away makes no request; --force revalidates with one small 304")
    func freshThenForced() throws {
        try withEdge("client-fresh") { root, edge, cache in
            let version = try root.manifest().version
            #expect(try ClientTest.folio(["sync"], cache: cache.dir, edge: edge.baseURL).status == 0)
            let objectsBefore = Harness.snapshot(cache.objectsDir)

            let again = try ClientTest.folio(["sync", "--json"], cache: cache.dir, edge: edge.baseURL)
            #expect(again.status == 0, "\(again.stderr)")
            let fresh = try ClientSyncSummary(again)
            #expect(fresh.result == "fresh")
            #expect(fresh.requests == 0)
            #expect(fresh.bytes == 0)
            #expect(fresh.versionAfter == version)

            let forcedOut = try ClientTest.folio(["sync", "--force", "--json"], cache: cache.dir, edge: edge.baseURL)
            #expect(forcedOut.status == 0, "\(forcedOut.stderr)")
            let forced = try ClientSyncSummary(forcedOut)
            #expect(forced.result == "notModified")
            #expect(forced.requests == 1)
            #expect(forced.objectsFetched == 0)
            #expect(forced.bytes > 0)
            #expect(forced.bytes < 1024)
            #expect(forced.versionBefore == version && forced.versionAfter == version)
            #expect(try cache.state()?.lastResult == "notModified")
            #expect(Harness.snapshot(cache.objectsDir) == objectsBefore)
        }
    }

    @Test("after a republish, sync --force --no-delta fetches the manifest and only the changed objects")
    func republish() throws {
        try withEdge("client-republish") { root, edge, cache in
            let m1 = try root.manifest()
            #expect(try ClientTest.folio(["sync"], cache: cache.dir, edge: edge.baseURL).status == 0)

            try root.replace(in: 18, Self.summerLine, with: Self.winterLine)
            try root.publish()
            let m2 = try root.manifest()
            #expect(m2.version == m1.version + 1)
            let changed = m2.entries.filter { m1.entry($0.path)?.sha256 != $0.sha256 }.map(\.path)
            #expect(Set(changed) == ["sonnets/018.plist", "sonnets/index.plist", "sonnets/all.plist"])
            try edge.requireVersion(m2.version)

            // Whole objects (deltas are DeltaSyncTests' business).
            let out = try ClientTest.folio(["sync", "--force", "--json", "--no-delta"], cache: cache.dir, edge: edge.baseURL)
            #expect(out.status == 0, "\(out.stderr)")
            let s = try ClientSyncSummary(out)
            #expect(s.result == "updated")
            #expect(s.requests == 1 + changed.count)
            #expect(s.objectsFetched == changed.count)
            #expect(s.versionBefore == m1.version)
            #expect(s.versionAfter == m2.version)
            #expect(try cache.currentManifest() == m2)
            #expect(cache.badObjects().isEmpty)

            let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache.dir, edge: edge.baseURL)
            #expect(read.status == 0, "\(read.stderr)")
            #expect(read.stdout.contains(Self.winterLine))
            #expect(!read.stdout.contains(Self.summerLine))
        }
    }

    @Test("an older manifest is refused without --allow-downgrade, accepted with it")
    func downgrade() throws {
        let a = try ClientRoot.make("client-downA")
        defer { a.cleanup() }
        try a.replace(in: 18, Self.summerLine, with: Self.winterLine)
        try a.publish()
        let ma = try a.manifest()
        let edgeA = try EdgeProcess.start(root: a.root, args: ClientTest.edgeArgs)
        defer { edgeA.stop() }
        let cache = ClientCache(dir: a.dir + "/cache")
        let first = try ClientTest.folio(["sync", "--json"], cache: cache.dir, edge: edgeA.baseURL)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try ClientSyncSummary(first).versionAfter == ma.version)

        let b = try ClientRoot.make("client-downB")
        defer { b.cleanup() }
        let mb = try b.manifest()
        try #require(mb.version < ma.version)
        let edgeB = try EdgeProcess.start(root: b.root, args: ClientTest.edgeArgs)
        defer { edgeB.stop() }

        let stateBefore = try #require(try cache.state())
        let refused = try ClientTest.folio(["sync", "--force"], cache: cache.dir, edge: edgeB.baseURL)
        #expect(refused.status == 17, "a rollback has its own exit code")
        #expect(refused.stderr.contains("--allow-downgrade"), "\(refused.stderr)")
        // The current version is untouched; only the attempt is recorded.
        let stateAfter = try #require(try cache.state())
        #expect(stateAfter.version == stateBefore.version)
        #expect(stateAfter.manifestSHA256 == stateBefore.manifestSHA256)
        #expect(stateAfter.lastResult == "refused")
        #expect(try cache.currentManifest() == ma)

        let allowed = try ClientTest.folio(["sync", "--force", "--allow-downgrade", "--json"], cache: cache.dir, edge: edgeB.baseURL)
        #expect(allowed.status == 0, "\(allowed.stderr)")
        let s = try ClientSyncSummary(allowed)
        #expect(s.result == "updated")
        #expect(s.versionBefore == ma.version)
        #expect(s.versionAfter == mb.version)
        #expect(try cache.currentManifest() == mb)
        let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache.dir, edge: edgeB.baseURL)
        #expect(read.stdout.contains(Self.summerLine))
    }

    @Test("offline: sync exits 3 with one line and keeps the cache; read still works from the cache")
    func offline() throws {
        try withEdge("client-offline") { root, edge, cache in
            let version = try root.manifest().version
            #expect(try ClientTest.folio(["sync"], cache: cache.dir, edge: edge.baseURL).status == 0)
            edge.stop()

            let out = try ClientTest.folio(["sync", "--force"], cache: cache.dir, edge: edge.baseURL)
            #expect(out.status == 3, "\(out.stdout)\(out.stderr)")
            let lines = (out.stdout + out.stderr).split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.contains("offline") == true)
            #expect(try cache.state()?.version == version)
            #expect(try cache.currentManifest().version == version)

            let source = try ClientTest.sourceText(18)
            let read = try ClientTest.folio(["read", "sonnet", "18", "--verbose"], cache: cache.dir, edge: edge.baseURL)
            #expect(read.status == 0, "\(read.stderr)")
            #expect(read.stdout == source)
            #expect(read.stderr.contains("from the cache"), "\(read.stderr)")

            // Stale: read tries the edge first, finds it gone, and still reads the cache.
            try cache.age(by: 3600)
            let stale = try ClientTest.folio(["read", "sonnet", "18", "--verbose"], cache: cache.dir, edge: edge.baseURL)
            #expect(stale.status == 0, "\(stale.stderr)")
            #expect(stale.stdout == source)
            #expect(stale.stderr.contains("from the cache"), "\(stale.stderr)")
            #expect(try cache.currentManifest().version == version)
        }
    }

    @Test("a refused connection is reported as offline promptly, not after the connect timeout")
    func offlinePromptly() throws {
        // Nothing listens on 127.0.0.1:1: every connect is refused at once. Three attempts with
        // 100 ms and 200 ms of backoff should answer "offline" well within a second or two.
        let dir = Harness.tempDir("client-offline-fast")
        defer { Harness.cleanup(dir) }
        let clock = ContinuousClock()
        let start = clock.now
        let out = try ClientTest.folio(["sync", "--json"], cache: dir + "/cache", edge: ClientTest.unreachableEdge)
        let elapsed = clock.now - start
        #expect(out.status == 3, "\(out.stderr)")
        let s = try ClientSyncSummary(out)
        #expect(s.result == "offline")
        #expect(s.message.contains("connection refused"), "\(s.message)")
        #expect(elapsed < .seconds(5), "offline took \(elapsed) for \(s.requests) refused requests")
    }

    /// A deliberately unreliable HTTP/1.1 server over a published directory: it closes every
    /// third connection after answering, without saying so (as servers drop idle keep-alive
    /// connections), and answers every seventh object request 503 the first time.
    static let flakyServer = #"""
        import http.server, os, socketserver, sys, threading
        root = sys.argv[1]
        lock = threading.Lock()
        state = {"n": 0, "failed": set(), "closed": 0, "busy": 0}
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def reply(self, status, body, extra=()):
                self.send_response(status)
                for k, v in extra: self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_GET(self):
                with lock:
                    state["n"] += 1
                    n = state["n"]
                    busy = self.path.startswith("/objects/") and self.path not in state["failed"] and n % 7 == 0
                    if busy:
                        state["failed"].add(self.path)
                        state["busy"] += 1
                if self.path == "/stats":
                    return self.reply(200, ("%d %d %d" % (state["n"], state["closed"], state["busy"])).encode())
                if busy:
                    return self.reply(503, b"busy\n")
                if self.path != "/manifest.plist" and not (self.path.startswith("/objects/") and self.path.count("/") == 2):
                    return self.reply(404, b"no\n")
                path = root + self.path
                gz = "gzip" in (self.headers.get("Accept-Encoding") or "") and os.path.exists(path + ".gz")
                with open(path + (".gz" if gz else ""), "rb") as f: body = f.read()
                self.reply(200, body, [("Content-Encoding", "gzip")] if gz else [])
                if n % 3 == 0:
                    with lock: state["closed"] += 1
                    self.close_connection = True
        serve(Handler)
        """#

    @Test("an unreliable edge: keep-alive connections it drops are reopened, 503s are retried, every object arrives verified")
    func unreliableEdge() throws {
        let root = try ClientRoot.make("client-flaky")
        defer { root.cleanup() }
        let server = try PythonServer.start(Self.flakyServer, args: [root.root])
        defer { server.stop() }
        let (url, port) = (server.url, server.port)

        let cache = ClientCache(dir: root.dir + "/cache")
        let manifest = try root.manifest()
        let distinct = Set(manifest.entries.map(\.sha256))
        let sync = try ClientTest.folio(["sync", "--json"], cache: cache.dir, edge: url)
        #expect(sync.status == 0, "\(sync.stderr)")
        let s = try ClientSyncSummary(sync)
        #expect(s.result == "updated")
        #expect(s.objectsFetched == distinct.count)
        #expect(cache.badObjects().isEmpty)
        #expect(try cache.state()?.version == manifest.version)
        // The server did drop connections and refuse requests (else this test proves nothing),
        // and each 503 cost exactly one more request.
        let stats = try RawHTTPConnection.fetch(port: port, "/stats").text.split(separator: " ").compactMap { Int($0) }
        #expect(stats.count == 3)
        let (requests, dropped, busy) = (stats[0] - 1, stats[1], stats[2])
        #expect(dropped > 10 && busy > 5, "\(stats)")
        #expect(s.requests == 1 + distinct.count + busy)
        #expect(requests == s.requests)
        let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache.dir, edge: url)
        #expect(read.status == 0)
        #expect(read.stdout.contains(Self.summerLine))
    }

    @Test("an object the edge serves with wrong bytes is rejected; the cache keeps what it had")
    func tamperedObject() throws {
        // --memory-budget 0: the edge verifies objects when it loads a version, then reads them
        // from disk for each request, so bytes changed after the load are what it serves.
        try withEdge("client-tamper", edgeArgs: ["--memory-budget", "0"]) { root, edge, held in
            let m1 = try root.manifest()
            #expect(try ClientTest.folio(["sync"], cache: held.dir, edge: edge.baseURL).status == 0)

            try root.replace(in: 18, Self.summerLine, with: Self.winterLine)
            // gzip only: sync asks for brotli first, and a brotli stream cannot be padded to a
            // published length as simply as a gzip one (its sha256 check is the same either way).
            try root.publish(["--no-brotli"])
            let m2 = try root.manifest()
            try edge.requireVersion(m2.version)

            // Tamper with the new sonnet 18 in both encodings, keeping every length.
            let entry = try #require(m2.entry("sonnets/018.plist"))
            let original = try FileIO.read(root.root + "/" + entry.objectPath)
            var tampered: (plist: [UInt8], gzip: [UInt8]?)?
            for candidate in ClientTamper.variants(of: original) {
                guard let gzipSize = entry.gzipSize else {
                    tampered = (candidate, nil)
                    break
                }
                if let z = ClientTamper.gzip(candidate, length: gzipSize) {
                    tampered = (candidate, z)
                    break
                }
            }
            let bad = try #require(tampered, "no same-length tampering found")
            try FileIO.writeAtomically(bad.plist, to: root.root + "/" + entry.objectPath)
            if let z = bad.gzip, let gzPath = entry.gzipObjectPath {
                try FileIO.writeAtomically(z, to: root.root + "/" + gzPath)
            }
            // The edge now serves the wrong bytes (otherwise this test would prove nothing).
            let identity = try RawHTTPConnection.fetch(port: edge.port, "/" + entry.objectPath)
            #expect(identity.status == 200)
            #expect(identity.body == bad.plist)
            if let z = bad.gzip {
                let gz = try RawHTTPConnection.fetch(port: edge.port, "/" + entry.objectPath, headers: [("Accept-Encoding", "gzip")])
                #expect(gz.status == 200)
                #expect(gz.header("Content-Encoding") == "gzip")
                #expect(gz.body == z)
            }

            // A fresh cache: the sync fails and no version becomes current.
            let fresh = ClientCache(dir: root.dir + "/fresh-cache")
            let out = try ClientTest.folio(["sync", "--json"], cache: fresh.dir, edge: edge.baseURL)
            #expect(out.status == 1, "\(out.stdout)")
            #expect(out.stderr.contains("does not match the manifest"), "\(out.stderr)")
            #expect(out.stderr.contains("sonnets/018.plist"))
            #expect(!FileIO.exists(fresh.statePath))
            let status = try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: fresh.dir, edge: edge.baseURL))
            #expect(status["version"] == nil)
            #expect(!FileIO.exists(fresh.objectPath(entry.sha256)))
            #expect(fresh.badObjects().isEmpty)

            // A cache at the previous version stays there. (Without --no-delta it would rebuild the
            // object from the edge's delta and never see the wrong bytes.)
            let again = try ClientTest.folio(["sync", "--force", "--no-delta"], cache: held.dir, edge: edge.baseURL)
            #expect(again.status == 1)
            #expect(again.stderr.contains("does not match the manifest"), "\(again.stderr)")
            #expect(try held.state()?.version == m1.version)
            #expect(try held.currentManifest() == m1)
            #expect(held.badObjects().isEmpty)
            // status reports the failed attempt, and the version it still holds.
            let afterFailure = try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: held.dir, edge: edge.baseURL))
            #expect(afterFailure["lastResult"]?.stringValue == "failed")
            #expect(afterFailure["lastError"]?.stringValue?.contains("does not match the manifest") == true)
            #expect(afterFailure["version"]?.intValue == m1.version)
            let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: held.dir, edge: edge.baseURL)
            #expect(read.status == 0)
            #expect(read.stdout.contains(Self.summerLine))
        }
    }

    @Test("a damaged cache: read reports the corrupt object, sync repairs only what is damaged")
    func damagedCache() throws {
        try withEdge("client-damaged") { root, edge, cache in
            #expect(try ClientTest.folio(["sync"], cache: cache.dir, edge: edge.baseURL).status == 0)
            let manifest = try cache.currentManifest()
            let e18 = try #require(manifest.entry("sonnets/018.plist"))
            let e30 = try #require(manifest.entry("sonnets/030.plist"))
            // Alter sonnet 18 (same size), truncate sonnet 30.
            var altered = try FileIO.read(cache.objectPath(e18.sha256))
            altered[altered.count / 2] ^= 0x20
            try FileIO.writeAtomically(altered, to: cache.objectPath(e18.sha256))
            let full30 = try FileIO.read(cache.objectPath(e30.sha256))
            try FileIO.writeAtomically(Array(full30.prefix(full30.count / 2)), to: cache.objectPath(e30.sha256))
            let damaged: Set = [e18.sha256 + ".plist", e30.sha256 + ".plist"]
            let untouched = Harness.snapshot(cache.objectsDir).filter { !damaged.contains($0.key) }

            for n in ["18", "30"] {
                let read = try ClientTest.folio(["read", "sonnet", n, "--offline"], cache: cache.dir, edge: edge.baseURL)
                #expect(read.status != 0, "sonnet \(n): \(read.stdout)")
                #expect(read.stderr.contains("corrupt"), "sonnet \(n): \(read.stderr)")
            }

            let out = try ClientTest.folio(["sync", "--force", "--json"], cache: cache.dir, edge: edge.baseURL)
            #expect(out.status == 0, "\(out.stderr)")
            let s = try ClientSyncSummary(out)
            #expect(s.result == "repaired")
            #expect(s.objectsFetched == 2)
            #expect(s.requests == 3)
            #expect(s.versionAfter == manifest.version)
            #expect(cache.badObjects().isEmpty)
            #expect(cache.missingEntries(manifest).isEmpty)
            #expect(cache.mismatchedEntries(manifest).isEmpty)
            let after = Harness.snapshot(cache.objectsDir)
            #expect(after.filter { !damaged.contains($0.key) } == untouched)
            #expect(try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache.dir, edge: edge.baseURL).stdout == ClientTest.sourceText(18))
            #expect(try ClientTest.folio(["read", "sonnet", "30", "--offline"], cache: cache.dir, edge: edge.baseURL).stdout == ClientTest.sourceText(30))
            // Nothing left to repair: a plain sync is fresh again.
            #expect(try ClientSyncSummary(try ClientTest.folio(["sync", "--json"], cache: cache.dir, edge: edge.baseURL)).result == "fresh")
        }
    }

    @Test("a corrupt cached object fails like every other error: one `folio: error:` line")
    func corruptObjectErrorFormat() throws {
        // Folio.main: "expected failures print one `folio: error:` line" (docs/exit-codes.md: exit 1 with
        // one `folio: error:` line). A damaged cache is an expected failure with its own message.
        try withEdge("client-corruptfmt") { _, edge, cache in
            #expect(try ClientTest.folio(["sync"], cache: cache.dir, edge: edge.baseURL).status == 0)
            let entry = try #require(try cache.currentManifest().entry("sonnets/018.plist"))
            var bytes = try FileIO.read(cache.objectPath(entry.sha256))
            bytes[bytes.count / 2] ^= 0x20
            try FileIO.writeAtomically(bytes, to: cache.objectPath(entry.sha256))

            for args in [["read", "sonnet", "18", "--offline"], ["show", "sonnets/018.plist", "--offline"]] {
                let out = try ClientTest.folio(args, cache: cache.dir, edge: edge.baseURL)
                #expect(out.status == 1, "\(args)")
                let lines = out.stderr.split(separator: "\n")
                #expect(lines.count == 1, "\(args): \(out.stderr)")
                #expect(out.stderr.hasPrefix("folio: error: cached object for sonnets/018.plist is corrupt"), "\(args): \(out.stderr)")
            }
        }
    }

    @Test("one sync at a time: --no-wait fails while the lock is held; otherwise sync waits for it")
    func lock() throws {
        try withEdge("client-lock") { root, edge, cache in
            try FileIO.makeDirectory(cache.dir)
            let fd = open(cache.dir + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            try #require(fd >= 0)
            var held = flock(fd, LOCK_EX) == 0
            defer { if held { close(fd) } }
            try #require(held)

            let busy = try ClientTest.folio(["sync", "--no-wait"], cache: cache.dir, edge: edge.baseURL)
            #expect(busy.status == 1)
            #expect(busy.stderr.contains("another folio sync is running"), "\(busy.stderr)")
            #expect(!FileIO.exists(cache.statePath))

            let waiting = try ClientProcess(["sync", "--json", "--cache-dir", cache.dir, "--edge", edge.baseURL])
            defer { waiting.finish() }
            ClientTest.sleep(ms: 500)
            #expect(waiting.isRunning)
            #expect(waiting.stderr.contains("waiting"), "\(waiting.stderr)")
            #expect(!FileIO.exists(cache.statePath))

            flock(fd, LOCK_UN)
            close(fd)
            held = false
            let status = waiting.wait(timeout: 30)
            #expect(status == 0, "\(waiting.stderr)")
            let out = Harness.Output(status: status, stdoutBytes: Array(waiting.stdout.utf8), stderr: waiting.stderr)
            let s = try ClientSyncSummary(out)
            #expect(s.result == "updated")
            #expect(s.versionAfter == (try root.manifest().version))
        }
    }

    @Test("crash safety: syncs killed at random instants always leave a readable, verified cache")
    func crashSafety() throws {
        let a = try ClientRoot.make("client-crashA")
        defer { a.cleanup() }
        // B: every line of every sonnet changed, and one version newer.
        let b = try ClientRoot.make("client-crashB")
        defer { b.cleanup() }
        for n in 1...154 { try b.rewriteLines(of: n) { _, line in line + " ~" } }
        try b.publish()
        let ma = try a.manifest()
        let mb = try b.manifest()
        try #require(ma.version != mb.version)
        let edgeA = try EdgeProcess.start(root: a.root, args: ClientTest.edgeArgs)
        defer { edgeA.stop() }
        let edgeB = try EdgeProcess.start(root: b.root, args: ClientTest.edgeArgs)
        defer { edgeB.stop() }

        let cache = ClientCache(dir: a.dir + "/cache")
        #expect(try ClientTest.folio(["sync"], cache: cache.dir, edge: edgeA.baseURL).status == 0)
        let protected: Set = [try #require(ma.entry("sonnets/018.plist")).sha256, try #require(mb.entry("sonnets/018.plist")).sha256]
        func dropHalf() {
            // About half the objects (never sonnet 18's), so every sync has work to do.
            for name in cache.objectNames() where !protected.contains(String(name.dropLast(6))) && Bool.random() {
                unlink(cache.objectsDir + "/" + name)
            }
        }
        // How long one such sync takes here (debug builds, loaded machines): kills are spread
        // over that whole span, so they land before, during and after the state switch.
        dropHalf()
        let clock = ContinuousClock()
        let started = clock.now
        let calibration = try ClientTest.folio(["sync", "--force", "--allow-downgrade"], cache: cache.dir, edge: edgeB.baseURL)
        let elapsed = clock.now - started
        #expect(calibration.status == 0, "\(calibration.stderr)")
        #expect(try cache.currentManifest() == mb)
        let span = max(150, Int(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15))

        var interrupted = 0
        var completed = 0
        for round in 0..<15 {
            let towardB = round % 2 == 1
            dropHalf()
            let delay = Int.random(in: 0...span)
            let p = try ClientProcess([
                "sync", "--force", "--allow-downgrade", "--json", "--cache-dir", cache.dir,
                "--edge", towardB ? edgeB.baseURL : edgeA.baseURL,
            ])
            ClientTest.sleep(ms: delay)
            let killed = p.killNow()
            let status = p.wait(timeout: 30)
            let stderr = p.stderr
            p.finish()
            if killed { interrupted += 1 } else { completed += 1 }
            let context = "round \(round): sync toward \(towardB ? "B" : "A") \(killed ? "killed after \(delay) ms" : "finished (\(status)): \(stderr)")"
            if !killed { #expect(status == 0, "\(context)") }

            do {
                let held = try cache.currentManifest()
                #expect(held == ma || held == mb, "\(context)")
                #expect(cache.mismatchedEntries(held).isEmpty, "\(context)")
                #expect(cache.badObjects().isEmpty, "\(context): \(cache.badObjects())")
                // Each edge is an environment of its own: read the current one through its edge.
                let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache.dir, edge: held == mb ? edgeB.baseURL : edgeA.baseURL)
                #expect(read.status == 0, "\(context): \(read.stderr)")
                let first = read.stdout.split(separator: "\n").dropFirst().first.map(String.init)
                #expect(first == (held == mb ? ClientSyncTests.summerLine + " ~" : ClientSyncTests.summerLine), "\(context)")
            } catch {
                Issue.record("\(context): the cache has no readable current version: \(error)")
            }
        }
        #expect(interrupted >= 1, "no kill landed while a sync ran (\(completed) finished first)")

        let final = try ClientTest.folio(["sync", "--force", "--allow-downgrade", "--json"], cache: cache.dir, edge: edgeA.baseURL)
        #expect(final.status == 0, "\(final.stderr)")
        #expect(try cache.currentManifest() == ma)
        #expect(cache.missingEntries(ma).isEmpty)
        #expect(cache.mismatchedEntries(ma).isEmpty)
        #expect(cache.badObjects().isEmpty)
        #expect(try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache.dir, edge: edgeA.baseURL).stdout == ClientTest.sourceText(18))
        // The sync after the kills removed the temporary files they left behind.
        let leftovers = Harness.snapshot(cache.dir).keys.filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("a manifest with the same version number but other content fetches its own objects")
    func sameVersionOtherContent() throws {
        try withTwoOriginsAtOneVersion("client-samecontent") { _, mb, edgeA, edgeB, cache in
            #expect(try ClientTest.folio(["sync"], cache: cache.dir, edge: edgeA.baseURL).status == 0)
            let r = try ClientTest.folio(["sync", "--force", "--json"], cache: cache.dir, edge: edgeB.baseURL)
            #expect(r.status == 0, "\(r.stderr)")
            let summary = try ClientTest.json(r)
            #expect(summary["result"]?.stringValue == "updated")
            #expect(summary["objectsFetched"]?.intValue == 3)  // 018, index and all
            #expect(try cache.currentManifest() == mb)
            #expect(cache.missingEntries(mb).isEmpty)
            let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache.dir, edge: edgeB.baseURL)
            #expect(read.stdout.contains("winter’s night") || read.stdout.contains(Self.winterLine), "\(read.stdout)")
        }
    }

    /// Two published roots at the same version number with different content (sonnet 18
    /// edited in B), each behind its own edge, and a cache to sync between them.
    private func withTwoOriginsAtOneVersion(
        _ label: String,
        _ body: (_ ma: Manifest, _ mb: Manifest, _ edgeA: EdgeProcess, _ edgeB: EdgeProcess, _ cache: ClientCache) throws -> Void
    ) throws {
        let a = try ClientRoot.make(label + "A")
        defer { a.cleanup() }
        let b = try ClientRoot.make(label + "B") { r in try r.replace(in: 18, Self.summerLine, with: Self.winterLine) }
        defer { b.cleanup() }
        let ma = try a.manifest()
        let mb = try b.manifest()
        try #require(ma.version == mb.version && ma != mb)
        let edgeA = try EdgeProcess.start(root: a.root, args: ClientTest.edgeArgs)
        defer { edgeA.stop() }
        let edgeB = try EdgeProcess.start(root: b.root, args: ClientTest.edgeArgs)
        defer { edgeB.stop() }
        try body(ma, mb, edgeA, edgeB, ClientCache(dir: a.dir + "/cache"))
    }

    @Test("crash safety when two edges publish the same version number with different content")
    func crashSameVersionNumber() throws {
        // Two origins (or one rebuilt from scratch) can both be at version N with different
        // content. Syncing from one to the other stores the new manifests/<N>.plist over the one
        // state.plist names, before state.plist is switched: killed in between, the cache has
        // no current version. Kill the sync the moment a manifest lands in manifests/.
        try withTwoOriginsAtOneVersion("client-same") { ma, _, edgeA, edgeB, cache in
            let manifestsDir = cache.dir + "/manifests"

            func listing() -> [String: UInt64] {
                var out: [String: UInt64] = [:]
                for name in (try? FileIO.list(manifestsDir)) ?? [] where !name.hasPrefix(".") {
                    var st = stat()
                    if stat(manifestsDir + "/" + name, &st) == 0 { out[name] = UInt64(st.st_ino) }
                }
                return out
            }

            for attempt in 0..<4 {
                let start = try ClientTest.folio(["sync", "--force"], cache: cache.dir, edge: edgeA.baseURL)
                try #require(start.status == 0, "\(start.stderr)")
                try #require(try cache.currentManifest() == ma)
                let before = listing()
                let p = try ClientProcess(["sync", "--force", "--cache-dir", cache.dir, "--edge", edgeB.baseURL])
                var killed = false
                let deadline = Date().addingTimeInterval(20)
                while p.isRunning, Date() < deadline {
                    if listing() != before {
                        killed = p.killNow()
                        break
                    }
                }
                _ = p.wait(timeout: 20)
                p.finish()
                let status = try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: cache.dir, edge: edgeA.baseURL))
                #expect(status["version"]?.intValue == ma.version, "attempt \(attempt) (killed: \(killed)): the cache lost its current version")
                let read = try ClientTest.folio(["read", "sonnet", "18", "--offline", "--verbose"], cache: cache.dir, edge: edgeA.baseURL)
                #expect(read.stderr.contains("from the cache"), "attempt \(attempt) (killed: \(killed)): \(read.stderr)")
                if status["version"] == nil { break }
            }
        }
    }
}
