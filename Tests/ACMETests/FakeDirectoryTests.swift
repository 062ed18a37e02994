@testable import FolioACME
import FolioTestSupport
import Foundation
import Testing

/// Directories that fail or lie, played by a Python server: each gives one clear error, and a
/// state directory from an earlier run stays exactly as it was (certificate included).
@Suite("ACME: failing and lying directories", .serialized, .timeLimit(.minutes(1)))
struct FakeDirectoryTests {
    /// The first path segment picks the behaviour: `500` and `garbage` answer everything so;
    /// under `wrongkey`, `badchain` and `badnonce` the directory is real enough to reach the
    /// order, whose certificate is for another key / not PEM, or whose newAccount first
    /// rejects the nonce (and then insists on the one its rejection carried).
    static let script = #"""
        import base64, json, sys
        from http.server import BaseHTTPRequestHandler
        OTHER_CHAIN = open(sys.argv[1]).read()
        state = {"nonce": 0, "fresh": None}

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass

            def route(self):
                parts = self.path.split("/")
                return parts[1], "/".join(parts[2:]), "http://" + self.headers["Host"] + "/" + parts[1]

            def send(self, status, body, ctype="application/json", headers=()):
                data = body.encode()
                state["nonce"] += 1
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Replay-Nonce", "nonce-%d" % state["nonce"])
                for name, value in headers: self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD": self.wfile.write(data)

            def problem(self, status, kind, detail):
                body = json.dumps({"type": "urn:ietf:params:acme:error:" + kind, "detail": detail, "status": status})
                self.send(status, body, "application/problem+json")

            def do_HEAD(self): self.do_GET()

            def do_GET(self):
                mode, rest, base = self.route()
                if mode == "500": return self.send(500, "<html>internal error</html>", "text/html")
                if mode == "garbage": return self.send(200, "<html>hello</html>", "text/html")
                if rest == "directory":
                    return self.send(200, json.dumps({"newNonce": base + "/nonce", "newAccount": base + "/account", "newOrder": base + "/order"}))
                if rest == "nonce": return self.send(200 if self.command == "HEAD" else 204, "")
                self.send(404, "not found", "text/plain")

