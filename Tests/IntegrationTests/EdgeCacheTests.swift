import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// `folio-edge --origin`: the real binaries on loopback, a published fixture behind a plain
/// edge as the origin, or a Python origin that counts what reaches it.
extension EdgeIntegration {
    @Suite("folio-edge --origin: the cache tier", .serialized)
    struct CacheTier {
        static let token = "test-token-0123456789abcdef"

        /// A fixture, an edge serving it, and a cache tier in front (with a cache directory and
        /// the purge token). `body` gets all three; everything is stopped after.
        func withTier(
            _ label: String, extraArgs: [String] = [],
            _ body: (EdgeFixture, EdgeProcess, EdgeProcess, String) async throws -> Void
        ) async throws {
            let fixture = try EdgeFixture.make(label)
            defer { fixture.cleanup() }
            let origin = try EdgeProcess.start(root: fixture.root)
            defer { origin.stop() }
            let tokenFile = fixture.dir + "/token"
            try FileIO.writeAtomically(Array((Self.token + "\n").utf8), to: tokenFile)
            let tier = try EdgeProcess.start(
                root: fixture.root,
                args: ["--origin", origin.baseURL, "--cache-dir", fixture.dir + "/cache", "--purge-token-file", tokenFile] + extraArgs)
            defer { tier.stop() }
            try await body(fixture, origin, tier, fixture.dir + "/cache")
        }

        static func cacheStatus(_ r: EdgeResponse) -> String { r.header("Cache-Status") ?? "" }

        @Test("objects are stored on the first request and hits after; folio sync through the tier verifies; a restart keeps the cache")
        func syncThroughTier() async throws {
            try await withTier("cache-sync") { fixture, origin, tier, cacheDir in
                let manifest = try fixture.manifest()
                let entry = try #require(manifest.entry("sonnets/018.plist"))
                let first = try RawHTTPConnection.fetch(port: tier.port, "/" + entry.objectPath)
                #expect(first.status == 200)
                #expect(first.body == (try fixture.bytes(entry.objectPath)))
                #expect(Self.cacheStatus(first).contains("fwd=uri-miss; stored"), "\(first.headers)")
                let second = try RawHTTPConnection.fetch(port: tier.port, "/" + entry.objectPath)
                #expect(second.body == first.body)
                #expect(Self.cacheStatus(second) == "folio-edge; hit", "\(second.headers)")
                #expect(second.header("ETag") == first.header("ETag"))
                #expect(second.header("Age") != nil)
                let etag = try #require(first.header("ETag"))
                let notModified = try RawHTTPConnection.fetch(port: tier.port, "/" + entry.objectPath, headers: [("If-None-Match", etag)])
                #expect(notModified.status == 304 && notModified.body.isEmpty)
                #expect(notModified.header("ETag") == etag && notModified.header("Content-Type") == nil && notModified.header("Age") != nil)
                #expect(Self.cacheStatus(notModified) == "folio-edge; hit", "\(notModified.headers)")
                let other = try RawHTTPConnection.fetch(port: tier.port, "/" + entry.objectPath, headers: [("If-None-Match", "\"other\"")])
                #expect(other.status == 200 && other.body == first.body)
                let metrics = try RawHTTPConnection.fetch(port: tier.port, "/.folio/metrics").text
                #expect(EdgeProcess.metric("folio_edge_cache_responses_total{result=\"hit\"}", in: metrics) == 3, "\(metrics)")
                #expect(EdgeProcess.metric("folio_edge_cache_responses_total{result=\"miss\"}", in: metrics) == 1)
                #expect(EdgeProcess.metric("folio_edge_cache_entries", in: metrics) == 1)

                // A client syncs through the tier and verifies every object.
                let cache = fixture.dir + "/client"
                let sync = try Harness.run(
                    Harness.binary("folio"), ["--cache-dir", cache, "--edge", tier.baseURL, "sync", "--json"])
                #expect(sync.status == 0, "\(sync.stderr)")
                let summary = try ClientSyncSummary(sync)
                #expect(summary.versionAfter == manifest.version && summary.objectsFetched > 100, "\(sync.stdout)")

                // With the origin gone, a second client still syncs, from the tier's cache.
                origin.stop()
                let offline = try Harness.run(
                    Harness.binary("folio"), ["--cache-dir", fixture.dir + "/client2", "--edge", tier.baseURL, "sync"])
                #expect(offline.status == 0, "\(offline.stderr)")

                // Restarted on the same directory, still without an origin, the tier serves hits.
                tier.stop()
                let again = try EdgeProcess.start(root: fixture.root, args: ["--origin", origin.baseURL, "--cache-dir", cacheDir])
                defer { again.stop() }
                let afterRestart = try RawHTTPConnection.fetch(port: again.port, "/" + entry.objectPath)
                #expect(afterRestart.status == 200)
                #expect(afterRestart.body == first.body)
                #expect(Self.cacheStatus(afterRestart) == "folio-edge; hit", "\(afterRestart.headers)")
            }
        }

