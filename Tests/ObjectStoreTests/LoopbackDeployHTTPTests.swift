import FolioObjectStore
import FolioTestSupport
import Foundation
import Testing

/// A deploy's plain-http requests to loopback (``LoopbackDeployHTTP``), against Python's
/// `http.server`: kept-alive connections, and a cancelled request that does not spoil the next.
@Suite("Loopback deploy requests")
struct LoopbackDeployHTTPTests {
    /// Answers POST /slow after 30 s, and any other POST at once with its path and body length.
    static let server = #"""
        import http.server, time
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/slow": time.sleep(30)
                out = ("%s %d" % (self.path, len(body))).encode()
                self.send_response(200); self.send_header("Content-Length", str(len(out))); self.end_headers(); self.wfile.write(out)
            def log_message(self, *args): pass
        serve(Handler)
        """#

    @Test("requests answered in turn; a cancelled one ends at once, and the next request is answered")
    func cancelled() async throws {
        let server = try PythonServer.start(Self.server)
        defer { server.stop() }
        let http = try #require(LoopbackDeployHTTP(base: server.url))
        let first = try await http.send("POST", "/a", headers: [], body: Array(repeating: 1, count: 10), timeoutMs: 10_000)
        #expect(first.status == 200 && String(decoding: first.body, as: UTF8.self) == "/a 10")
        // The slow request's task notes when its send ended: in a full `make test` this task may
        // wait long for a thread of the cooperative pool after that, so the wait is not measured.
        let slow = Task { () -> (ended: ContinuousClock.Instant, threw: Bool) in
            do {
                _ = try await http.send("POST", "/slow", headers: [], body: [], timeoutMs: 60_000)
                return (.now, false)
            } catch {
                return (.now, true)
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let started = ContinuousClock.now
        slow.cancel()
        let outcome = await slow.value
        #expect(outcome.threw)
        #expect(outcome.ended - started < .seconds(10))
        let next = try await http.send("POST", "/b", headers: [("X-A", "1")], body: [], timeoutMs: 10_000)
        #expect(next.status == 200 && String(decoding: next.body, as: UTF8.self) == "/b 0")
    }
}
