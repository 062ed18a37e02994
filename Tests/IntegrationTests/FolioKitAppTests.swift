import FolioKit
import FolioKitNIO
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Synchronization
import Testing

/// FolioKit as an app uses it, over real sockets: syncs that never hold the app's threads and
/// stop when cancelled, URL prefixes over both transports, freshness set by the edge (and by a
/// tier's `Age`), and the store's activity and will-change events.
@Suite("FolioKit for apps")
struct FolioKitAppTests {
    /// Python's http.server over `dir`, each answer `delayMs` late.
    static func slowServer(_ dir: String, delayMs: Int) throws -> PythonServer {
        try PythonServer.start(
            """
            import functools, http.server, sys, time
            delay = int(sys.argv[2]) / 1000
            class Slow(http.server.SimpleHTTPRequestHandler):
                def handle_one_request(self):
                    time.sleep(delay)
                    super().handle_one_request()
                def log_message(self, *args):
                    pass
            class Server(http.server.ThreadingHTTPServer):
                daemon_threads = True
                request_queue_size = 256
            server = Server(("127.0.0.1", 0), functools.partial(Slow, directory=sys.argv[1]))
            print("port %d" % server.server_address[1], flush=True)
            server.serve_forever()
            """, args: [dir, String(delayMs)])
    }

    @Test("an edge URL with a path prefix works the same over every transport")
    func prefixes() async throws {
        let root = try ClientRoot.make("kit-prefix")
        defer { root.cleanup() }
        let site = root.dir + "/site"
        try FileIO.makeDirectory(site + "/content")
        try FileManager.default.moveItem(atPath: root.root, toPath: site + "/content/qa")
        let server = try PythonServer.staticFiles(root: site)
        defer { server.stop() }
        let edge = server.url + "/content/qa/"
        let version = try Manifest(bytes: try FileIO.read(site + "/content/qa/manifest.plist")).version
        let transports: [(String, any Transport)] = [
            ("URLSession", Transports.forEdge(edge)),
            ("sockets", NIOTransports.forEdge(edge)),
            ("AsyncHTTPClient", HTTPClientTransport(base: server.url + "/content/qa", configuration: FolioHTTPConfiguration())),
        ]
        for (name, transport) in transports {
            let settings = SyncSettings(edge: edge, transport: transport)
            let report = try await Syncer(cache: ContentCache(dir: root.dir + "/cache-" + name), settings: settings).run()
            #expect(report.result == .updated && report.versionAfter == version, "\(name): \(report.message)")
            #expect(report.objectsFetched > 150, "\(name)")
        }
        #expect(Transports.forEdge(edge).base == server.url + "/content/qa")
        #expect(NIOTransports.forEdge(edge).base == server.url + "/content/qa")
    }

