import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A cache tier with several origins: real `folio-edge --root` origins serving one published
/// fixture (or Python servers that hang or answer garbage), a tier with `--origin` repeated,
/// origins killed by their PID.
extension EdgeIntegration {
    @Suite("folio-edge --origin A --origin B: health checks and failover", .serialized)
    struct OriginPool {
        /// A fixture, two edges serving it (the primary first) and a tier over both.
        func withPool(
            _ label: String, tierArgs: [String] = [],
            _ body: (EdgeFixture, EdgeProcess, EdgeProcess, EdgeProcess) async throws -> Void
        ) async throws {
            let fixture = try EdgeFixture.make(label)
            defer { fixture.cleanup() }
            let primary = try EdgeProcess.start(root: fixture.root)
            defer { primary.stop() }
            let backup = try EdgeProcess.start(root: fixture.root)
            defer { backup.stop() }
            let tier = try EdgeProcess.start(
                root: fixture.root, args: ["--origin", primary.baseURL, "--origin", backup.baseURL] + tierArgs)
            defer { tier.stop() }
            try await body(fixture, primary, backup, tier)
        }

        static func named(_ origin: EdgeProcess) -> String { "origin=\"127.0.0.1:\(origin.port)\"" }
        static func named(_ port: Int) -> String { "origin=\"127.0.0.1:\(port)\"" }

        static func cacheStatus(_ r: EdgeResponse) -> String { r.header("Cache-Status") ?? "" }

        /// The origin `Cache-Status` names (`127.0.0.1:PORT`), or "".
        static func origin(_ r: EdgeResponse) -> String {
            let status = cacheStatus(r)
            guard let start = status.range(of: "origin=\"") else { return "" }
            return String(status[start.upperBound...].prefix { $0 != "\"" })
        }

        /// One sample of the tier's metrics about the origin on `port`.
        static func originMetric(_ tier: EdgeProcess, _ name: String, _ port: Int) throws -> Double? {
            let text = try RawHTTPConnection.fetch(port: tier.port, "/.folio/metrics").text
            return EdgeProcess.metric("\(name){origin=\"127.0.0.1:\(port)\"}", in: text)
        }

        /// Polls until the tier reports the origin up (1) or down (0); false after `timeout`.
        static func waitUntil(_ tier: EdgeProcess, port: Int, up: Bool, timeout: Double) async -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if (try? originMetric(tier, "folio_edge_origin_up", port)) == (up ? 1 : 0) { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return false
        }

        @Test("the primary answers while it is up, and Cache-Status names it; a path prefix on an origin is kept")
        func primaryAnswers() async throws {
            try await withPool("pool-primary") { fixture, primary, backup, tier in
                let entry = try #require(try fixture.manifest().entry("sonnets/018.plist"))
                for n in 0..<5 {
                    let r = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?n=\(n)")
                    #expect(try r.status == 200 && r.body == (try fixture.bytes(entry.objectPath)))
                    #expect(Self.cacheStatus(r).contains("fwd=uri-miss; stored; \(Self.named(primary))"), "\(r.headers)")
                }
                let hit = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?n=0")
                #expect(Self.cacheStatus(hit) == "folio-edge; hit")
                #expect(try Self.originMetric(tier, "folio_edge_origin_requests_total", primary.port) == 5)
                #expect(try Self.originMetric(tier, "folio_edge_origin_requests_total", backup.port) ?? 0 == 0)
                #expect(try Self.originMetric(tier, "folio_edge_origin_up", backup.port) == 1)
            }
            // An origin URL with a path (a static host serving the directory above the published
            // one), after one that refuses connections.
            let fixture = try EdgeFixture.make("pool-prefix")
            defer { fixture.cleanup() }
            let origin = try PythonServer.staticFiles(root: fixture.dir)
            defer { origin.stop() }
            let tier = try EdgeProcess.start(
                root: fixture.root, args: ["--origin", "http://127.0.0.1:1/public", "--origin", origin.url + "/public/"])
            defer { tier.stop() }
            let r = try RawHTTPConnection.fetch(port: tier.port, "/head.plist")
            #expect(try r.status == 200 && r.body == (try fixture.bytes("head.plist")), "\(r.status) \(r.headers)")
            #expect(Self.cacheStatus(r).contains(Self.named(origin.port)), "\(r.headers)")
            // A POST goes on to the next origin only when it was never sent: here the first
            // refused the connection, so the static host answers it (501, it takes no POST).
            let post = try RawHTTPConnection.fetch(port: tier.port, "POST", "/head.plist")
            #expect(post.status == 501 && Self.origin(post) == "127.0.0.1:\(origin.port)", "\(post.status) \(post.headers)")
        }

