import Dispatch
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// `folio-edge --origin --cache-dir`: a cache larger than its memory, and a tier killed at
/// random instants that never serves a torn or wrong entry afterwards.
extension EdgeIntegration {
    @Suite("folio-edge --cache-dir: the disk tier", .serialized)
    struct DiskTier {
        /// Every object and its gzip variant where there is one, as (path, accept gzip).
        static func requests(_ manifest: Manifest) -> [(String, Bool)] {
            manifest.entries.flatMap { e in [("/" + e.objectPath, false)] + (e.gzipSize != nil ? [("/" + e.objectPath, true)] : []) }
        }

        /// Whether a 200 for an object is its own bytes: the SHA-256 of the (decoded) body is the
        /// hash in its name.
        static func isWhole(_ path: String, _ r: EdgeResponse) -> Bool {
            var body = r.body
            if r.header("Content-Encoding") == "gzip" {
                guard let plain = try? Gzip.decompress(body, maxSize: 64 << 20) else { return false }
                body = plain
            }
            let name = FileIO.lastComponent(of: path)
            return name.hasPrefix(ContentHash.sha256Hex(body) + ".")
        }

        static func fetch(_ port: Int, _ request: (String, Bool)) throws -> EdgeResponse {
            try RawHTTPConnection.fetch(port: port, request.0, headers: request.1 ? [("Accept-Encoding", "gzip")] : [])
        }

        @Test("memory of 64 KB over a disk tier: the second pass is all hits, byte for byte, read back from disk")
        func largerThanMemory() async throws {
            let fixture = try EdgeFixture.make("disk-tier")
            defer { fixture.cleanup() }
            let origin = try EdgeProcess.start(root: fixture.root)
            defer { origin.stop() }
            let tier = try EdgeProcess.start(
                root: fixture.root, args: ["--origin", origin.baseURL, "--cache-dir", fixture.dir + "/cache", "--memory-size", "64K"])
            defer { tier.stop() }
            let requests = Self.requests(try fixture.manifest())
            for request in requests {
                let r = try Self.fetch(tier.port, request)
                #expect(r.status == 200 && Self.isWhole(request.0, r), "\(request)")
            }
            var hits = 0
            for request in requests {
                let r = try Self.fetch(tier.port, request)
                #expect(r.status == 200 && Self.isWhole(request.0, r), "\(request)")
                if r.header("Cache-Status") == "folio-edge; hit" { hits += 1 }
            }
            #expect(hits == requests.count)
            let metrics = try RawHTTPConnection.fetch(port: tier.port, "/.folio/metrics").text
            let reads = try #require(EdgeProcess.metric("folio_edge_cache_disk_reads", in: metrics))
            #expect(reads > Double(requests.count) / 2, "most second-pass hits come from disk: \(reads) of \(requests.count)")
            #expect(try #require(EdgeProcess.metric("folio_edge_cache_bytes", in: metrics)) <= 64 * 1024)
            #expect(EdgeProcess.metric("folio_edge_cache_disk_entries", in: metrics) == Double(requests.count))
        }

        @Test("--memory-size 0: every hit is one entry file read back from disk, byte for byte, through held descriptors")
        func noMemory() async throws {
            let fixture = try EdgeFixture.make("disk-only")
            defer { fixture.cleanup() }
            let origin = try EdgeProcess.start(root: fixture.root)
            defer { origin.stop() }
            let tier = try EdgeProcess.start(
                root: fixture.root, args: ["--origin", origin.baseURL, "--cache-dir", fixture.dir + "/cache", "--memory-size", "0"])
            defer { tier.stop() }
            let requests = Self.requests(try fixture.manifest())
            for request in requests { _ = try Self.fetch(tier.port, request) }
            let before = try RawHTTPConnection.fetch(port: tier.port, "/.folio/metrics").text
            for _ in 0..<2 {
                for request in requests {
                    let r = try Self.fetch(tier.port, request)
                    #expect(r.status == 200 && Self.isWhole(request.0, r) && r.header("Cache-Status") == "folio-edge; hit", "\(request)")
                }
            }
            let after = try RawHTTPConnection.fetch(port: tier.port, "/.folio/metrics").text
            let reads = { (text: String) in EdgeProcess.metric("folio_edge_cache_disk_reads", in: text) ?? -1 }
            #expect(reads(after) - reads(before) == Double(2 * requests.count), "one file per hit")
            #expect(EdgeProcess.metric("folio_edge_cache_bytes", in: after) == 0)
            #expect(EdgeProcess.metric("folio_edge_cache_disk_open_files", in: after) == Double(requests.count))
            #expect(EdgeProcess.metric("folio_edge_cache_disk_failures", in: after) == 0)
        }

        @Test("killed (SIGKILL) at random instants while it stores: after a restart with the origin gone, every answer is whole")
        func killedAtAnyInstant() async throws {
            let fixture = try EdgeFixture.make("disk-kill")
            defer { fixture.cleanup() }
            let origin = try EdgeProcess.start(root: fixture.root)
            let cache = fixture.dir + "/cache"
            let requests = Self.requests(try fixture.manifest())
            for round in 0..<4 {
                let tier = try EdgeProcess.start(
                    root: fixture.root, args: ["--origin", origin.baseURL, "--cache-dir", cache, "--memory-size", "32K", "--no-access-log"])
                let port = tier.port
                let load = Thread {
                    DispatchQueue.concurrentPerform(iterations: 4) { worker in
                        for i in stride(from: worker, to: requests.count, by: 4) { _ = try? Self.fetch(port, requests[(i + round * 37) % requests.count]) }
                    }
                }
                load.start()
                usleep(UInt32.random(in: 20_000...200_000))
                tier.signal(SIGKILL)
                _ = tier.waitForExit(timeout: 10)
            }
            origin.stop()
            let tier = try EdgeProcess.start(root: fixture.root, args: ["--origin", origin.baseURL, "--cache-dir", cache])
            defer { tier.stop() }
            var served = 0
            for request in requests {
                let r = try Self.fetch(tier.port, request)
                if r.status == 200 {
                    served += 1
                    #expect(Self.isWhole(request.0, r), "\(request) was served torn or wrong")
                } else {
                    #expect(r.status == 502, "\(request): \(r.status)")
                }
            }
            #expect(served > 0, "some entries outlived the kills")
        }
    }
}