    @Test("every request carries the configured fields and the app's context, over every transport; bad ones are refused")
    func requestFields() async throws {
        let server = try PythonServer.start(
            """
            import http.server
            class Echo(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def do_GET(self):
                    body = str(self.headers).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            serve(Echo)
            """)
        defer { server.stop() }
        let config = FolioHTTPConfiguration(
            headers: ["Authorization": "Bearer secret-token"],
            context: FolioClientContext(appVersion: "3.2", platform: "ios", osVersion: "18.1", locale: "fr-\"FR\""))
        #expect(config.context?.fieldValue == #"app="3.2", platform="ios", os="18.1", locale="fr-\"FR\"""#)
        for transport: any Transport in [
            Transports.forEdge(server.url + "/base", configuration: config),
            NIOTransports.forEdge(server.url + "/base", configuration: config),
            HTTPClientTransport(base: server.url + "/base", configuration: config),
        ] {
            let echoed = String(decoding: try await transport.get(TransportRequest(path: "/x", headers: [], maxBody: 1 << 16)).body, as: UTF8.self)
            #expect(echoed.contains("Authorization: Bearer secret-token"), "\(echoed)")
            #expect(echoed.contains(#"Folio-Client: app="3.2", platform="ios", os="18.1", locale="fr-\"FR\"""#), "\(echoed)")
            #expect(echoed.contains("User-Agent: folio/"), "\(echoed)")
        }
        for (bad, says) in [
            (FolioHTTPConfiguration(headers: ["X-Token": "a\r\nInjected: yes"]), "control character"),
            (FolioHTTPConfiguration(headers: ["Bad Name": "x"]), "not an HTTP token"),
            (FolioHTTPConfiguration(headers: ["Accept-Encoding": "identity"]), "set by the sync itself"),
            (FolioHTTPConfiguration(timeout: .zero), "must be positive"),
            (FolioHTTPConfiguration(certificateAuthorities: ["not a PEM"]), "holds no PEM certificate"),
            (FolioHTTPConfiguration(context: FolioClientContext(appVersion: "3.2-beta")), "not an app version"),
        ] {
            do {
                _ = try FolioStore(edge: server.url, cacheDirectory: "/tmp/unused-folio-cache", http: bad)
                Issue.record("accepted: \(says)")
            } catch {
                #expect(error.code == .invalidContent && error.message.contains(says), "\(error.message)")
            }
        }
    }