        @Test("a manifest is served once its objects are cached: with the origin gone after it, a client still syncs")
        func manifestPrefetch() async throws {
            try await withTier("cache-prefetch") { fixture, origin, tier, _ in
                let manifest = try fixture.manifest()
                // As sync asks: the tier prefetches the objects with the manifest's Accept-Encoding.
                let sync = [("Accept-Encoding", "br, gzip")]
                let first = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: sync)
                #expect(first.status == 200)
                #expect(first.header("Content-Encoding") == "br")
                origin.stop()
                let entry = try #require(manifest.entry("sonnets/018.plist"))
                let object = try RawHTTPConnection.fetch(port: tier.port, "/" + entry.objectPath, headers: sync)
                #expect(object.status == 200)
                #expect(Self.cacheStatus(object) == "folio-edge; hit", "\(object.headers)")
                let synced = try Harness.run(
                    Harness.binary("folio"), ["--cache-dir", fixture.dir + "/client", "--edge", tier.baseURL, "sync", "--json"])
                #expect(synced.status == 0, "\(synced.stderr)")
                #expect(try ClientSyncSummary(synced).versionAfter == manifest.version)
            }
        }

        @Test("folio-build --notify: the tier revalidates its manifest at once, and has the new objects before serving it", .enabled(if: !TestStack.current.isTLS, "folio-build --notify speaks plain http (a tier takes it on its --admin-listen port)"))
        func notify() async throws {
            let fixture = try EdgeFixture.make("cache-notify", editableContent: true)
            defer { fixture.cleanup() }
            let origin = try EdgeProcess.start(root: fixture.root, args: ["--watch-interval-ms", "50"])
            defer { origin.stop() }
            let tier = try EdgeProcess.start(root: fixture.root, args: ["--origin", origin.baseURL])
            defer { tier.stop() }
            let gzip = [("Accept-Encoding", "gzip")]
            let v1 = try fixture.manifest().version
            #expect(try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: gzip).status == 200)
            #expect(try RawHTTPConnection.fetch(port: tier.port, "/head.plist").status == 200)

            let sonnet = fixture.content + "/sonnets/018.txt"
            let text = String(decoding: try FileIO.read(sonnet), as: UTF8.self)
            try FileIO.writeAtomically(Array(text.replacingOccurrences(of: "summer", with: "winter").utf8), to: sonnet)
            let publish = try Harness.run(
                Harness.binary("folio-build"),
                ["--content", fixture.content, "--output", fixture.root, "--quiet", "--notify", "http://127.0.0.1:1", "--notify", tier.baseURL],
                env: EdgeFixture.buildEnv)
            #expect(publish.status == 0, "\(publish.stderr)")
            #expect(publish.stderr.contains("could not notify http://127.0.0.1:1"), "\(publish.stderr)")
            // A second notify within the second is refused: notifying costs origin requests.
            #expect(try RawHTTPConnection.fetch(port: tier.port, "POST", "/.folio/notify").status == 429)
            let v2 = try fixture.manifest()
            #expect(v2.version == v1 + 1)
            #expect(await origin.waitForVersion(v2.version, timeout: 10) != nil)

            // The manifest's max-age has not run out, yet the tier now serves version 2, and the
            // new sonnet is already in its cache.
            var served: Manifest?
            for _ in 0..<100 {
                // The same variant as before (gzip), or the tier would fetch it anew anyway.
                let r = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: gzip)
                let body = r.header("Content-Encoding") == "gzip" ? try Gzip.decompress(r.body, maxSize: 1 << 24) : r.body
                served = try? Manifest(bytes: body)
                if served?.version == v2.version { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(served?.version == v2.version)
            // And so does head.plist, which delta clients ask for instead of the manifest.
            var head: DeltaHead?
            for _ in 0..<100 {
                head = try? DeltaHead(bytes: try RawHTTPConnection.fetch(port: tier.port, "/head.plist").body)
                if head?.version == v2.version { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(head?.version == v2.version)
            #expect(head?.deltasFrom == [v1])
            let entry = try #require(v2.entry("sonnets/018.plist"))
            let object = try RawHTTPConnection.fetch(port: tier.port, "/" + entry.objectPath, headers: gzip)
            #expect(Self.cacheStatus(object) == "folio-edge; hit", "\(object.headers)")
        }

        @Test("purge: disabled without a token file, 401 without a token, 403 with a wrong one; hard drops, soft revalidates")
        func purge() async throws {
            try await withTier("cache-purge") { fixture, origin, tier, _ in
                let path = "/" + (try #require(try fixture.manifest().entry("sonnets/018.plist"))).objectPath
                _ = try RawHTTPConnection.fetch(port: tier.port, path)
                #expect(Self.cacheStatus(try RawHTTPConnection.fetch(port: tier.port, path)) == "folio-edge; hit")

                #expect(try RawHTTPConnection.fetch(port: tier.port, "PURGE", path).status == 401)
                #expect(try RawHTTPConnection.fetch(port: tier.port, "PURGE", path, headers: [("Authorization", "Bearer wrong-token-0123456789")]).status == 403)
                #expect(Self.cacheStatus(try RawHTTPConnection.fetch(port: tier.port, path)) == "folio-edge; hit")

                let auth = [("Authorization", "Bearer \(Self.token)")]
                let hard = try RawHTTPConnection.fetch(port: tier.port, "PURGE", path, headers: auth)
                #expect(hard.status == 200 && hard.text.contains("\"purged\":1"), "\(hard.status) \(hard.text)")
                #expect(Self.cacheStatus(try RawHTTPConnection.fetch(port: tier.port, path)).contains("fwd=uri-miss"))

                let soft = try RawHTTPConnection.fetch(port: tier.port, "POST", "/.folio/purge?prefix=/objects/&soft", headers: auth)
                #expect(soft.status == 200 && soft.text.contains("\"soft\":true"), "\(soft.text)")
                let revalidated = try RawHTTPConnection.fetch(port: tier.port, path)
                #expect(revalidated.status == 200)
                #expect(Self.cacheStatus(revalidated).contains("fwd=stale; fwd-status=304"), "\(revalidated.headers)")

                let everything = try RawHTTPConnection.fetch(port: tier.port, "POST", "/.folio/purge?all", headers: auth)
                #expect(everything.status == 200)
                #expect(Self.cacheStatus(try RawHTTPConnection.fetch(port: tier.port, path)).contains("fwd=uri-miss"))
                _ = origin
            }
            // No token file: purge is disabled.
            let fixture = try EdgeFixture.make("cache-no-token")
            defer { fixture.cleanup() }
            let origin = try EdgeProcess.start(root: fixture.root)
            defer { origin.stop() }
            let tier = try EdgeProcess.start(root: fixture.root, args: ["--origin", origin.baseURL])
            defer { tier.stop() }
            let refused = try RawHTTPConnection.fetch(port: tier.port, "PURGE", "/manifest.plist", headers: [("Authorization", "Bearer \(Self.token)")])
            #expect(refused.status == 403 && refused.text.contains("--purge-token-file"), "\(refused.text)")
        }

        @Test("maintenance: what is stored is served, stale or not; a miss is 503 with Retry-After")
        func maintenance() async throws {
            let fixture = try EdgeFixture.make("cache-maintenance")
            defer { fixture.cleanup() }
            let origin = try EdgeProcess.start(root: fixture.root)
            defer { origin.stop() }
            let flag = fixture.dir + "/maintenance"
            let tier = try EdgeProcess.start(root: fixture.root, args: ["--origin", origin.baseURL, "--maintenance-file", flag])
            defer { tier.stop() }
            let manifest = try fixture.manifest()
            let stored = "/" + (try #require(manifest.entry("sonnets/018.plist"))).objectPath
            let other = "/" + (try #require(manifest.entry("sonnets/019.plist"))).objectPath
            let before = try RawHTTPConnection.fetch(port: tier.port, stored)
            #expect(before.status == 200)

            try FileIO.writeAtomically([], to: flag)
            try await Task.sleep(for: .milliseconds(1100))
            let hit = try RawHTTPConnection.fetch(port: tier.port, stored)
            #expect(hit.status == 200 && hit.body == before.body)
            #expect(Self.cacheStatus(hit).contains("detail=maintenance"), "\(hit.headers)")
            let miss = try RawHTTPConnection.fetch(port: tier.port, other)
            #expect(miss.status == 503)
            #expect(miss.header("Retry-After") != nil)

            try FileManager.default.removeItem(atPath: flag)
            try await Task.sleep(for: .milliseconds(1100))
            #expect(try RawHTTPConnection.fetch(port: tier.port, other).status == 200)
        }

        /// Counts requests per path and the most in flight at once; answers after 300 ms,
        /// cacheable for a minute unless the path starts with /private.
        static let slowOrigin = #"""
            import http.server, threading, time
            lock = threading.Lock()
            state = {"count": {}, "inflight": 0, "max": 0}
            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def log_message(self, *args): pass
                def do_GET(self):
                    if self.path == "/stats":
                        with lock: body = ("%d %d" % (sum(state["count"].values()), state["max"])).encode()
                        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.send_header("Cache-Control", "no-store"); self.end_headers(); self.wfile.write(body); return
                    with lock:
                        state["count"][self.path] = state["count"].get(self.path, 0) + 1
                        state["inflight"] += 1
                        state["max"] = max(state["max"], state["inflight"])
                    time.sleep(0.3)
                    with lock: state["inflight"] -= 1
                    body = b"x" * 100
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Cache-Control", "no-store" if self.path.startswith("/private") else "max-age=60")
                    self.send_header("X-Path", self.path)
                    self.end_headers()
                    self.wfile.write(body)
            serve(Handler)
            """#

        @Test("coalescing: concurrent misses for one URL make one origin request; for an uncacheable URL they do not queue")
        func coalescing() async throws {
            let server = try PythonServer.start(Self.slowOrigin)
            defer { server.stop() }
            let dir = Harness.tempDir("cache-coalesce")
            defer { Harness.cleanup(dir) }
            let tier = try EdgeProcess.start(root: dir, args: ["--origin", server.url])
            defer { tier.stop() }
            func stats() throws -> [Int] {
                try RawHTTPConnection.fetch(port: server.port, "/stats").text.split(separator: " ").compactMap { Int($0) }
            }
            func burst(_ path: String) async -> [Int] {
                let statuses = EdgeLocked([Int]())
                let threads = EdgeThreads.spawn(20) { _ in
                    let s = (try? RawHTTPConnection.fetch(port: tier.port, path).status) ?? 0
                    statuses.with { $0.append(s) }
                }
                _ = await threads.join(timeout: 30)
                return statuses.value
            }
            let cacheable = await burst("/shared")
            #expect(cacheable.count == 20 && cacheable.allSatisfy { $0 == 200 }, "\(cacheable)")
            let afterShared = try stats()
            #expect(afterShared[0] == 1, "origin requests for one cacheable URL: \(afterShared[0])")

            // The first no-store answer marks the URL as not worth waiting on: the next burst goes
            // to the origin together, not one after another.
            _ = try RawHTTPConnection.fetch(port: tier.port, "/private")
            let uncacheable = await burst("/private")
            #expect(uncacheable.allSatisfy { $0 == 200 }, "\(uncacheable)")
            let afterPrivate = try stats()
            #expect(afterPrivate[0] == 1 + 1 + 20)
            #expect(afterPrivate[1] >= 5, "at most \(afterPrivate[1]) origin requests were in flight at once")
        }

        @Test("pipelined requests are answered in order: a hit waits for an earlier miss; a malformed request is 400, then close", .http1Only)
        func pipelining() async throws {
            let server = try PythonServer.start(Self.slowOrigin)
            defer { server.stop() }
            let dir = Harness.tempDir("cache-pipeline")
            defer { Harness.cleanup(dir) }
            let tier = try EdgeProcess.start(root: dir, args: ["--origin", server.url])
            defer { tier.stop() }
            #expect(try RawHTTPConnection.fetch(port: tier.port, "/cached").status == 200)
            let c = try RawHTTPConnection(port: tier.port)
            defer { c.close() }
            try c.send(RawHTTPConnection.head("GET", "/slow") + RawHTTPConnection.head("HEAD", "/cached") + RawHTTPConnection.head("GET", "/cached"))
            let answers = try c.readResponses(["GET", "HEAD", "GET"])
            #expect(answers.map { $0.header("X-Path") } == ["/slow", "/cached", "/cached"])
            #expect(answers.map(\.status) == [200, 200, 200])
            #expect(answers[1].body.isEmpty && answers[1].header("Content-Length") == "100")
            #expect(answers[2].body.count == 100 && answers[2].header("Cache-Status") == "folio-edge; hit")

            // 300 pipelined requests at once, past the 128 outstanding at which the tier stops
            // reading: every one answered, in order.
            let many = (0..<300).map { RawHTTPConnection.head("GET", "/cached?n=\($0)") }.joined()
            try c.send(many)
            let paths = try c.readResponses(Array(repeating: "GET", count: 300)).map { $0.header("X-Path") ?? "" }
            #expect(paths == (0..<300).map { "/cached?n=\($0)" })

            try c.send("GET /cached HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
            let bad = try c.readResponse()
            #expect(bad.status == 400)
            #expect(c.waitForClose(timeout: 5))
        }

        /// An https origin on a certificate made for 127.0.0.1 by `openssl req -x509`.
        static let tlsOrigin = #"""
            import http.server, ssl, sys
            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def log_message(self, *args): pass
                def do_GET(self):
                    body = b"over tls\n"
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Cache-Control", "max-age=60")
                    self.end_headers()
                    self.wfile.write(body)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1], sys.argv[2])
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            server.socket = context.wrap_socket(server.socket, server_side=True)
            print("port %d" % server.server_address[1], flush=True)
            server.serve_forever()
            """#

        @Test("an https origin: trusted through --origin-ca, refused (502) on the system's roots")
        func httpsOrigin() async throws {
            let dir = Harness.tempDir("cache-tls")
            defer { Harness.cleanup(dir) }
            let made = try Harness.run(
                "/usr/bin/openssl",
                ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem", "-days", "1",
                 "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
            #expect(made.status == 0, "\(made.stderr)")
            let server = try PythonServer.start(Self.tlsOrigin, args: [dir + "/cert.pem", dir + "/key.pem"])
            defer { server.stop() }
            let origin = "https://127.0.0.1:\(server.port)"
            let trusted = try EdgeProcess.start(root: dir, args: ["--origin", origin, "--origin-ca", dir + "/cert.pem"])
            defer { trusted.stop() }
            let first = try RawHTTPConnection.fetch(port: trusted.port, "/page")
            #expect(first.status == 200 && first.text == "over tls\n", "\(first.status) \(first.text)")
            #expect(Self.cacheStatus(try RawHTTPConnection.fetch(port: trusted.port, "/page")) == "folio-edge; hit")
            let untrusted = try EdgeProcess.start(root: dir, args: ["--origin", origin])
            defer { untrusted.stop() }
            #expect(try RawHTTPConnection.fetch(port: untrusted.port, "/page").status == 502)
        }

        @Test("tiers chain: a cache tier whose origin is another cache tier")
        func chained() async throws {
            try await withTier("cache-chain") { fixture, _, tier, _ in
                let outer = try EdgeProcess.start(root: fixture.root, args: ["--origin", tier.baseURL])
                defer { outer.stop() }
                let path = "/" + (try #require(try fixture.manifest().entry("sonnets/018.plist"))).objectPath
                let first = try RawHTTPConnection.fetch(port: outer.port, path)
                let expected = try fixture.bytes(String(path.dropFirst()))
                #expect(first.status == 200 && first.body == expected)
                #expect(first.values("Cache-Status").count == 2, "\(first.headers)")
                let second = try RawHTTPConnection.fetch(port: outer.port, path)
                #expect(second.values("Cache-Status").last == "folio-edge; hit", "\(second.headers)")
                let sync = try Harness.run(Harness.binary("folio"), ["--cache-dir", fixture.dir + "/client", "--edge", outer.baseURL, "sync"])
                #expect(sync.status == 0, "\(sync.stderr)")
            }
        }

        @Test("--purge-origin: a purge at the outer tier empties the inner tier first, so nothing old comes back")
        func purgeDownTheChain() async throws {
            try await withTier("cache-purge-chain") { fixture, _, inner, _ in
                let tokenFile = fixture.dir + "/token"
                let outer = try EdgeProcess.start(
                    root: fixture.root, args: ["--origin", inner.baseURL, "--purge-token-file", tokenFile, "--purge-origin"])
                defer { outer.stop() }
                let path = "/" + (try #require(try fixture.manifest().entry("sonnets/018.plist"))).objectPath
                _ = try RawHTTPConnection.fetch(port: outer.port, path)
                #expect(Self.cacheStatus(try RawHTTPConnection.fetch(port: inner.port, path)) == "folio-edge; hit")
                let purge = try RawHTTPConnection.fetch(port: outer.port, "PURGE", path, headers: [("Authorization", "Bearer \(Self.token)")])
                #expect(purge.status == 200 && purge.header("Folio-Purge-Origin") == "200", "\(purge.headers)")
                let again = try RawHTTPConnection.fetch(port: outer.port, path)
                #expect(again.values("Cache-Status").first?.contains("fwd=uri-miss") == true, "the inner tier was purged too: \(again.headers)")
                // A wrong token is refused here and never reaches the inner tier.
                let wrong = try RawHTTPConnection.fetch(port: outer.port, "PURGE", path, headers: [("Authorization", "Bearer wrong-token-0123456789")])
                #expect(wrong.status == 403 && wrong.header("Folio-Purge-Origin") == nil)
            }
        }
    }
}
