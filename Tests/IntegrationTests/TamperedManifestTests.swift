import FolioTestSupport
import FolioPlist
import FolioSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A published manifest whose `createdAt` is +Infinity (a corrupted or tampered publish) once
/// killed folio-edge at startup and, after a sync from a server that served it, every `folio status`.
/// It is a broken publish like any other: refused with a message, and nothing good is lost.
@Suite("tampered manifest", .serialized)
struct TamperedManifestTests {
    /// `manifest` with `createdAt` set to `seconds` from 2001 and its version raised to `version`.
    static func tampered(_ manifest: [UInt8], createdAt seconds: Double, version: Int) throws -> [UInt8] {
        guard case .dict(var root) = try BinaryPlist.decode(manifest) else { throw HarnessError("manifest is not a dict") }
        root["createdAt"] = .date(Date(timeIntervalSinceReferenceDate: seconds))
        root["version"] = .int(Int64(version))
        return BinaryPlist.encode(.dict(root))
    }

    @Test("folio-edge: exits with one line at startup, and keeps serving its version when such a publish arrives")
    func edge() async throws {
        let fixture = try EdgeFixture.make("edge-tampered")
        defer { fixture.cleanup() }
        let good = try fixture.bytes("manifest.plist")
        let version = try fixture.manifest().version
        let bad = try Self.tampered(good, createdAt: .infinity, version: version + 1)

        // Running: the publish is rejected, the old version keeps serving.
        let edge = try EdgeProcess.start(root: fixture.root, args: ["--watch-interval-ms", "100"])
        try FileIO.writeAtomically(bad, to: fixture.root + "/manifest.plist")
        #expect(await edge.waitForLog("rejected publish", timeout: 5), "log: \(edge.log)")
        #expect(edge.log.contains("not a usable date"), "log: \(edge.log)")
        #expect(try edge.health() == "ok version \(version)\n")
        #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").body == good)
        edge.stop()

        // At startup: exit 1 with one line that names the manifest and the field, never a signal.
        let r = try Harness.run(Harness.binary("folio-edge"), ["--root", fixture.root, "--port", "0", "--no-access-log"])
        #expect(r.status == 1, "exit \(r.status): \(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("manifest.plist") && lines[0].contains("not a usable date"), "\(r.stderr)")
    }

    @Test("folio sync refuses it from a plain static server and keeps its cache; status and reads keep working")
    func client() throws {
        let root = try ClientRoot.make("client-tampered")
        defer { root.cleanup() }
        let cache = root.dir + "/cache"
        let edge = try ClientEdge.start(root: root.root)
        let first = try ClientTest.folio(["sync"], cache: cache, edge: edge.url)
        edge.stop()
        #expect(first.status == 0, "\(first.stderr)")
        let version = try root.manifest().version

        // The tampered manifest, served byte for byte by a static server that checks nothing.
        let bad = try Self.tampered(try FileIO.read(root.root + "/manifest.plist"), createdAt: .infinity, version: version + 1)
        try FileIO.writeAtomically(bad, to: root.root + "/manifest.plist")
        for mirror in ["/manifest.plist.gz", "/manifest.json"] { try? FileManager.default.removeItem(atPath: root.root + mirror) }
        let server = try StaticServer.start(root: root.root)
        defer { server.stop() }

        let sync = try ClientTest.folio(["sync", "--force"], cache: cache, edge: server.url)
        #expect(sync.status == 1, "exit \(sync.status): \(sync.stderr)")
        #expect(sync.stderr.contains("not a usable date"), "\(sync.stderr)")
        let status = try ClientTest.folio(["status", "--json"], cache: cache, edge: server.url)
        #expect(status.status == 0, "exit \(status.status): \(status.stderr)")
        #expect(try ClientTest.json(status)["version"]?.intValue == version, "\(status.stdout)")
        #expect(try ClientTest.folio(["status"], cache: cache, edge: server.url).status == 0)
        let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache, edge: server.url)
        #expect(read.status == 0 && read.stdout.contains("summer"), "\(read.stderr)")
    }
}

/// Python's `http.server` on an ephemeral loopback port (at most 120 s): a static host that serves whatever is on disk.
final class StaticServer: @unchecked Sendable {
    let port: Int
    private let process: Process
    private let logDir: String
    var url: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, process: Process, logDir: String) {
        self.port = port
        self.process = process
        self.logDir = logDir
    }

    static func start(root: String) throws -> StaticServer {
        let logDir = Harness.tempDir("static-server")
        _ = FileManager.default.createFile(atPath: logDir + "/out", contents: nil)
        let p = Process()
        // It ends by itself after 120 s, even if this test process dies before `stop()`.
        let script = """
            import functools, http.server, os, sys, threading
            threading.Timer(120, lambda: os._exit(0)).start()
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            print("serving on port", server.server_address[1], flush=True)
            server.serve_forever()
            """
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", script, root]
        p.standardOutput = FileHandle(forWritingAtPath: logDir + "/out")!
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let text = String(decoding: (try? FileIO.read(logDir + "/out")) ?? [], as: UTF8.self)
            if let range = text.range(of: " port "), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                return StaticServer(port: port, process: p, logDir: logDir)
            }
            if !p.isRunning { break }
            ClientTest.sleep(ms: 20)
        }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        Harness.cleanup(logDir)
        throw HarnessError("python3 -m http.server did not start")
    }

    func stop() {
        // SIGKILL: a child of the test runner may inherit SIGTERM ignored.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        Harness.cleanup(logDir)
    }
}
