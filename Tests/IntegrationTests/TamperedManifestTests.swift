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
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        let first = try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL)
        edge.stop()
        #expect(first.status == 0, "\(first.stderr)")
        let version = try root.manifest().version

        // The tampered manifest, served byte for byte by a static server that checks nothing.
        let bad = try Self.tampered(try FileIO.read(root.root + "/manifest.plist"), createdAt: .infinity, version: version + 1)
        try FileIO.writeAtomically(bad, to: root.root + "/manifest.plist")
        // head.plist goes too: it names the real manifest by hash, so a client reading it would
        // not look at the tampered file at all.
        for mirror in ["/manifest.plist.gz", "/manifest.json", "/head.plist"] { try? FileManager.default.removeItem(atPath: root.root + mirror) }
        let server = try PythonServer.staticFiles(root: root.root)
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
