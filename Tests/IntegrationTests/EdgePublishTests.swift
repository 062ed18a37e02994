import FolioTestSupport
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EdgeIntegration {
    /// folio-build and folio-edge together: new versions, broken publishes, signals.
    @Suite("folio-edge live: publishing", .serialized)
    struct EdgePublishTests {
        /// Rewrites sonnet 18 in a content directory (a different object, index and all).
        static func editSonnet18(in content: String, to replacement: String) throws {
            let path = content + "/sonnets/018.txt"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let edited = text.replacingOccurrences(of: "summer’s day", with: replacement)
            #expect(edited != text)
            try edited.write(toFile: path, atomically: true, encoding: .utf8)
        }

        @Test("a port already in use: one clear error line and exit 1, nothing from the event loops")
        func portInUse() throws {
            let fixture = try EdgeFixture.make("edge-port")
            defer { fixture.cleanup() }
            let edge = try EdgeProcess.start(root: fixture.root)
            defer { edge.stop() }
            let r = try Harness.run(Harness.binary("folio-edge"), ["--root", fixture.root, "--port", String(edge.port)])
            #expect(r.status == 1)
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(r.stderr)")
            #expect(lines.first?.hasPrefix("folio-edge: error: cannot listen on 127.0.0.1:\(edge.port)") == true, "\(r.stderr)")
            #expect(r.stderr.contains("in use"), "\(r.stderr)")
        }

        @Test("hot swap: a new publish is served within 3 s and the previous objects stay servable")
        func hotSwap() async throws {
            let fixture = try EdgeFixture.make("edge-swap", editableContent: true)
            defer { fixture.cleanup() }
            let v1 = try fixture.manifest()
            let old = try #require(v1.entry("sonnets/018.plist"))
            let oldBytes = try fixture.bytes(old.objectPath)
            let edge = try EdgeProcess.start(root: fixture.root, args: ["--watch-interval-ms", "100"])
            defer { edge.stop() }
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/content/sonnets/018.plist").body == oldBytes)
            // A keep-alive connection opened before the swap.
            let c = try RawHTTPConnection(port: edge.port)
            defer { c.close() }
            #expect(try c.request("GET", "/healthz").text == "ok version 1\n")

            try Self.editSonnet18(in: fixture.content, to: "winter’s night")
            let r = try fixture.publish()
            #expect(r.status == 0, "\(r.stderr)")
            let v2 = try fixture.manifest()
            #expect(v2.version == 2)
            let new = try #require(v2.entry("sonnets/018.plist"))
            #expect(new.sha256 != old.sha256)
            let newBytes = try fixture.bytes(new.objectPath)

            let took = await edge.waitForVersion(2, timeout: 3)
            #expect(took != nil, "the edge did not report version 2 within 3 s; log: \(edge.log)")

            let content = try RawHTTPConnection.fetch(port: edge.port, "/content/sonnets/018.plist")
            #expect(content.status == 200)
            #expect(content.body == newBytes)
            #expect(content.header("ETag") == "\"\(new.sha256)\"")
            // The connection opened before the swap sees the new version too.
            #expect(try c.request("GET", "/content/sonnets/018.plist").body == newBytes)
            #expect(try c.request("GET", "/manifest.plist").body == (try fixture.bytes("manifest.plist")))

            // The previous version's objects and manifest are still served.
            let oldObject = try RawHTTPConnection.fetch(port: edge.port, "/" + old.objectPath)
            #expect(oldObject.status == 200)
            #expect(oldObject.body == oldBytes)
            let oldGzip = try RawHTTPConnection.fetch(port: edge.port, "/" + old.objectPath, headers: [("Accept-Encoding", "gzip")])
            #expect(oldGzip.status == 200)
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifests/1.plist").body == (try fixture.bytes("manifests/1.plist")))
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifests/2.plist").status == 200)
            #expect(try edge.metric("folio_edge_loaded_version") == 2)
            #expect(edge.log.contains("loaded version"))
        }

        @Test("publishing ten versions under keep-alive load: every response is 200 or 304")
        func publishUnderLoad() async throws {
            let fixture = try EdgeFixture.make("edge-load", editableContent: true)
            defer { fixture.cleanup() }
            // Variant B differs from A in sonnet 18; alternating them makes every publish a new version.
            let contentB = fixture.dir + "/content-b"
            try FileManager.default.copyItem(atPath: fixture.content, toPath: contentB)
            try Self.editSonnet18(in: contentB, to: "winter’s night")
            let shaA = try #require(try fixture.manifest().entry("sonnets/018.plist")).sha256
            // Variant B's sonnet 18, learned from a scratch publish so clients can check every body.
            let probe = try Harness.run(
                Harness.binary("folio-build"), ["--content", contentB, "--output", fixture.dir + "/probe", "--quiet"],
                env: EdgeFixture.buildEnv)
            #expect(probe.status == 0, "\(probe.stderr)")
            let shaB = try #require(try Manifest(bytes: try FileIO.read(fixture.dir + "/probe/manifest.plist")).entry("sonnets/018.plist")).sha256
            #expect(shaA != shaB)
            let knownContent: Set<String> = [shaA, shaB]

            let edge = try EdgeProcess.start(root: fixture.root, args: ["--watch-interval-ms", "100"])
            defer { edge.stop() }
            let port = edge.port

            struct Stats: Sendable {
                var requests = 0
                var byStatus: [Int: Int] = [:]
                var failures: [String] = []
                var gracefulCloses = 0
                var versionsSeen: Set<Int> = []
            }
            let stats = EdgeLocked(Stats())
            let issued = EdgeLocked(0)
            let stop = EdgeStopFlag()
            let start = edgeMonotonicSeconds()
            let maxRequests = 20_000
            let maxSeconds = 10.0

            let clients = EdgeThreads.spawn(4) { worker in
                var local = Stats()
                var conn: RawHTTPConnection?
                var manifestETag: String?
                var current: String?
                let encoding: [(String, String)] = worker % 2 == 0 ? [("Accept-Encoding", "gzip")] : []
                func body(_ r: EdgeResponse) throws -> [UInt8] {
                    r.header("Content-Encoding") == "gzip" ? try Gzip.decompress(r.body, maxSize: 1 << 24) : r.body
                }
                func check(_ r: EdgeResponse, _ target: String) -> Bool {
                    local.requests += 1
                    local.byStatus[r.status, default: 0] += 1
                    guard r.status == 200 || r.status == 304 else {
                        local.failures.append("GET \(target) → \(r.status) \(r.text.prefix(80))")
                        return false
                    }
                    return true
                }
                while !stop.isSet, issued.value < maxRequests, edgeMonotonicSeconds() - start < maxSeconds {
                    do {
                        let c = try conn ?? RawHTTPConnection(port: port)
                        conn = c
                        var closing = false
                        let conditional = manifestETag.map { [("If-None-Match", $0)] } ?? []
                        let m = try c.request("GET", "/manifest.plist", headers: encoding + conditional)
                        if check(m, "/manifest.plist"), m.status == 200 {
                            let manifest = try Manifest(bytes: try body(m))
                            local.versionsSeen.insert(manifest.version)
                            current = manifest.entry("sonnets/018.plist")?.sha256
                            manifestETag = m.header("ETag")
                        }
                        closing = closing || m.header("Connection") == "close"
                        let content = try c.request("GET", "/content/sonnets/018.plist", headers: encoding)
                        if check(content, "/content/sonnets/018.plist"), content.status == 200 {
                            let sha = ContentHash.sha256Hex(try body(content))
                            if !knownContent.contains(sha) { local.failures.append("/content/sonnets/018.plist has unknown bytes \(sha)") }
                        }
                        closing = closing || content.header("Connection") == "close"
                        var sent = 2
                        if let sha = current {
                            let target = "/objects/\(sha).plist"
                            let o = try c.request("GET", target, headers: encoding)
                            if check(o, target), o.status == 200, ContentHash.sha256Hex(try body(o)) != sha {
                                local.failures.append("\(target) does not hash to its name")
                            }
                            closing = closing || o.header("Connection") == "close"
                            sent += 1
                        }
                        issued.with { $0 += sent }
                        // A short pause keeps the bounded request budget spread over all ten publishes.
                        usleep(2_000)
                        if closing {
                            local.gracefulCloses += 1
                            c.close()
                            conn = nil
                        }
                    } catch {
                        local.failures.append("worker \(worker): \(error)")
                        conn?.close()
                        conn = nil
                    }
                }
                conn?.close()
                let done = local
                stats.with { s in
                    s.requests += done.requests
                    for (k, v) in done.byStatus { s.byStatus[k, default: 0] += v }
                    s.failures += done.failures
                    s.gracefulCloses += done.gracefulCloses
                    s.versionsSeen.formUnion(done.versionsSeen)
                }
            }

            // Ten publishes in a row: B, A, B, … (versions 2…11).
            try await Task.sleep(for: .milliseconds(200))
            var publishFailures: [String] = []
            var publishesUnderLoad = 0
            func loadRunning() -> Bool { !stop.isSet && issued.value < maxRequests && edgeMonotonicSeconds() - start < maxSeconds }
            for k in 0..<10 {
                let r = try fixture.publish(from: k % 2 == 0 ? contentB : fixture.content)
                if r.status != 0 { publishFailures.append("publish \(k): \(r.stderr)") }
                if loadRunning() { publishesUnderLoad += 1 }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(publishFailures.isEmpty, "\(publishFailures)")
            let last = try fixture.manifest().version
            #expect(last == 11)
            let took = await edge.waitForVersion(last, timeout: 3)
            try await Task.sleep(for: .milliseconds(300))
            stop.stop()
            #expect(await clients.join(timeout: 15), "the load clients did not stop")

            let s = stats.value
            #expect(took != nil, "the edge did not reach version \(last); log: \(edge.log)")
            #expect(s.failures.isEmpty, "\(s.failures.count) failures, the first: \(s.failures.prefix(5))")
            #expect(Set(s.byStatus.keys).isSubset(of: [200, 304]), "\(s.byStatus)")
            #expect(s.gracefulCloses == 0, "the edge closed keep-alive connections \(s.gracefulCloses) times")
            #expect(s.requests >= 200, "only \(s.requests) requests were made")
            #expect(s.versionsSeen.count >= 2, "clients saw versions \(s.versionsSeen.sorted())")
            #expect(publishesUnderLoad >= 5, "only \(publishesUnderLoad) of 10 publishes happened under load (\(s.requests) requests)")
            #expect(try edge.health() == "ok version \(last)\n")
            #expect(edge.isAlive)
        }

        /// The manifest on disk with `version` and, optionally, one entry's sha256 replaced.
        static func rewrittenManifest(_ bytes: [UInt8], version: Int, breaking path: String? = nil) throws -> [UInt8] {
            guard case .dict(var root) = try BinaryPlist.decode(bytes), case .array(var entries)? = root["entries"] else {
                throw HarnessError("manifest.plist is not a dictionary with entries")
            }
            if let path {
                let i = try #require(entries.firstIndex { $0["path"] == .string(path) })
                guard case .dict(var e) = entries[i] else { throw HarnessError("entry is not a dictionary") }
                e["sha256"] = .string(String(repeating: "0", count: 64))
                entries[i] = .dict(e)
            }
            root["entries"] = .array(entries)
            root["version"] = .int(Int64(version))
            let out = BinaryPlist.encode(.dict(root))
            #expect(try Manifest(bytes: out).version == version)
            return out
        }

        @Test("a publish naming a missing object is rejected; the previous version keeps serving")
        func brokenPublish() async throws {
            let fixture = try EdgeFixture.make("edge-broken")
            defer { fixture.cleanup() }
            let good = try fixture.bytes("manifest.plist")
            let entry = try #require(try fixture.manifest().entry("sonnets/018.plist"))
            let object = try fixture.bytes(entry.objectPath)
            let edge = try EdgeProcess.start(root: fixture.root, args: ["--watch-interval-ms", "100"])
            defer { edge.stop() }

            let broken = try Self.rewrittenManifest(good, version: 2, breaking: "sonnets/018.plist")
            try FileIO.writeAtomically(broken, to: fixture.root + "/manifest.plist")
            #expect(await edge.waitForLog("rejected publish", timeout: 3), "log: \(edge.log)")
            // Several polls later, still version 1, with every byte of version 1.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try edge.health() == "ok version 1\n")
            let m = try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist")
            #expect(m.status == 200)
            #expect(m.body == good, "the edge must not serve the rejected manifest")
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/content/sonnets/018.plist").body == object)
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/objects/\(String(repeating: "0", count: 64)).plist").status == 404)
            #expect(try edge.metric("folio_edge_reload_failures_total") == 1)
            #expect(edge.log.components(separatedBy: "rejected publish").count - 1 == 1, "rejected once, not on every poll")

            // A good manifest, then SIGHUP: it loads.
            let fixed = try Self.rewrittenManifest(good, version: 2)
            try FileIO.writeAtomically(fixed, to: fixture.root + "/manifest.plist")
            edge.signal(SIGHUP)
            #expect(await edge.waitForVersion(2, timeout: 3) != nil, "log: \(edge.log)")
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").body == fixed)
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/content/sonnets/018.plist").body == object)
            #expect(edge.isAlive)
        }

        @Test("SIGHUP reloads even when the watcher would not look for a long time")
        func sighupReload() async throws {
            let fixture = try EdgeFixture.make("edge-hup")
            defer { fixture.cleanup() }
            let good = try fixture.bytes("manifest.plist")
            let edge = try EdgeProcess.start(root: fixture.root, args: ["--watch-interval-ms", "3600000"])
            defer { edge.stop() }

            // A broken manifest on SIGHUP is rejected too.
            try FileIO.writeAtomically(try Self.rewrittenManifest(good, version: 2, breaking: "sonnets/001.plist"), to: fixture.root + "/manifest.plist")
            edge.signal(SIGHUP)
            #expect(await edge.waitForLog("rejected publish", timeout: 3), "log: \(edge.log)")
            #expect(try edge.health() == "ok version 1\n")

            let v3 = try Self.rewrittenManifest(good, version: 3)
            try FileIO.writeAtomically(v3, to: fixture.root + "/manifest.plist")
            try await Task.sleep(for: .milliseconds(400))
            #expect(try edge.health() == "ok version 1\n", "no reload without the signal (the watcher waits an hour)")
            edge.signal(SIGHUP)
            #expect(await edge.waitForVersion(3, timeout: 3) != nil, "log: \(edge.log)")
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").body == v3)
            #expect(edge.isAlive)
        }

        @Test("SIGTERM drains: a request in flight on a keep-alive connection is still answered, exit 0", .http1Only)
        func sigtermDrains() async throws {
            let fixture = try EdgeFixture.make("edge-drain")
            defer { fixture.cleanup() }
            let entry = try #require(try fixture.manifest().entry("sonnets/018.plist"))
            let object = try fixture.bytes(entry.objectPath)
            let edge = try EdgeProcess.start(root: fixture.root)
            defer { edge.stop() }

            let c = try RawHTTPConnection(port: edge.port)
            defer { c.close() }
            #expect(try c.request("GET", "/healthz").text == "ok version 1\n")
            let head = RawHTTPConnection.head("GET", "/content/sonnets/018.plist")
            let split = head.index(head.startIndex, offsetBy: head.count / 2)
            try c.send(String(head[..<split]))
            try await Task.sleep(for: .milliseconds(200))
            edge.signal(SIGTERM)
            try await Task.sleep(for: .milliseconds(300))
            var outcome = "no response"
            do {
                try c.send(String(head[split...]))
                let r = try c.readResponse()
                outcome = "\(r.status)"
                #expect(r.status == 200)
                #expect(r.body == object)
            } catch {
                outcome = "\(error)"
            }
            #expect(outcome == "200", "the request in flight at SIGTERM was not answered: \(outcome)")

            let t0 = edgeMonotonicSeconds()
            #expect(edge.waitForExit(timeout: 10), "folio-edge did not exit within 10 s of SIGTERM")
            let status = edge.exitStatus
            #expect(status?.normalExit == true && status?.status == 0, "exit: \(String(describing: status))")
            #expect(edgeMonotonicSeconds() - t0 < 10)
            #expect(edge.log.contains("draining"))
        }

        @Test("SIGTERM with idle keep-alive connections exits 0 promptly and stops accepting", .http1Only)
        func sigtermIdle() async throws {
            let fixture = try EdgeFixture.make("edge-term")
            defer { fixture.cleanup() }
            let edge = try EdgeProcess.start(root: fixture.root)
            defer { edge.stop() }
            var idle: [RawHTTPConnection] = []
            defer { for c in idle { c.close() } }
            for _ in 0..<3 {
                let c = try RawHTTPConnection(port: edge.port)
                #expect(try c.request("GET", "/healthz").status == 200)
                idle.append(c)
            }
            edge.signal(SIGTERM)
            for c in idle { #expect(c.waitForClose(timeout: 5), "an idle connection is closed on SIGTERM") }
            #expect(edge.waitForExit(timeout: 10))
            #expect(edge.exitStatus?.status == 0 && edge.exitStatus?.normalExit == true, "exit: \(String(describing: edge.exitStatus))")
            #expect(throws: (any Error).self) { try RawHTTPConnection.fetch(port: edge.port, "/healthz") }
        }
    }
}