        /// What a bounded load through the tier saw: every status (0: no answer) and the origin
        /// named by each answer, in order.
        struct LoadResult: Sendable {
            var statuses: [Int] = []
            var origins: [String] = []
            var failed: Int { statuses.filter { $0 != 200 && $0 != 304 }.count }
        }

        /// `workers` threads for `seconds`: GETs of objects with a query of their own (misses
        /// that reach an origin) and of the manifest with `Cache-Control: no-cache` (revalidated
        /// with an origin), each on a fresh connection; `midway` runs once, halfway through.
        static func load(
            _ tier: EdgeProcess, objects: [String], workers: Int = 4, seconds: Double = 2, midway: @escaping @Sendable () -> Void
        ) async -> LoadResult {
            let result = EdgeLocked(LoadResult())
            let stop = EdgeStopFlag()
            let threads = EdgeThreads.spawn(workers) { worker in
                var n = 0
                while !stop.isSet {
                    n += 1
                    let manifest = n % 5 == 0
                    let target = manifest ? "/manifest.plist" : "/\(objects[n % objects.count])?w=\(worker)-\(n)"
                    let headers = manifest ? [("Cache-Control", "no-cache")] : []
                    let r = try? RawHTTPConnection.fetch(port: tier.port, target, headers: headers)
                    result.with {
                        $0.statuses.append(r?.status ?? 0)
                        $0.origins.append(r.map(origin) ?? "")
                    }
                }
            }
            try? await Task.sleep(for: .seconds(seconds / 2))
            midway()
            try? await Task.sleep(for: .seconds(seconds / 2))
            stop.stop()
            _ = await threads.join(timeout: 60)
            return result.value
        }

        @Test("the primary killed under load: no client request fails, and the backup answers after")
        func killUnderLoad() async throws {
            try await withPool("pool-kill") { fixture, primary, backup, tier in
                let manifest = try fixture.manifest()
                let objects = manifest.allEntries.prefix(20).map(\.objectPath)
                #expect(try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist").status == 200)
                let result = await Self.load(tier, objects: objects) { primary.signal(SIGKILL) }
                #expect(primary.waitForExit(timeout: 10))
                #expect(result.statuses.count > 20, "only \(result.statuses.count) requests")
                #expect(result.failed == 0, "\(result.failed) of \(result.statuses.count) failed: \(result.statuses.filter { $0 != 200 && $0 != 304 })")
                #expect(result.origins.contains("127.0.0.1:\(primary.port)"), "the primary answered none")
                #expect(result.origins.suffix(5).allSatisfy { $0 == "127.0.0.1:\(backup.port)" }, "\(result.origins.suffix(5))")
                #expect(try Self.originMetric(tier, "folio_edge_origin_up", primary.port) == 0)
                #expect(try Self.originMetric(tier, "folio_edge_origin_failures_total", primary.port) ?? 0 >= 1)
            }
        }

