import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// A full disk on the VM, as a small tmpfs (mounted as root, like the rest of `make test`).
// Under the serialized EdgeIntegration: these tests wait on child processes, and run beside the
// other live-edge suites, not in parallel with them.
extension EdgeIntegration {
@Suite("folio-edge on a full disk", .serialized)
struct EdgeFullDiskTests {
    /// A tmpfs of `size` at a new directory; unmount it with `unmount`.
    static func tmpfs(_ label: String, size: String) throws -> String {
        let dir = Harness.tempDir(label)
        let r = try Harness.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", dir])
        guard r.status == 0 else {
            Harness.cleanup(dir)
            throw HarnessError("cannot mount a tmpfs at \(dir) (the tests run as root): \(r.stderr)")
        }
        return dir
    }

    static func unmount(_ dir: String) {
        _ = try? Harness.run("/bin/umount", [dir])
        Harness.cleanup(dir)
    }

    @Test("a tier whose cache directory fills up keeps serving, says so once, and counts it in its metrics")
    func tierCacheFull() async throws {
        let fixture = try EdgeFixture.make("full-tier")
        defer { fixture.cleanup() }
        let cache = try Self.tmpfs("full-tier-cache", size: "64k")
        defer { Self.unmount(cache) }
        let origin = try EdgeProcess.start(root: fixture.root)
        defer { origin.stop() }
        let tier = try EdgeProcess.start(root: fixture.root, args: ["--origin", origin.baseURL, "--cache-dir", cache, "--memory-size", "1M"])
        defer { tier.stop() }
        let requests = EdgeIntegration.DiskTier.requests(try fixture.manifest())
        for _ in 0..<2 {
            for request in requests {
                let r = try EdgeIntegration.DiskTier.fetch(tier.port, request)
                #expect(r.status == 200 && EdgeIntegration.DiskTier.isWhole(request.0, r), "\(request)")
            }
        }
        #expect(await tier.waitForLog("the cache directory is full", timeout: 5), "\(tier.log)")
        #expect(tier.log.components(separatedBy: "the cache directory is full").count == 2, "said once: \(tier.log)")
        let metrics = try RawHTTPConnection.fetch(port: tier.port, "/.folio/metrics").text
        #expect(EdgeProcess.metric("folio_edge_cache_disk_full", in: metrics) == 1, "\(metrics)")
        #expect(tier.isAlive)
    }

    @Test("a deploy to an edge whose disk fills is refused with 507: the previous version served whole, no staging left")
    func deployDiskFull() throws {
        let s = try DeploySetup.make("full-deploy")
        defer { s.cleanup() }
        // Room for version 1 and a little more, as the file system counts it (4 KB pages).
        let used = Int(try Harness.run("/usr/bin/du", ["-sk", s.v1]).stdout.prefix { $0.isNumber }) ?? 0
        let disk = try Self.tmpfs("full-deploy-root", size: "\(used + 96)k")
        defer { Self.unmount(disk) }
        #expect(try Harness.run("/bin/cp", ["-a", s.v1 + "/.", disk]).status == 0)
        let edge = try EdgeProcess.start(root: disk, args: ["--threads", "1", "--deploy-token-file", s.tokenFile, "--admin-listen", "127.0.0.1:0"])
        defer { edge.stop() }
        let r = try s.deploy(url: "http://127.0.0.1:\(try #require(edge.adminPort))")
        #expect(r.status != 0 && r.stderr.contains("507") && r.stderr.contains("disk is full"), "\(r.stdout) \(r.stderr)")
        try edge.requireVersion(1)
        #expect(try FileIO.read(disk + "/manifest.plist") == FileIO.read(s.v1 + "/manifest.plist"))
        #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").body == FileIO.read(s.v1 + "/manifest.plist"))
        #expect(((try? FileIO.list(disk + "/.deploy")) ?? []).isEmpty, "staging left behind")
        #expect(edge.isAlive)
    }
}
}
