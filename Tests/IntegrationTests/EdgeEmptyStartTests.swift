import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EdgeIntegration {
    /// `folio-edge --root DIR --deploy-token-file F` on a fresh VM: DIR empty, without a
    /// manifest, or missing; it answers 503 until its first deploy, then serves as usual.
    @Suite("folio-edge: started empty, waiting for a first deploy", .serialized)
    struct EdgeEmptyStartTests {
        /// What the root holds when the edge starts.
        enum Start: String, CaseIterable, Sendable {
            case empty, noManifest, missing
        }

        @Test("503 with Retry-After, /healthz and /metrics say so; a first deploy uploads everything and serves it", arguments: Start.allCases)
        func firstDeploy(_ start: Start) throws {
            let s = try EmptyEdge.make("empty-\(start.rawValue)", start: start)
            defer { s.cleanup() }
            try EmptyEdge.expectWaiting(s.edge)
            #expect(FileIO.exists(s.edgeRoot))
            let metrics = try EmptyEdge.metrics(s)
            #expect(metrics.contains("folio_edge_awaiting_first_deploy 1") && metrics.contains("folio_edge_loaded_version 0"), "\(metrics)")

            let present = (try? DeploySetup.objectFiles(s.edgeRoot)) ?? []
            let lacking = try DeploySetup.objectFiles(s.src).subtracting(present)
            #expect(start == .noManifest ? !present.isEmpty : present.isEmpty)
            let r = try s.deploy()
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("deployed version 1 to \(s.url):"), "\(r.stdout)")
            // Each lacking file sent or made by the edge from one sent: at most one per object.
            let (sent, rebuilt) = (DeploySetup.objectsUploaded(r) ?? -1, DeploySetup.objectsRebuilt(r) ?? -1)
            let objects = Set(try Manifest(bytes: try FileIO.read(s.src + "/manifest.plist")).allEntries.map(\.sha256)).count
            #expect(sent + rebuilt == lacking.count && sent <= objects, "\(r.stdout)")
            try s.expectServesWhole(1)
            try s.expectSameFiles()
            let entry = try #require(try Manifest(bytes: try s.edgeManifestBytes()).entry("sonnets/018.plist"))
            let content = try RawHTTPConnection.fetch(port: s.edge.port, "/content/sonnets/018.plist")
            let expected = try FileIO.read(s.src + "/" + entry.objectPath)
            #expect(content.status == 200 && content.body == expected)
            #expect(try EmptyEdge.metrics(s).contains("folio_edge_awaiting_first_deploy 0"))
        }

        @Test("after the first deploy a one-line edit uploads only what changed; folio sync takes it as a delta; systemd hears each")
        func editAfterFirstDeploy() throws {
            let notify = try NotifySocket()
            defer { notify.close() }
            let s = try EmptyEdge.make("empty-edit", start: .empty, env: ["NOTIFY_SOCKET": notify.path])
            defer { s.cleanup() }
            #expect(notify.wait(for: "READY=1\nSTATUS=waiting for a first deploy"), "\(notify.messages)")
            // A SIGHUP with still nothing to load changes nothing and refuses nothing (sent once
            // the edge had time to trap it: READY comes from the listener, not the watcher).
            ClientTest.sleep(ms: 300)
            s.edge.signal(SIGHUP)
            #expect(notify.wait(for: "READY=1\nSTATUS=waiting for a first deploy", count: 2), "\(notify.messages)")
            #expect(!s.edge.log.contains("rejected publish"), "\(s.edge.log)")
            #expect(try s.deploy().status == 0)
            try s.expectServesWhole(1)
            #expect(notify.wait(for: "STATUS=serving version 1"), "\(notify.messages)")

            let cache = ClientCache(dir: s.dir + "/cache")
            let sync = { try ClientTest.folio(["sync", "--force", "--json"], cache: cache.dir, edge: s.edge.baseURL, env: ["FOLIO_SEED": ""]) }
            #expect(try sync().status == 0)
            let changed = try s.editSonnet()
            DeploySetup.expectEditDeployed(try s.deploy(), changed: changed)
            try s.expectServesWhole(2)
            #expect(notify.wait(for: "STATUS=serving version 2"), "\(notify.messages)")
            let r = try ClientTest.json(try sync())
            #expect(r["method"]?.stringValue == "delta", "\(r)")
            #expect(r["objectsFetched"]?.intValue == 0, "\(r)")
        }

        @Test("validate accepts an empty root with a deploy token (a note); without one, or under a missing parent, it is an error")
        func validate() throws {
            let dir = Harness.tempDir("empty-validate")
            defer { Harness.cleanup(dir) }
            let token = dir + "/token"
            try FileIO.writeAtomically(Array((DeploySetup.token + "\n").utf8), to: token)
            let edge = Harness.binary("folio-edge")
            let withToken = ["--port", "0", "--deploy-token-file", token]
            try FileIO.makeDirectory(dir + "/empty")
            let ok = try Harness.run(edge, ["validate", "--root", dir + "/empty"] + withToken)
            #expect(ok.status == 0 && ok.stdout == "configuration OK\n", "\(ok.stdout) \(ok.stderr)")
            #expect(ok.stderr.contains("note: --root \(dir)/empty holds no manifest.plist yet: the edge will answer 503 until a first deploy"), "\(ok.stderr)")
            let missing = try Harness.run(edge, ["validate", "--root", dir + "/new"] + withToken)
            #expect(missing.status == 0 && missing.stderr.contains("(made at start)"), "\(missing.stdout) \(missing.stderr)")
            #expect(!FileIO.exists(dir + "/new"), "validate made the root")

            let parentless = try Harness.run(edge, ["validate", "--root", dir + "/no/such"] + withToken)
            #expect(parentless.status == 1 && parentless.stderr.contains("its parent \(dir)/no does not exist"), "\(parentless.stderr)")
            let noToken = try Harness.run(edge, ["validate", "--root", dir + "/empty", "--port", "0"])
            #expect(noToken.status == 1, "\(noToken.stdout)")
            #expect(noToken.stderr.contains("manifest.plist not found") && noToken.stderr.contains("--deploy-token-file"), "\(noToken.stderr)")
            // A start (bounded: EdgeProcess.start gives up after 20 s) fails the same ways.
            for (root, args, why) in [
                (dir + "/no/such", ["--deploy-token-file", token], "its parent \(dir)/no does not exist"),
                (dir + "/empty", [], "--deploy-token-file FILE to start empty"),
            ] {
                do {
                    let started = try EdgeProcess.start(root: root, args: args)
                    started.stop()
                    Issue.record("folio-edge --root \(root) \(args) started")
                } catch { #expect("\(error)".contains("exited before listening") && "\(error)".contains(why), "\(error)") }
            }
        }
    }
}