        @Test("without traffic, a killed primary is marked down within two health checks; back, it gets the traffic again after two good ones")
        func healthChecks() async throws {
            try await withPool("pool-health") { fixture, primary, backup, tier in
                let entry = try #require(try fixture.manifest().entry("sonnets/018.plist"))
                #expect(await Self.waitUntil(tier, port: primary.port, up: true, timeout: 5))
                let before = try #require(try Self.originMetric(tier, "folio_edge_origin_checks_total", primary.port))
                let killed = Date()
                primary.signal(SIGKILL)
                _ = primary.waitForExit(timeout: 10)
                #expect(await Self.waitUntil(tier, port: primary.port, up: false, timeout: 10))
                let seconds = Date().timeIntervalSince(killed)
                let checks = try #require(try Self.originMetric(tier, "folio_edge_origin_checks_total", primary.port)) - before
                // One check a second (the default): down at the first after the kill, or the
                // second when the kill fell just before a check went out.
                #expect(checks <= 2, "\(checks) checks (\(seconds) s) before the primary was marked down")
                let r = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?after-kill")
                #expect(r.status == 200 && Self.cacheStatus(r).contains(Self.named(backup)), "\(r.headers)")

                // The primary back on its port: up after two good checks, and the traffic returns.
                let downChecks = try #require(try Self.originMetric(tier, "folio_edge_origin_checks_total", primary.port))
                let again = try EdgeProcess.start(root: fixture.root, args: ["--port", String(primary.port)])
                defer { again.stop() }
                #expect(again.port == primary.port)
                #expect(await Self.waitUntil(tier, port: primary.port, up: true, timeout: 10))
                let upChecks = try #require(try Self.originMetric(tier, "folio_edge_origin_checks_total", primary.port)) - downChecks
                #expect(upChecks >= 2, "up after \(upChecks) checks")
                let back = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?back")
                #expect(back.status == 200 && Self.cacheStatus(back).contains(Self.named(primary)), "\(back.headers)")
            }
        }

        /// An origin that accepts connections and never answers, and one that answers with
        /// bytes that are not HTTP.
        static let hanging = """
            import socketserver, time
            class Handler(socketserver.BaseRequestHandler):
                def handle(self):
                    time.sleep(300)
            serve(Handler)
            """
        static let garbage = """
            import socketserver
            class Handler(socketserver.BaseRequestHandler):
                def handle(self):
                    self.request.recv(65536)
                    self.request.sendall(b"SSH-2.0-OpenSSH_9.2\\r\\nthis is not HTTP at all\\r\\n\\r\\n")
            serve(Handler)
            """

        @Test("origins that hang or answer garbage: requests still succeed through the good one, in bounded time, and go straight to it once checks mark the others down")
        func hangingAndGarbage() async throws {
            let fixture = try EdgeFixture.make("pool-bad")
            defer { fixture.cleanup() }
            let hang = try PythonServer.start(Self.hanging)
            defer { hang.stop() }
            let junk = try PythonServer.start(Self.garbage)
            defer { junk.stop() }
            let good = try EdgeProcess.start(root: fixture.root)
            defer { good.stop() }
            let ca = TestStack.current.isTLS ? ["--origin-ca", TestStack.pki.pki.ca] : []
            let tier = try EdgeProcess.start(
                root: fixture.root, args: ["--origin", hang.url, "--origin", junk.url, "--origin", good.baseURL, "--origin-timeout", "2"] + ca)
            defer { tier.stop() }
            let entry = try #require(try fixture.manifest().entry("sonnets/018.plist"))
            // At once, before any check has judged them: through both bad ones to the good one.
            let start = Date()
            let first = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?first")
            let firstSeconds = Date().timeIntervalSince(start)
            #expect(try first.status == 200 && first.body == (try fixture.bytes(entry.objectPath)), "\(first.status) \(first.headers)")
            #expect(Self.origin(first) == "127.0.0.1:\(good.port)", "\(first.headers)")
            #expect(firstSeconds < 15, "the first request took \(firstSeconds) s")
            #expect(await Self.waitUntil(tier, port: hang.port, up: false, timeout: 10))
            #expect(await Self.waitUntil(tier, port: junk.port, up: false, timeout: 10))
            for n in 0..<10 {
                let started = Date()
                let r = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?n=\(n)")
                #expect(r.status == 200 && Self.origin(r) == "127.0.0.1:\(good.port)", "\(r.headers)")
                #expect(Date().timeIntervalSince(started) < 1.5, "a request after the checks took \(Date().timeIntervalSince(started)) s")
            }
            let manifest = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            #expect(try manifest.status == 200 && manifest.body == (try fixture.bytes("manifest.plist")))
        }

