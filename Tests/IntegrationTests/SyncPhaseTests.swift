import FolioKit
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// The sync's phases in-process, against ``FakeEdge``: cancellation, the retry policy and
/// `Retry-After`, maintenance, and freshness taken from the edge's `max-age` and `Age`.
@Suite("sync phases with a fake transport")
struct SyncPhaseTests {
    static func settings(_ fake: FakeEdge, deltas: Bool = true, force: Bool = false) -> SyncSettings {
        var s = SyncSettings(edge: "http://edge.invalid", transport: fake)
        s.deltas = deltas
        s.force = force
        return s
    }

    static func sync(_ cacheDir: String, _ settings: SyncSettings) async throws -> SyncReport {
        try await Syncer(cache: ContentCache(dir: cacheDir), settings: settings).run()
    }

    /// The cache's files and their bytes, to compare before and after.
    static func snapshot(_ dir: String) -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for sub in ["", "/objects", "/manifests"] {
            for name in (try? FileIO.list(dir + sub)) ?? [] where name != "lock" {
                if let bytes = try? FileIO.read(dir + sub + "/" + name) { out[sub + "/" + name] = bytes }
            }
        }
        return out
    }

    @Test("a 503 with a short Retry-After is waited for and retried; a long one is maintenance, and reads go on")
    func retryAfterAndMaintenance() async throws {
        let root = try ClientRoot.make("retry-after")
        defer { root.cleanup() }
        let cacheDir = root.dir + "/cache"
        let fake = FakeEdge(root: root.root)
        fake.script(.init(pathContains: "manifest.plist", status: 503, fields: [("Retry-After", "1")], times: 1))
        let start = ContinuousClock.now
        let first = try await Self.sync(cacheDir, Self.settings(fake))
        #expect(first.result == .updated)
        #expect(ContinuousClock.now - start >= .seconds(1), "Retry-After: 1 was not waited for")
        #expect(fake.log.prefix(2) == ["/manifest.plist", "/manifest.plist"])

        fake.script(.init(pathContains: "head.plist", status: 503, fields: [("Retry-After", "120")], times: 3))
        var settings = Self.settings(fake)
        settings.force = true
        let requestsBefore = fake.log.count
        do {
            _ = try await Self.sync(cacheDir, settings)
            Issue.record("a sync against an edge in maintenance succeeded")
        } catch let error as FolioError {
            #expect(error.code == .maintenance)
            #expect(error.retryAfter == 120)
            #expect(error.hasContent)
        }
        #expect(fake.log.count == requestsBefore + 1, "a long Retry-After is not retried")
        let state = try #require(ContentCache(dir: cacheDir).current()?.state)
        #expect(state.lastResult == "maintenance")
        #expect(state.version == 1)
        #expect((state.retryAfter?.timeIntervalSinceNow ?? 0) > 60 && (state.retryAfter?.timeIntervalSinceNow ?? 0) <= 120)
    }

    @Test("freshness is the edge's: max-age minus Age, no-cache asks every time, the manifest's hint without either")
    func freshnessFromTheEdge() async throws {
        let root = try ClientRoot.make("freshness")
        defer { root.cleanup() }
        let cacheDir = root.dir + "/cache"
        let fake = FakeEdge(root: root.root)
        // A lifetime of minutes, not seconds: beside the other suites this test can crawl.
        fake.setManifestFields([("Cache-Control", "max-age=3600"), ("Age", "3000")])
        _ = try await Self.sync(cacheDir, Self.settings(fake))
        #expect(ContentCache(dir: cacheDir).current()?.state.serverLifetime == 600)
        #expect(try await Self.sync(cacheDir, Self.settings(fake)).result == .fresh)
        try ClientCache(dir: cacheDir).age(by: 601)
        let asked = fake.log.count
        #expect(try await Self.sync(cacheDir, Self.settings(fake)).result == .notModified)
        #expect(fake.log.count == asked + 1)

        // The edge lowers the lifetime: the 304 carries it, and the next sync asks again.
        fake.setManifestFields([("Cache-Control", "no-cache")])
        try ClientCache(dir: cacheDir).age(by: 601)
        #expect(try await Self.sync(cacheDir, Self.settings(fake)).result == .notModified)
        #expect(ContentCache(dir: cacheDir).current()?.state.serverLifetime == 0)
        #expect(try await Self.sync(cacheDir, Self.settings(fake)).result == .notModified)

        // No Cache-Control at all: the manifest's own hint (60 s for content/) applies.
        fake.setManifestFields([])
        #expect(try await Self.sync(cacheDir, Self.settings(fake)).result == .notModified)
        let held = try #require(ContentCache(dir: cacheDir).current())
        #expect(held.state.serverLifetime == nil)
        #expect(held.state.lifetime(of: held.manifest) == held.manifest.freshnessLifetime)
        #expect(try await Self.sync(cacheDir, Self.settings(fake)).result == .fresh)
    }

    @Test("the retry policy: doubling backoff with jitter, Retry-After within its cap, no retry past the last try")
    func retryPolicy() {
        let policy = RetryPolicy(attempts: 3)
        func answer(_ status: Int, _ fields: [(String, String)] = []) -> TransportResponse { FakeEdge.answer(status, fields, []) }
        #expect(policy.step(after: nil, attempt: 0, jitter: 0) == .retry(after: .milliseconds(100)))
        #expect(policy.step(after: nil, attempt: 1, jitter: 0.5) == .retry(after: .milliseconds(300)))
        #expect(policy.step(after: nil, attempt: 2, jitter: 0) == .done)
        #expect(policy.step(after: answer(500), attempt: 0, jitter: 0) == .retry(after: .milliseconds(100)))
        #expect(policy.step(after: answer(404), attempt: 0, jitter: 0) == .done)
        #expect(policy.step(after: answer(503, [("Retry-After", "2")]), attempt: 0, jitter: 0) == .retry(after: .seconds(2)))
        #expect(policy.step(after: answer(429, [("Retry-After", "3")]), attempt: 0, jitter: 0) == .done)
        #expect(policy.step(after: answer(503, [("Retry-After", "soon")]), attempt: 0, jitter: 0) == .retry(after: .milliseconds(100)))
    }

    @Test("a version for newer apps is refused after verification; the cache keeps its version; a new enough app takes it")
    func updateRequired() async throws {
        let root = try ClientRoot.make("phase-update")
        defer { root.cleanup() }
        let cacheDir = root.dir + "/cache"
        let fake = FakeEdge(root: root.root)
        _ = try await Self.sync(cacheDir, Self.settings(fake))
        try root.replace(in: 18, "summer’s day", with: "newer day")
        try root.publish(["--minimum-app-version", "3.2"])
        let before = Self.snapshot(cacheDir)
        var old = Self.settings(fake, force: true)
        old.appVersion = AppVersion("3.1.9")
        do {
            _ = try await Self.sync(cacheDir, old)
            Issue.record("app 3.1.9 took a version for 3.2")
        } catch let error as FolioError {
            #expect(error.code == .updateRequired && error.requiredAppVersion == "3.2" && error.hasContent)
        }
        var after = Self.snapshot(cacheDir)
        after["/state.plist"] = before["/state.plist"]  // the refusal is recorded there, nothing else changes
        #expect(after == before)
        #expect(ContentCache(dir: cacheDir).current()?.state.lastResult == "updateRequired")
        var new = Self.settings(fake, force: true)
        new.appVersion = AppVersion("3.2")
        #expect(try await Self.sync(cacheDir, new).versionAfter == 2)
    }

    @Test("two edges in one cache: each its own environment, no downgrade across them, switching back revalidates")
    func environments() async throws {
        let production = try ClientRoot.make("phase-prod", floor: 4)
        defer { production.cleanup() }
        let qa = try ClientRoot.make("phase-qa") { r in try r.replace(in: 18, "summer’s day", with: "QA day") }
        defer { qa.cleanup() }
        let cacheDir = production.dir + "/cache"
        func sync(_ edge: String, _ root: ClientRoot) async throws -> SyncReport {
            var s = SyncSettings(edge: edge, transport: FakeEdge(root: root.root))
            s.force = true
            return try await Syncer(cache: ContentCache(dir: cacheDir, edge: edge), settings: s).run()
        }
        #expect(try await sync("http://prod.invalid", production).versionAfter == 4)
        let toQA = try await sync("http://qa.invalid", qa)
        #expect(toQA.result == .updated && toQA.versionAfter == 1)
        #expect(ContentCache(dir: cacheDir, edge: "http://prod.invalid").current()?.state.version == 4)
        #expect(ContentCache(dir: cacheDir, edge: "http://qa.invalid/").current()?.state.version == 1)
        let back = try await sync("http://prod.invalid", production)
        #expect(back.result == .notModified && back.requests == 1, "\(back)")
    }
}
