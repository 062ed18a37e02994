import FolioKit
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

    @Test("50 concurrent syncs against a slow edge on a two-thread executor: no 10 ms tick is 50 ms late")
    func neverBlocks() async throws {
        let root = try ClientRoot.make("kit-nonblocking") { r in
            // A small site: a few objects per sync, so that 50 syncs stay quick.
            for name in try FileIO.list(r.content) where name != "sonnets" {
                try FileManager.default.removeItem(atPath: r.content + "/" + name)
            }
            for name in try FileIO.list(r.content + "/sonnets") where !["001.txt", "002.txt", "003.txt"].contains(name) {
                try FileManager.default.removeItem(atPath: r.content + "/sonnets/" + name)
            }
        }
        defer { root.cleanup() }
        let server = try Self.slowServer(root.root, delayMs: 200)
        defer { server.stop() }
        let stores = try (0..<50).map { i in try FolioStore(edge: server.url, cacheDirectory: root.dir + "/cache-\(i)") }
        let executor = TwoThreadExecutor()
        defer { executor.shutdown() }
        let (lateness, results) = await withTaskExecutorPreference(executor) {
            await Self.syncWhileTicking(stores)
        }
        #expect(results.allSatisfy { $0 == .updated }, "\(results)")
        #expect(lateness.count > 20, "the ticker ran \(lateness.count) times")
        #expect((lateness.max() ?? .zero) < .milliseconds(50), "the latest tick was \(lateness.max() ?? .zero) late")
    }

    /// Runs every store's sync while a task ticks every 10 ms; returns how late each tick was.
    static func syncWhileTicking(_ stores: [FolioStore]) async -> ([Duration], [SyncOutcome.Result?]) {
        let done = Atomic<Bool>(false)
        async let ticks: [Duration] = {
            var late: [Duration] = []
            while !done.load(ordering: .relaxed) {
                let start = ContinuousClock.now
                try? await Task.sleep(for: .milliseconds(10))
                late.append(ContinuousClock.now - start - .milliseconds(10))
            }
            return late
        }()
        let results = await withTaskGroup(of: SyncOutcome.Result?.self) { group in
            for store in stores { group.addTask { try? await store.sync().result } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        done.store(true, ordering: .relaxed)
        return (await ticks, results)
    }

    @Test("cancelling a sync over plain http stops it within 100 ms")
    func cancelOverSockets() async throws {
        let root = try ClientRoot.make("kit-cancel")
        defer { root.cleanup() }
        let server = try Self.slowServer(root.root, delayMs: 5000)
        defer { server.stop() }
        let store = try FolioStore(edge: server.url, cacheDirectory: root.dir + "/cache")
        let task = Task { try await store.sync() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(store.isSyncing)
        let start = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - start < .milliseconds(100))
        guard case .failure(let error as FolioError) = result else {
            Issue.record("a cancelled sync returned \(result)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(!store.isSyncing)
        #expect(store.current == nil)
    }

    @Test("an edge URL with a path prefix works the same over both transports")
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
            ("sockets", Transports.forEdge(edge)),
            ("AsyncHTTPClient", HTTPClientTransport(base: server.url + "/content/qa", configuration: FolioHTTPConfiguration())),
        ]
        for (name, transport) in transports {
            var settings = SyncSettings(edge: edge)
            settings.transport = transport
            let report = try await Syncer(cache: ContentCache(dir: root.dir + "/cache-" + name), settings: settings).run()
            #expect(report.result == .updated && report.versionAfter == version, "\(name): \(report.message)")
            #expect(report.objectsFetched > 150, "\(name)")
        }
        #expect(Transports.forEdge(edge).base == server.url + "/content/qa")
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
        let tier = try EdgeProcess.start(root: root.root, args: ["--origin", edge.baseURL, "--threads", "1"])
        defer { tier.stop() }
        let warm = try FolioStore(edge: tier.baseURL, cacheDirectory: root.dir + "/cache-warm")
        try await warm.sync()
        try await Task.sleep(for: .milliseconds(2200))
        let behind = root.dir + "/cache-behind"
        try await FolioStore(edge: tier.baseURL, cacheDirectory: behind).sync()
        let lifetime = try #require(ContentCache(dir: behind).current()?.state.serverLifetime)
        #expect(lifetime >= 2 && lifetime <= 3, "max-age 5 with Age 2 gave \(lifetime)")
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

/// A task executor of two threads, standing in for a small cooperative pool.
final class TwoThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init() {
        for _ in 0..<2 { Thread { self.work() }.start() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