        @Test("round robin: misses go to each origin in turn")
        func roundRobin() async throws {
            try await withPool("pool-rr", tierArgs: ["--origin-policy", "round-robin"]) { fixture, primary, backup, tier in
                let entry = try #require(try fixture.manifest().entry("sonnets/018.plist"))
                var named: [String: Int] = [:]
                for n in 0..<20 {
                    let r = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?rr=\(n)")
                    #expect(r.status == 200)
                    named[Self.origin(r), default: 0] += 1
                }
                #expect(named["127.0.0.1:\(primary.port)", default: 0] >= 5 && named["127.0.0.1:\(backup.port)", default: 0] >= 5, "\(named)")
                #expect(named.values.reduce(0, +) == 20, "\(named)")
            }
        }

        @Test("a backup that is behind: its older manifest does not replace the newer one stored")
        func olderManifest() async throws {
            let fixture = try EdgeFixture.make("pool-older", editableContent: true)
            defer { fixture.cleanup() }
            let old = fixture.dir + "/old-public"
            #expect(try Harness.run("/bin/cp", ["-a", fixture.root, old]).status == 0)
            let sonnet = fixture.content + "/sonnets/018.txt"
            let text = String(decoding: try FileIO.read(sonnet), as: UTF8.self)
            try FileIO.writeAtomically(Array(text.replacingOccurrences(of: "summer", with: "winter").utf8), to: sonnet)
            #expect(try fixture.publish().status == 0)
            let newer = try fixture.manifest().version
            let older = try Manifest(bytes: try FileIO.read(old + "/manifest.plist")).version
            #expect(older < newer)
            let primary = try EdgeProcess.start(root: fixture.root)
            defer { primary.stop() }
            let backup = try EdgeProcess.start(root: old)
            defer { backup.stop() }
            let tier = try EdgeProcess.start(root: fixture.root, args: ["--origin", primary.baseURL, "--origin", backup.baseURL])
            defer { tier.stop() }
            // The checks read each origin's version.
            for _ in 0..<100 {
                if try Self.originMetric(tier, "folio_edge_origin_manifest_version", backup.port) == Double(older) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try Self.originMetric(tier, "folio_edge_origin_manifest_version", backup.port) == Double(older))
            #expect(try Self.originMetric(tier, "folio_edge_origin_manifest_version", primary.port) == Double(newer))
            let first = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            #expect(try Manifest(bytes: first.body).version == newer)
            #expect(Self.origin(first) == "127.0.0.1:\(primary.port)")
            primary.signal(SIGKILL)
            _ = primary.waitForExit(timeout: 10)
            for _ in 0..<3 {
                // The client asks for a fresh one: only the backup answers, with the older version.
                let r = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: [("Cache-Control", "no-cache")])
                #expect(r.status == 200 && (try? Manifest(bytes: r.body).version) == newer, "\(r.headers)")
                #expect(Self.cacheStatus(r).contains("detail=older-manifest"), "\(r.headers)")
                #expect(Self.origin(r) == "127.0.0.1:\(backup.port)", "\(r.headers)")
            }
            let plain = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            #expect((try? Manifest(bytes: plain.body).version) == newer, "\(plain.headers)")
        }

        /// A static host of the directory in argv[1] whose objects come back with one byte changed.
        static let corrupting = """
            import http.server, os, sys
            root = sys.argv[1]
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    path = os.path.join(root, self.path.split("?")[0].lstrip("/"))
                    if not os.path.isfile(path):
                        self.send_error(404)
                        return
                    body = bytearray(open(path, "rb").read())
                    if "/objects/" in self.path and body:
                        body[-1] ^= 1
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Cache-Control", "max-age=60")
                    self.end_headers()
                    self.wfile.write(bytes(body))
                def log_message(self, *args):
                    pass
            serve(Handler)
            """

