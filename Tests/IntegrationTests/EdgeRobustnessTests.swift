import FolioTestSupport
import FolioPublished
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EdgeIntegration {
    /// Hostile and unusual clients against the real folio-edge; the server must survive each.
    @Suite("folio-edge live: robustness", .serialized, .sharedEdge("edge-robust", args: ["--max-header-bytes", "2048"]))
    struct EdgeRobustnessTests {
        let ctx: SharedEdgeContext
        let entry: Manifest.Entry
        let object: [UInt8]

        init() throws {
            ctx = try SharedEdge.current()
            entry = try #require(ctx.manifest.entry("sonnets/018.plist"))
            object = try ctx.fixture.bytes(entry.objectPath)
        }

        var port: Int { ctx.edge.port }
        var healthy: String { "ok version \(ctx.manifest.version)\n" }

        @Test("pipelining: requests in one write are answered in order on one connection", .http1Only)
        func pipelining() throws {
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            // A large body (sent by reference) between small ones (gathered into one write) must
            // keep its place.
            let all = try #require(ctx.manifest.entry("sonnets/all.plist"))
            let allBytes = try ctx.fixture.bytes(all.objectPath)
            #expect(allBytes.count > 16 * 1024)
            try c.send(
                RawHTTPConnection.head("GET", "/content/sonnets/018.plist")
                    + RawHTTPConnection.head("GET", "/healthz")
                    + RawHTTPConnection.head("HEAD", "/manifest.plist")
                    + RawHTTPConnection.head("GET", "/content/sonnets/all.plist")
                    + RawHTTPConnection.head("GET", "/nope")
                    + RawHTTPConnection.head("GET", "/" + entry.objectPath, headers: [("Range", "bytes=0-3")]))
            let rs = try c.readResponses(["GET", "GET", "HEAD", "GET", "GET", "GET"])
            #expect(rs.map(\.status) == [200, 200, 200, 200, 404, 206])
            #expect(rs[0].body == object)
            #expect(rs[1].text == healthy)
            #expect(rs[2].body.isEmpty)
            #expect(rs[3].body == allBytes)
            #expect(rs[5].body == Array(object[0..<4]))
            #expect(c.received.isEmpty, "no stray bytes after the last response")
            // The connection is still usable.
            #expect(try c.request("GET", "/healthz").text == healthy)
            // A body on a GET is skipped, and the request after it is parsed where it starts.
            try c.send(
                RawHTTPConnection.head("GET", "/healthz", headers: [("Content-Length", "11")]) + "hello world"
                    + RawHTTPConnection.head("GET", "/content/sonnets/018.plist"))
            let more = try c.readResponses(["GET", "GET"])
            #expect(more.map(\.status) == [200, 200])
            #expect(more[1].body == object)
            // Connection: close is honoured after the response.
            let last = try c.request("GET", "/healthz", headers: [("Connection", "close")])
            #expect(last.status == 200)
            #expect(last.header("Connection") == "close")
            #expect(c.waitForClose(timeout: 3))
            #expect(ctx.edge.isAlive)
        }

        @Test("an absolute-form request target is accepted (RFC 9112 §3.2.2: a server MUST accept it)", .http1Only)
        func absoluteForm() throws {
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            let r = try c.request("GET", "http://127.0.0.1:\(port)/content/sonnets/018.plist")
            #expect(r.status == 200, "GET http://127.0.0.1:\(port)/content/sonnets/018.plist → \(r.status) \(r.text)")
            if r.status == 200 { #expect(r.body == object) }
            #expect(ctx.edge.isAlive)
        }

        @Test("garbage bytes get 400 and a closed connection; the server keeps serving", .http1Only)
        func garbage() throws {
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            try c.send([0x00, 0x01] + Array(" garbage\r\n\r\n".utf8))
            let r = try c.readResponse()
            #expect(r.status == 400)
            #expect(c.waitForClose(timeout: 3))
            for bad in ["GET\r\n\r\n", "GET / HTTP/9\r\nHost: x\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n"] {
                let c2 = try RawHTTPConnection(port: port)
                defer { c2.close() }
                try c2.send(bad)
                let r2 = try c2.readResponse()
                #expect(r2.status == 400, "\(bad.debugDescription) → \(r2.status)")
            }
            #expect(try RawHTTPConnection.fetch(port: port, "/healthz").text == healthy)
            #expect(ctx.edge.isAlive)
        }

        @Test("a header section over --max-header-bytes 2048 gets 431; one under it is served", .http1Only)
        func headerTooLarge() throws {
            func pad(_ count: Int) -> [(String, String)] {
                (0..<count).map { (String(format: "X-Pad-%02d", $0), String(repeating: "p", count: 60)) }
            }
            let small = try RawHTTPConnection.fetch(port: port, "/healthz", headers: pad(20))  // ~1.4 KB
            #expect(small.status == 200)
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            try c.send(RawHTTPConnection.head("GET", "/healthz", headers: pad(45)))  // ~3.3 KB
            let r = try c.readResponse()
            #expect(r.status == 431)
            #expect(c.waitForClose(timeout: 3))
            #expect(try RawHTTPConnection.fetch(port: port, "/healthz").text == healthy)
            #expect(ctx.edge.isAlive)
        }

        @Test("the cache tier too: a header section over --max-header-bytes 2048, or over 100 fields, gets 431", .http1Only)
        func tierHeaderTooLarge() throws {
            let origin = try EdgeProcess.start(root: ctx.fixture.root)
            defer { origin.stop() }
            let tier = try EdgeProcess.start(root: ctx.fixture.root, args: ["--origin", origin.baseURL, "--max-header-bytes", "2048"])
            defer { tier.stop() }
            func pad(_ count: Int, _ size: Int = 60) -> [(String, String)] {
                (0..<count).map { (String(format: "X-Pad-%03d", $0), String(repeating: "p", count: size)) }
            }
            #expect(try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist", headers: pad(20)).status == 200)
            for headers in [pad(45), pad(120, 2)] {
                let c = try RawHTTPConnection(port: tier.port)
                defer { c.close() }
                try c.send(RawHTTPConnection.head("GET", "/manifest.plist", headers: headers))
                let r = try c.readResponse()
                #expect(r.status == 431, "\(headers.count) fields: \(r.status)")
                #expect(c.waitForClose(timeout: 3))
            }
            #expect(try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist").status == 200)
            #expect(tier.isAlive)
        }

        @Test("a request target over 8192 bytes gets 414; a long one within the limits is routed", .http1Only)
        func uriTooLong() throws {
            // Within the limits (the request line counts toward --max-header-bytes 2048): routed, 404.
            let ok = "/content/" + String(repeating: "a", count: 1500)
            #expect(try RawHTTPConnection.fetch(port: port, ok).status == 404)
            // Only the request line: the parser must decide on the target before any header.
            let long = "/content/" + String(repeating: "a", count: 8200)
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            try c.send("GET \(long) HTTP/1.1\r\n")
            let r = try c.readResponse()
            #expect(r.status == 414)
            #expect(c.waitForClose(timeout: 3))
            #expect(try RawHTTPConnection.fetch(port: port, "/healthz").text == healthy)
            #expect(ctx.edge.isAlive)
        }

        @Test("HTTP/1.1 without Host (or with two) is 400", .http1Only)
        func missingHost() throws {
            for raw in [
                "GET /healthz HTTP/1.1\r\n\r\n",
                "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            ] {
                let c = try RawHTTPConnection(port: port)
                defer { c.close() }
                try c.send(raw)
                let r = try c.readResponse()
                #expect(r.status == 400, "\(raw.debugDescription)")
                #expect(c.waitForClose(timeout: 3))
            }
            #expect(ctx.edge.isAlive)
        }

        @Test("HTTP/1.0 gets a response and the connection closes", .http1Only)
        func http10() throws {
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            try c.send("GET /content/sonnets/018.plist HTTP/1.0\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 200)
            #expect(r.body == object)
            #expect(c.waitForClose(timeout: 3), "an HTTP/1.0 request without keep-alive ends the connection")
            #expect(ctx.edge.isAlive)
        }

        @Test(
            "slowloris: 20 slow partial heads do not stall normal clients and are cut after --request-timeout (origin, then tier)",
            .http1Only, arguments: [false, true])
        func slowloris(tier: Bool) async throws {
            // As a cache tier, in front of an origin edge: the same guard, in front of NIO's decoder.
            let origin = tier ? try EdgeProcess.start(root: ctx.fixture.root) : nil
            defer { origin?.stop() }
            let edge = try EdgeProcess.start(
                root: ctx.fixture.root, args: ["--request-timeout", "2"] + (origin.map { ["--origin", $0.baseURL] } ?? []))
            defer { edge.stop() }
            let port = edge.port
            let slowCount = 20

            struct Slow: Sendable {
                var connected = 0
                var closedAfter: [Double?] = []
                var got408: [Bool] = []
            }
            let slow = EdgeLocked(Slow())
            // One thread drives every slow connection: a byte per connection every 100 ms.
            let driver = EdgeThreads.spawn(1) { _ in
                var fds: [Int32] = []
                var opened: [Double] = []
                for _ in 0..<slowCount {
                    if let fd = try? edgeConnectLoopback(port: port) {
                        fds.append(fd)
                        opened.append(edgeMonotonicSeconds())
                    }
                }
                let partial = Array(
                    ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + String(repeating: "z", count: 200)).utf8)
                var sent = [Int](repeating: 0, count: fds.count)
                var closedAt = [Double?](repeating: nil, count: fds.count)
                var data = [[UInt8]](repeating: [], count: fds.count)
                var buf = [UInt8](repeating: 0, count: 4096)
                let start = edgeMonotonicSeconds()
                while edgeMonotonicSeconds() - start < 8, closedAt.contains(where: { $0 == nil }) {
                    for i in fds.indices where closedAt[i] == nil {
                        // First take what the server sent (a 408, then end of stream).
                        while true {
                            let n = recv(fds[i], &buf, buf.count, Int32(MSG_DONTWAIT))
                            if n > 0 {
                                data[i] += buf[0..<n]
                                continue
                            }
                            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                                closedAt[i] = edgeMonotonicSeconds()
                            }
                            break
                        }
                        guard closedAt[i] == nil, sent[i] < partial.count else { continue }
                        let n = partial.withUnsafeBytes { edgeSendBytes(fds[i], $0.baseAddress! + sent[i], 1) }
                        if n == 1 { sent[i] += 1 } else if errno != EAGAIN && errno != EINTR { closedAt[i] = edgeMonotonicSeconds() }
                    }
                    usleep(100_000)
                }
                let result = Slow(
                    connected: fds.count,
                    closedAfter: fds.indices.map { i in closedAt[i].map { $0 - opened[i] } },
                    got408: data.map { $0.starts(with: Array("HTTP/1.1 408".utf8)) })
                for fd in fds { edgeCloseDescriptor(fd) }
                slow.with { $0 = result }
            }

            try await Task.sleep(for: .milliseconds(300))
            var slowest = 0.0
            var failures: [String] = []
            for i in 0..<50 {
                let t0 = edgeMonotonicSeconds()
                do {
                    let r = try RawHTTPConnection.fetch(port: port, "/content/sonnets/018.plist")
                    if r.status != 200 || r.body != object { failures.append("GET \(i): \(r.status)") }
                } catch {
                    failures.append("GET \(i): \(error)")
                }
                slowest = max(slowest, edgeMonotonicSeconds() - t0)
                try await Task.sleep(for: .milliseconds(40))
            }
            #expect(failures.isEmpty, "\(failures)")
            #expect(slowest < 1.0, "slowest normal GET took \(slowest) s")

            #expect(await driver.join(timeout: 15))
            let result = slow.value
            #expect(result.connected == slowCount)
            let unclosed = result.closedAfter.filter { $0 == nil }.count
            #expect(unclosed == 0, "\(unclosed) slow connections were never closed")
            let late = result.closedAfter.compactMap { $0 }.filter { $0 > 4.5 }
            #expect(late.isEmpty, "closed too late: \(late)")
            let early = result.closedAfter.compactMap { $0 }.filter { $0 < 1.5 }
            #expect(early.isEmpty, "closed before the 2 s timeout: \(early)")
            #expect(result.got408.allSatisfy { $0 }, "408 seen on \(result.got408.filter { $0 }.count) of \(slowCount)")
            // Every 408 is a response like any other: counted in folio_edge_requests_total.
            let metrics = try RawHTTPConnection.fetch(port: port, tier ? "/.folio/metrics" : "/metrics").text
            let counted = EdgeProcess.metric("folio_edge_requests_total{status=\"408\"}", in: metrics)
            #expect(counted == Double(slowCount), "folio_edge_requests_total{status=\"408\"} is \(String(describing: counted)) after \(slowCount) 408 responses")
            #expect(edge.isAlive)
        }

        @Test("--max-connections 5: a sixth connection is closed at once, the five keep working", .http1Only)
        func maxConnections() async throws {
            let edge = try EdgeProcess.start(root: ctx.fixture.root, args: ["--max-connections", "5"])
            defer { edge.stop() }
            var five: [RawHTTPConnection] = []
            defer { for c in five { c.close() } }
            for _ in 0..<5 {
                let c = try RawHTTPConnection(port: edge.port)
                #expect(try c.request("GET", "/healthz").text == healthy)
                five.append(c)
            }
            let sixth = try RawHTTPConnection(port: edge.port)
            let t0 = edgeMonotonicSeconds()
            #expect(sixth.waitForClose(timeout: 3), "the sixth connection should be closed by the server")
            #expect(edgeMonotonicSeconds() - t0 < 1.0)
            #expect(sixth.received.isEmpty)
            sixth.close()

            for c in five {
                #expect(try c.request("GET", "/content/sonnets/018.plist").body == object)
            }
            let metrics = try five[0].request("GET", "/metrics").text
            #expect((EdgeProcess.metric("folio_edge_connections_rejected_total", in: metrics) ?? 0) >= 1)

            // Closing one frees its slot.
            five.removeLast().close()
            var servedAgain = false
            let deadline = edgeMonotonicSeconds() + 3
            while !servedAgain, edgeMonotonicSeconds() < deadline {
                if let r = try? RawHTTPConnection.fetch(port: edge.port, "/healthz"), r.status == 200 {
                    servedAgain = true
                } else {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(servedAgain, "a freed slot should accept a new connection")
            #expect(edge.isAlive)
        }
    }
}