    @Test("lowering --manifest-max-age on the edge reaches the client at its next sync; a tier's Age counts")
    func freshnessFromEdgeAndTier() async throws {
        let root = try ClientRoot.make("kit-max-age")
        defer { root.cleanup() }
        var edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs + ["--manifest-max-age", "300"])
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: cache)
        try await store.sync()
        #expect(ContentCache(dir: cache).current()?.state.serverLifetime == 300)
        #expect(try await store.sync().result == .fresh)

        edge.stop()
        edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs + ["--manifest-max-age", "5", "--port", String(edge.port)])
        try ClientCache(dir: cache).age(by: 301)
        #expect(try await store.sync().result == .notModified)
        #expect(ContentCache(dir: cache).current()?.state.serverLifetime == 5)
        try ClientCache(dir: cache).age(by: 6)
        #expect(try await store.sync().result == .notModified, "the new, shorter lifetime was not kept")

        // Behind a tier: the tier's Age is taken off the lifetime it passes on.
        let origin = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs + ["--manifest-max-age", "100"])
        defer { origin.stop() }
        let tier = try EdgeProcess.start(root: root.root, args: ["--origin", origin.baseURL, "--threads", "1"])
        defer { tier.stop() }
        let warmedAt = ContinuousClock.now
        try await FolioStore(edge: tier.baseURL, cacheDirectory: root.dir + "/cache-warm").sync()
        try await Task.sleep(for: .milliseconds(2200))
        let behind = root.dir + "/cache-behind"
        try await FolioStore(edge: tier.baseURL, cacheDirectory: behind).sync()
        let elapsed = Int((ContinuousClock.now - warmedAt).components.seconds)
        let lifetime = try #require(ContentCache(dir: behind).current()?.state.serverLifetime)
        #expect(lifetime <= 98 && lifetime >= 100 - elapsed - 1, "max-age 100 with an Age of 2 to \(elapsed) s gave \(lifetime)")
    }

    @Test("maintenance, from a tier's 503 and from the publisher's window: .maintenance with retryAfter, content readable")
    func maintenance() async throws {
        let root = try ClientRoot.make("kit-maintenance")
        defer { root.cleanup() }
        let origin = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { origin.stop() }
        // A tier in maintenance answers what it has not cached with 503 and Retry-After: 60.
        let flag = root.dir + "/maintenance"
        try FileIO.writeAtomically([], to: flag)
        let tier = try EdgeProcess.start(root: root.root, args: ["--origin", origin.baseURL, "--threads", "1", "--maintenance-file", flag])
        defer { tier.stop() }
        let behindTier = try FolioStore(edge: tier.baseURL, cacheDirectory: root.dir + "/cache-tier")
        do {
            try await behindTier.sync()
            Issue.record("a sync through a tier in maintenance succeeded")
        } catch {
            #expect(error.code == .maintenance && error.retryAfter == 60 && !error.hasContent, "\(error)")
        }

        // The publisher's window: the version is taken, then maintenance is said until it ends.
        let store = try FolioStore(edge: origin.baseURL, cacheDirectory: root.dir + "/cache")
        try await store.sync()
        let until = Date().addingTimeInterval(3600)
        let past = try Harness.run(
            Harness.binary("folio-build"), ["--content", root.content, "--output", root.root, "--maintenance-until", "2001-01-01T00:00:00Z"])
        #expect(past.status != 0 && past.stderr.contains("is already past"), "\(past.stderr)")
        try root.publish(["--maintenance-until", PlistDates.formatISO8601(until), "--notice", "Maintenance for an hour"])
        try origin.requireVersion(2)
        let changes = store.changes()
        do {
            try await store.sync(force: true)
            Issue.record("a sync of a maintenance window did not say so")
        } catch {
            #expect(error.code == .maintenance && error.hasContent, "\(error)")
            // Until the window's end: an hour from its publish, less however long this test took.
            #expect((error.retryAfter ?? 0) > 3000 && (error.retryAfter ?? 0) <= 3600, "\(error.retryAfter ?? 0)")
        }
        #expect(store.current?.version == 2 && store.current?.notice == "Maintenance for an hour")
        #expect(abs((store.current?.maintenanceUntil?.timeIntervalSince(until)) ?? 99) < 1)
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next()?.version == 2)
        let cli = try ClientTest.folio(["sync"], cache: root.dir + "/cache", edge: origin.baseURL)
        #expect(cli.status == 4 && cli.stderr.contains("maintenance window until"), "\(cli.stderr)")
        let status = try ClientTest.folio(["status"], cache: root.dir + "/cache", edge: origin.baseURL)
        #expect(status.stdout.contains("maintenance: the publisher marks this version as a maintenance window until"), "\(status.stdout)")
    }

    @Test("the store announces a change before it commits, and its activity around each sync")
    func events() async throws {
        let root = try ClientRoot.make("kit-events")
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: root.dir + "/cache")
        let activity = store.activity()
        let willChange = store.willChange()
        #expect(!store.isSyncing)
        try await store.sync()
        var events = activity.makeAsyncIterator()
        #expect(await events.next() == true)
        #expect(await events.next() == false)
        var announced = willChange.makeAsyncIterator()
        let change = try #require(await announced.next())
        #expect(change.previousVersion == nil && change.version == 1)
    }
}

/// Every 10 ms, from a thread of its own, starts a task on `executor` and records how long it
/// waited to run, until stopped.
final class ExecutorProbe: @unchecked Sendable {
    private let stopped = Atomic<Bool>(false)
    private let waits = Mutex<[Duration]>([])
    private let done = DispatchSemaphore(value: 0)

    init(_ executor: some TaskExecutor) {
        Thread {
            while !self.stopped.load(ordering: .relaxed) {
                let queued = ContinuousClock.now
                Task(executorPreference: executor) { self.waits.withLock { $0.append(ContinuousClock.now - queued) } }
                usleep(10_000)
            }
            self.done.signal()
        }.start()
    }

    func stop() -> [Duration] {
        stopped.store(true, ordering: .relaxed)
        done.wait()
        usleep(100_000)
        return waits.withLock { $0 }
    }
}

/// An operation's result and the instant it ended, taken on the operation's own executor.
enum Timed {
    static func run<T: Sendable>(_ operation: () async throws -> T) async -> (Result<T, any Error>, ContinuousClock.Instant) {
        do {
            let value = try await operation()
            return (.success(value), .now)
        } catch {
            return (.failure(error), .now)
        }
    }
}