        @Test("an origin whose objects do not match their sha256: the next origin's are served; alone, 502")
        func corruptObjects() async throws {
            let fixture = try EdgeFixture.make("pool-corrupt")
            defer { fixture.cleanup() }
            let corrupt = try PythonServer.start(Self.corrupting, args: [fixture.root])
            defer { corrupt.stop() }
            let good = try EdgeProcess.start(root: fixture.root)
            defer { good.stop() }
            let ca = TestStack.current.isTLS ? ["--origin-ca", TestStack.pki.pki.ca] : []
            let tier = try EdgeProcess.start(root: fixture.root, args: ["--origin", corrupt.url, "--origin", good.baseURL] + ca)
            defer { tier.stop() }
            let entry = try #require(try fixture.manifest().entry("sonnets/018.plist"))
            // The manifest is no object: the first origin serves it as it is.
            let manifest = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            #expect(try manifest.status == 200 && manifest.body == fixture.bytes("manifest.plist"))
            #expect(Self.origin(manifest) == "127.0.0.1:\(corrupt.port)")
            let object = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?fresh")
            #expect(try object.status == 200 && object.body == fixture.bytes(entry.objectPath), "\(object.headers)")
            #expect(Self.origin(object) == "127.0.0.1:\(good.port)", "\(object.headers)")
            #expect(try Self.originMetric(tier, "folio_edge_origin_failures_total", corrupt.port) ?? 0 >= 1)

            let alone = try EdgeProcess.start(root: fixture.root, args: ["--origin", corrupt.url])
            defer { alone.stop() }
            let refused = try RawHTTPConnection.fetch(port: alone.port, "/\(entry.objectPath)")
            #expect(refused.status == 502 && Self.cacheStatus(refused).contains("detail=corrupt-object"), "\(refused.headers)")
        }

        /// A static host of the directory in argv[1] that answers every other request with 503,
        /// and every fourth with its connection closed before any answer.
        static let flapping = """
            import functools, http.server, itertools, sys
            counter = itertools.count()
            class Handler(http.server.SimpleHTTPRequestHandler):
                def do_GET(self):
                    n = next(counter)
                    if n % 4 == 1:
                        self.close_connection = True
                        return
                    if n % 2 == 1:
                        self.send_error(503)
                        return
                    super().do_GET()
                def log_message(self, *args):
                    pass
            serve(functools.partial(Handler, directory=sys.argv[1]))
            """

        @Test("an origin that flaps (503s, dropped connections): every answer is right, from it or the other")
        func flapping() async throws {
            let fixture = try EdgeFixture.make("pool-flap")
            defer { fixture.cleanup() }
            let flappy = try PythonServer.start(Self.flapping, args: [fixture.root])
            defer { flappy.stop() }
            let good = try EdgeProcess.start(root: fixture.root)
            defer { good.stop() }
            let ca = TestStack.current.isTLS ? ["--origin-ca", TestStack.pki.pki.ca] : []
            let tier = try EdgeProcess.start(
                root: fixture.root, args: ["--origin", flappy.url, "--origin", good.baseURL, "--health-interval-ms", "200"] + ca)
            defer { tier.stop() }
            let entries = try fixture.manifest().allEntries.prefix(30)
            var named: Set<String> = []
            for (n, entry) in entries.enumerated() {
                let r = try RawHTTPConnection.fetch(port: tier.port, "/\(entry.objectPath)?flap=\(n)")
                #expect(try r.status == 200 && r.body == fixture.bytes(entry.objectPath), "\(entry.objectPath): \(r.status) \(r.headers)")
                named.insert(Self.origin(r))
            }
            #expect(named.isSubset(of: ["127.0.0.1:\(flappy.port)", "127.0.0.1:\(good.port)"]), "\(named)")
            let sent = try Self.originMetric(tier, "folio_edge_origin_requests_total", flappy.port) ?? 0
            let checks = try Self.originMetric(tier, "folio_edge_origin_checks_total", flappy.port) ?? 0
            #expect(sent + checks >= 4, "the flapping origin saw \(sent) requests and \(checks) checks")
            let manifest = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: [("Cache-Control", "no-cache")])
            #expect(try manifest.status == 200 && manifest.body == fixture.bytes("manifest.plist"))
        }
    }
}