            def do_POST(self):
                mode, rest, base = self.route()
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                protected = json.loads(base64.urlsafe_b64decode(body["protected"] + "=="))
                if rest == "account":
                    if mode == "badnonce" and state["fresh"] is None:
                        self.problem(400, "badNonce", "JWS has an invalid anti-replay nonce")
                        state["fresh"] = "nonce-%d" % state["nonce"]
                        return
                    if mode == "badnonce" and protected["nonce"] != state["fresh"]:
                        return self.problem(400, "malformed", "not the nonce of the badNonce response: " + protected["nonce"])
                    return self.send(201, json.dumps({"status": "valid"}), headers=[("Location", base + "/acct/1")])
                if rest == "order":
                    if mode == "badnonce": return self.problem(400, "rejectedIdentifier", "the account was registered after a badNonce retry")
                    order = {"status": "valid", "authorizations": [], "finalize": base + "/finalize", "certificate": base + "/cert"}
                    return self.send(201, json.dumps(order), headers=[("Location", base + "/order/1")])
                if rest == "cert":
                    if mode == "wrongkey": return self.send(200, OTHER_CHAIN, "application/pem-certificate-chain")
                    return self.send(200, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n", "application/pem-certificate-chain")
                self.send(404, "not found", "text/plain")

        serve(Handler)
        """#

    /// The server, and a state directory from an earlier run whose account belongs to `mode`'s
    /// directory.
    static func withFakeDirectory(_ body: (PythonServer, String) async throws -> Void) async throws {
        let dir = Harness.tempDir("acme-fake")
        defer { Harness.cleanup(dir) }
        try Fixtures.write(try Fixtures.selfSigned().chain, dir + "/other-chain.pem", mode: 0o644)
        let server = try PythonServer.start(script, args: [dir + "/other-chain.pem"])
        defer { server.stop() }
        try await body(server, dir + "/state")
    }

    /// obtain() against `mode`'s directory over an existing state: its error, with the state
    /// checked unchanged.
    static func failure(_ mode: String, _ server: PythonServer, state: String) async throws -> String {
        let url = server.url + "/\(mode)/directory"
        try Fixtures.existingState(at: state, directoryURL: url, accountURL: server.url + "/\(mode)/acct/1")
        let before = StateSnapshot(state)
        var config = ACMEConfiguration(directoryURL: url, domains: Fixtures.domains, stateDirectory: state)
        config.requestTimeout = 5
        let manager = try ACMEManager(configuration: config, logger: Fixtures.quietLogger)
        let stored = await manager.loadCertificate()
        let error = try await #require(throws: ACMEError.self) { try await manager.obtain() }
        #expect(StateSnapshot(state) == before, "the state changed: \(before) -> \(StateSnapshot(state))")
        #expect(await manager.loadCertificate()?.serialNumber == stored?.serialNumber)
        #expect(stored != nil)
        return error.description
    }

    @Test("a directory answering 500: the error names the step, status and URL; the state is untouched")
    func serverError() async throws {
        try await Self.withFakeDirectory { server, state in
            let text = try await Self.failure("500", server, state: state)
            #expect(text == "ACME directory: HTTP 500 from \(server.url)/500/directory (body: <html>internal error</html>)")
        }
    }

    @Test("a directory answering garbage: not an ACME directory; the state is untouched")
    func garbage() async throws {
        try await Self.withFakeDirectory { server, state in
            let text = try await Self.failure("garbage", server, state: state)
            #expect(text == "ACME directory: \(server.url)/garbage/directory did not answer with an ACME directory (body: <html>hello</html>)")
        }
    }

    @Test("a certificate for another key is refused before it is written")
    func certificateForAnotherKey() async throws {
        try await Self.withFakeDirectory { server, state in
            let text = try await Self.failure("wrongkey", server, state: state)
            #expect(text == "ACME certificate: the certificate is not for the certificate key")
        }
    }

    @Test("a chain that is not PEM is refused before it is written")
    func chainNotPEM() async throws {
        try await Self.withFakeDirectory { server, state in
            let text = try await Self.failure("badchain", server, state: state)
            #expect(text.hasPrefix("ACME certificate: the chain is not PEM certificates"), "\(text)")
        }
    }

    @Test("badNonce is retried with the nonce that came with the rejection")
    func badNonceRetry() async throws {
        try await Self.withFakeDirectory { server, state in
            var config = ACMEConfiguration(directoryURL: server.url + "/badnonce/directory", domains: Fixtures.domains, stateDirectory: state)
            config.requestTimeout = 5
            let manager = try ACMEManager(configuration: config, logger: Fixtures.quietLogger)
            let error = try await #require(throws: ACMEError.self) { try await manager.obtain() }
            #expect(error.description == "ACME newOrder: rejectedIdentifier: the account was registered after a badNonce retry (HTTP 400)")
            // The registration succeeded, so it was recorded; no certificate was.
            #expect(try FileManager.default.contentsOfDirectory(atPath: state).sorted() == ["account.json", "account.key"])
        }
    }

    @Test("run() logs each failure and backs off exponentially within the bounds")
    func runBacksOff() async throws {
        // On a thread of its own, as PebbleTests.runRenews.
        try await Harness.onOwnThread { executor in try await runBacksOffBody(executor) }
    }

    func runBacksOffBody(_ executor: ThreadsExecutor) async throws {
        try await Self.withFakeDirectory { server, state in
            var config = ACMEConfiguration(directoryURL: server.url + "/500/directory", domains: Fixtures.domains, stateDirectory: state)
            config.backoff = ACMEBackoff(minimum: 60, maximum: 300)
            let clock = TestClock(instant: true)
            let sink = LogSink()
            let manager = try ACMEManager(configuration: config, logger: sink.logger, clock: clock, jitter: { 0 })
            let task = Task(executorPreference: executor) { try await manager.run { _ in Issue.record("no certificate expected") } }
            let failed = await Fixtures.eventually(timeout: 20) { sink.messages.filter { $0.hasPrefix("error:") }.count >= 5 }
            task.cancel()
            try await task.value
            #expect(failed)
            let waits = clock.requestedWaits.prefix(5).map { $0.rounded() }
            #expect(waits == [60, 120, 240, 300, 300])
            let first = try #require(sink.messages.first { $0.hasPrefix("error:") })
            #expect(first == "error: ACME directory: HTTP 500 from \(server.url)/500/directory (body: <html>internal error</html>) (failure 1; retrying in 60 s)")
        }
    }

    @Test("a trust root file that cannot be read is a configuration error at once")
    func unreadableTrustRoots() {
        let config = ACMEConfiguration(domains: ["a.test"], extraTrustRootsPath: "/nonexistent/roots.pem", stateDirectory: "/unused")
        #expect {
            _ = try ACMEManager(configuration: config)
        } throws: { error in
            "\(error)" == "ACME configuration: trust roots /nonexistent/roots.pem: the file cannot be read"
        }
    }
}