/// An edge that takes deploys started on a root with no version, and `content/` built into
/// `src` (version 1) to deploy to it.
enum EmptyEdge {
    static func make(_ label: String, start: EdgeIntegration.EdgeEmptyStartTests.Start, env: [String: String] = [:]) throws -> DeploySetup {
        let dir = Harness.tempDir(label)
        do {
            let content = Harness.copyContent(to: dir)
            let src = dir + "/public"
            try DeploySetup.build(content, into: src)
            let edgeRoot = dir + "/edge"
            switch start {
            case .empty: try FileIO.makeDirectory(edgeRoot)
            case .noManifest:
                // A first copy cut short: half of the objects, no manifest.
                try FileIO.makeDirectory(edgeRoot + "/objects")
                for (i, name) in try FileIO.list(src + "/objects").sorted().enumerated() where i % 2 == 0 {
                    try FileManager.default.copyItem(atPath: src + "/objects/" + name, toPath: edgeRoot + "/objects/" + name)
                }
            case .missing: break
            }
            let tokenFile = dir + "/token"
            try FileIO.writeAtomically(Array((DeploySetup.token + "\n").utf8), to: tokenFile)
            let edge = try EdgeProcess.start(
                root: edgeRoot, args: ["--threads", "1", "--watch-interval-ms", "100", "--deploy-token-file", tokenFile, "--admin-listen", "127.0.0.1:0"],
                env: env)
            return DeploySetup(dir: dir, content: content, src: src, edgeRoot: edgeRoot, v1: src, tokenFile: tokenFile, edge: edge)
        } catch {
            Harness.cleanup(dir)
            throw error
        }
    }

    /// Requires the edge to answer content 503 with Retry-After and its one-line reason, and
    /// `/healthz` 503 saying it waits.
    static func expectWaiting(_ edge: EdgeProcess, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for path in ["/manifest.plist", "/content/sonnets/018.plist", "/objects/ab/cd.plist"] {
            let r = try RawHTTPConnection.fetch(port: edge.port, path)
            #expect(r.status == 503 && r.header("Retry-After") == "10", "\(path): \(r.status) \(r.headers)", sourceLocation: sourceLocation)
            #expect(r.text == "no content deployed yet: deploy with folio-build publish DIR https://HOST:ADMIN\n", "\(r.text)", sourceLocation: sourceLocation)
            #expect(r.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
        }
        let health = try RawHTTPConnection.fetch(port: edge.port, "/healthz")
        #expect(health.status == 503 && health.text == "waiting for a first deploy\n", "\(health.text)", sourceLocation: sourceLocation)
    }

    /// The admin listener's `/metrics`.
    static func metrics(_ s: DeploySetup) throws -> String { try RawHTTPConnection.fetch(port: s.adminPort, "/metrics").text }
}

/// systemd's notify socket, as a test holds it: a datagram socket the edge is pointed at with
/// `NOTIFY_SOCKET`, each datagram one message.
final class NotifySocket: @unchecked Sendable {
    let path: String
    private let dir = Harness.tempDir("notify")
    private let fd: Int32
    private(set) var messages: [String] = []

    init() throws {
        path = dir + "/notify.sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(fd)
            throw HarnessError("bind \(path): errno \(errno)")
        }
    }

    /// Waits (10 s at most) until `count` messages start with `prefix`.
    func wait(for prefix: String, count: Int = 1, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while messages.filter({ $0.hasPrefix(prefix) }).count < count {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(min(remaining, 0.5) * 1000) + 1) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { messages.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
        }
        return true
    }

    func close() {
        Glibc.close(fd)
        Harness.cleanup(dir)
    }
}
