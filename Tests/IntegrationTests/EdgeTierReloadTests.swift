import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EdgeIntegration {
    /// SIGHUP in a cache tier: its origins and their policy change with no dropped connection.
    @Suite("folio-edge: a tier reloads its origins", .serialized)
    struct EdgeTierReloadTests {
        @Test("SIGHUP under load: new origins and policy take the next requests, the old origin can go, a broken URL keeps the old; nothing fails")
        func reloadOrigins() async throws {
            let fixture = try EdgeFixture.make("tier-reload")
            defer { fixture.cleanup() }
            let a = try EdgeProcess.start(root: fixture.root, args: ["--threads", "1"])
            defer { a.stop() }
            let b = try EdgeProcess.start(root: fixture.root, args: ["--threads", "1"])
            defer { b.stop() }
            let config = TierConfig(path: fixture.dir + "/tier.toml")
            try config.write([a], policy: "primary")
            let tier = try EdgeProcess.start(root: "", args: ["--config", config.path, "--threads", "2"])
            defer { tier.stop() }
            let load = TierLoad(port: tier.port, clients: 3)
            defer { load.stop() }
            #expect(await load.waitFor(origin: a, after: 0), "no answer from the first origin: \(load.summary)")

            // Both, in turn.
            try config.write([a, b], policy: "round-robin")
            try await config.reload(tier, expecting: "new origins take the next requests", count: 1)
            let both = load.count
            #expect(await load.waitFor(origin: b, after: both), "the new origin never answered: \(load.summary)")
            #expect(await load.waitFor(origin: a, after: both), "round-robin left the first origin out: \(load.summary)")

            // The second alone; then the first stops, as an origin taken out of service.
            try config.write([b], policy: "primary")
            try await config.reload(tier, expecting: "new origins take the next requests", count: 2)
            try await Task.sleep(for: .milliseconds(300))  // what was in flight on the first finishes
            a.stop()
            let alone = load.count
            try await Task.sleep(for: .milliseconds(700))
            #expect(load.origins(after: alone) == [b.port], "after the reload: \(load.summary)")

            // A broken URL: refused once, the second keeps answering.
            try config.write(raw: "origin = [\"ftp://127.0.0.1:1\"]\n")
            try await config.reload(tier, expecting: "configuration reload refused", count: 1)
            let broken = load.count
            try await Task.sleep(for: .milliseconds(700))
            #expect(tier.log.components(separatedBy: "configuration reload refused").count == 2, "\(tier.log)")
            #expect(tier.log.contains("--origin must be an http:// or https:// URL"), "\(tier.log)")
            #expect(load.origins(after: broken) == [b.port], "\(load.summary)")

            #expect(await load.finish(), "the load did not stop")
            #expect(load.failures.isEmpty, "\(load.failures.prefix(5)) of \(load.count)")
            #expect(load.count > 200, "\(load.summary)")
            #expect(tier.isAlive)
        }
    }
}

/// The tier's config file, rewritten and reloaded by SIGHUP.
struct TierConfig {
    let path: String

    func write(_ origins: [EdgeProcess], policy: String) throws {
        let list = origins.map { "\"\($0.baseURL)\"" }.joined(separator: ", ")
        try write(raw: "origin = [\(list)]\norigin-policy = \"\(policy)\"\nhealth-interval-ms = 200\nlog-level = \"info\"\n")
    }

    func write(raw: String) throws { try FileIO.writeAtomically(Array(raw.utf8), to: path) }

    /// SIGHUP, then waits (10 s at most) for the `count`th log line saying `text`.
    func reload(_ tier: EdgeProcess, expecting text: String, count: Int) async throws {
        tier.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while tier.log.components(separatedBy: text).count - 1 < count {
            guard Date() < deadline else { throw HarnessError("no '\(text)' (\(count)) in the tier's log: \(tier.log)") }
            try await Task.sleep(for: .milliseconds(25))
        }
    }
}

/// Clients on keep-alive connections asking the tier for the manifest with `Cache-Control:
/// no-cache` (so each request reaches an origin, which `Cache-Status` names) until stopped.
final class TierLoad: Sendable {
    private struct Answer: Sendable {
        var status: Int
        var originPort: Int?
    }
    private let answers: EdgeLocked<[Answer]>
    private let errors: EdgeLocked<[String]>
    private let flag: EdgeStopFlag
    private let threads: EdgeThreads

    init(port: Int, clients: Int) {
        let (answers, errors, flag) = (EdgeLocked<[Answer]>([]), EdgeLocked<[String]>([]), EdgeStopFlag())
        (self.answers, self.errors, self.flag) = (answers, errors, flag)
        threads = EdgeThreads.spawn(clients) { _ in
            var connection: RawHTTPConnection?
            while !flag.isSet {
                do {
                    let c = try connection ?? RawHTTPConnection(port: port)
                    connection = c
                    let r = try c.request("GET", "/manifest.plist", headers: [("Cache-Control", "no-cache")])
                    answers.with { $0.append(Answer(status: r.status, originPort: TierLoad.originPort(r.header("Cache-Status")))) }
                    if r.status != 200 { errors.with { $0.append("\(r.status) \(r.header("Cache-Status") ?? "")") } }
                    if r.header("Connection")?.lowercased() == "close" {
                        c.close()
                        connection = nil
                    }
                } catch {
                    errors.with { $0.append("\(error)") }
                    connection?.close()
                    connection = nil
                }
            }
            connection?.close()
        }
    }

    /// The port in `origin="127.0.0.1:PORT"`.
    static func originPort(_ cacheStatus: String?) -> Int? {
        guard let range = cacheStatus?.range(of: #"origin="[^"]*:\d+""#, options: .regularExpression), let text = cacheStatus?[range] else { return nil }
        return Int(text.dropLast().split(separator: ":").last ?? "")
    }

    var count: Int { answers.value.count }
    var failures: [String] { errors.value }
    var summary: String { "\(count) answers, origins \(Set(answers.value.compactMap(\.originPort))), failures \(failures.prefix(3))" }

    /// The origins' ports that answered after the `index`th answer.
    func origins(after index: Int) -> Set<Int> { Set(answers.value.dropFirst(index).compactMap(\.originPort)) }

    /// Waits (10 s at most) for an answer from `origin` after the `index`th.
    func waitFor(origin: EdgeProcess, after index: Int) async -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !origins(after: index).contains(origin.port) {
            guard Date() < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    func stop() { flag.stop() }

    /// Stops the clients and waits for them (10 s at most).
    func finish() async -> Bool {
        flag.stop()
        return await threads.join(timeout: 10)
    }
}
