import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// `--access-log PATH` and `--access-log-format text|combined|json`: the real edge's log files,
/// read by real readers (GoAccess for `combined`, Python's json for `json`), and reopened on
/// SIGUSR1 after logrotate moved them.
extension EdgeIntegration {
    @Suite("folio-edge access log")
    struct EdgeAccessLogTests {
        static let userAgent = "Folio-Test/1.0 (\"quoted\" \\ back)"
        static let referer = "https://example.org/from?a=1&b=\"2\""

        /// The edge serving `fixture` with the log in `format` to `dir/access.log`; TLS adds a
        /// certificate (HTTP/2 by ALPN).
        static func start(_ fixture: EdgeFixture, _ format: String, tls: Bool = false, extra: [String] = []) throws -> EdgeProcess {
            let certificate = tls ? ["--tls-cert", TestStack.pki.cert, "--tls-key", TestStack.pki.key] : []
            return try EdgeProcess.start(
                root: fixture.root, args: ["--access-log", fixture.dir + "/access.log", "--access-log-format", format] + certificate + extra)
        }

        /// The requests every format test makes: HTTP/1.1 GETs with Referer and User-Agent (200,
        /// 304, 404), a HEAD, and a request the edge cannot read (400); over TLS, the same GET
        /// over HTTP/2. Returns how many lines they log.
        static func requests(_ edge: EdgeProcess, http2: Bool = false) throws -> Int {
            let url = "\(edge.scheme)://127.0.0.1:\(edge.port)"
            let tls = edge.scheme == "https" ? ["--cacert", TestStack.pki.pki.ca] : []
            let headers = ["User-Agent: \(userAgent)", "Referer: \(referer)"]
            let ok = try EdgeCurl.request(url + "/manifest.plist", options: tls + ["--http1.1"], headers: headers).response
            #expect(ok.status == 200)
            let etag = try #require(ok.header("ETag"))
            #expect(try EdgeCurl.request(url + "/manifest.plist", options: tls + ["--http1.1"], headers: ["If-None-Match: \(etag)"]).response.status == 304)
            #expect(try EdgeCurl.request(url + "/no/such%20thing?q=x", options: tls + ["--http1.1"], headers: headers).response.status == 404)
            #expect(try EdgeCurl.request(url + "/healthz", options: tls + ["--http1.1", "-I"], headers: [], readBody: false).response.status == 200)
            var count = 4
            // Over TLS an HTTP/2 request; in cleartext one the edge cannot read (raw bytes).
            if http2 {
                let h2 = try EdgeCurl.request(url + "/manifest.plist", options: tls + ["--http2"], headers: headers).response
                #expect(h2.status == 200)
                count += 1
            } else if edge.scheme == "http" {
                let c = try RawHTTPConnection(port: edge.port)
                defer { c.close() }
                try c.send("NOT A REQUEST\r\n\r\n")
                #expect(try c.readResponse().status == 400)
                count += 1
            }
            return count
        }

        /// The log's lines once the edge has stopped (its buffer is written at exit).
        static func lines(after edge: EdgeProcess, _ path: String) throws -> [String] {
            #expect(edge.terminate() == 0)
            return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        }

        @Test("combined: nginx's format, every line valid to GoAccess, over HTTP/1.1 and HTTP/2",
              .enabled(if: InstallTests.tool("goaccess") != nil, "goaccess is missing (Debian: goaccess)"))
        func combined() throws {
            let fixture = try EdgeFixture.make("log-combined")
            defer { fixture.cleanup() }
            let plain = try Self.start(fixture, "combined")
            defer { plain.stop() }
            var count = try Self.requests(plain)
            var lines = try Self.lines(after: plain, fixture.dir + "/access.log")
            let tls = try Self.start(fixture, "combined", tls: true)
            defer { tls.stop() }
            count += try Self.requests(tls, http2: true)
            lines = try Self.lines(after: tls, fixture.dir + "/access.log")
            #expect(lines.count == count, "\(lines)")
            // nginx's combined, its escapes, and the protocols.
            let pattern = #/^127\.0\.0\.1 - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "[^"]*" \d{3} \d+ "[^"]*" "[^"]*"$/#
            for line in lines { #expect(line.wholeMatch(of: pattern) != nil, "\(line)") }
            #expect(lines[0].contains("\"GET /manifest.plist HTTP/1.1\" 200 ") && lines[0].hasSuffix(
                "\"https://example.org/from?a=1&b=\\x222\\x22\" \"Folio-Test/1.0 (\\x22quoted\\x22 \\x5C back)\""), "\(lines[0])")
            #expect(lines[1].contains("\" 304 0 \"-\" \""), "\(lines[1])")
            #expect(lines[3].contains("\"HEAD /healthz HTTP/1.1\" 200 0 "), "\(lines[3])")
            #expect(lines[4].contains("\"-\" 400 0 \"-\" \"-\""), "\(lines[4])")
            #expect(lines.contains { $0.contains("\"GET /manifest.plist HTTP/2.0\" 200 ") }, "\(lines)")

            let report = fixture.dir + "/report.json"
            let g = try Harness.run(InstallTests.tool("goaccess")!, [fixture.dir + "/access.log", "--log-format=COMBINED", "--no-global-config", "-o", report])
            try #require(g.status == 0, "goaccess: \(g.stderr)")
            let general = try #require(
                (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])?["general"] as? [String: Any])
            #expect(general["failed_requests"] as? Int == 0, "\(general)")
            #expect(general["valid_requests"] as? Int == count, "\(general)")
        }

        @Test("json: one object per line with fixed fields, read by Python's json")
        func json() throws {
            let fixture = try EdgeFixture.make("log-json")
            defer { fixture.cleanup() }
            let edge = try Self.start(fixture, "json", tls: true)
            defer { edge.stop() }
            let count = try Self.requests(edge, http2: true)
            let lines = try Self.lines(after: edge, fixture.dir + "/access.log")
            #expect(lines.count == count)
            let check = try Harness.run(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    """
                    import json, sys
                    fields = ["time", "remote_addr", "method", "path", "protocol", "status", "bytes", "duration_us", "referer", "user_agent", "request_id"]
                    for line in open(sys.argv[1]):
                        o = json.loads(line)
                        assert list(o) == fields, list(o)
                        assert isinstance(o["status"], int) and isinstance(o["bytes"], int) and isinstance(o["duration_us"], int), o
                        print(o["protocol"], o["method"], o["path"], o["status"], o["remote_addr"], o["user_agent"], o["referer"], sep="|")
                    """, fixture.dir + "/access.log",
                ])
            try #require(check.status == 0, "\(check.stderr)")
            let rows = check.stdout.split(separator: "\n").map(String.init)
            #expect(rows.first == "HTTP/1.1|GET|/manifest.plist|200|127.0.0.1|\(Self.userAgent)|\(Self.referer)", "\(rows)")
            #expect(rows.contains("HTTP/1.1|GET|/no/such%20thing?q=x|404|127.0.0.1|\(Self.userAgent)|\(Self.referer)"), "\(rows)")
            #expect(rows.contains("HTTP/2.0|GET|/manifest.plist|200|127.0.0.1|\(Self.userAgent)|\(Self.referer)"), "\(rows)")
        }

        @Test("SIGUSR1 after the file was moved: the edge writes to a new file at the path")
        func reopen() async throws {
            let fixture = try EdgeFixture.make("log-reopen")
            defer { fixture.cleanup() }
            let log = fixture.dir + "/access.log"
            let edge = try Self.start(fixture, "json")
            defer { edge.stop() }
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").status == 200)
            #expect(await Self.waitForFile(log, containing: "/manifest.plist"), "the line was not written within 20 s")
            try FileManager.default.moveItem(atPath: log, toPath: log + ".1")
            edge.signal(SIGUSR1)
            #expect(await edge.waitForLog("reopened the access log", timeout: 20), "\(edge.log)")
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/healthz").status == 200)
            #expect(await Self.waitForFile(log, containing: "/healthz"), "nothing written to the new file")
            #expect(edge.isAlive)
            #expect(edge.terminate() == 0)
            let old = try String(contentsOfFile: log + ".1", encoding: .utf8)
            let new = try String(contentsOfFile: log, encoding: .utf8)
            #expect(old.contains("/manifest.plist") && !old.contains("/healthz"), "\(old)")
            #expect(new.contains("/healthz") && !new.contains("/manifest.plist"), "\(new)")
        }

        @Test("text to a file, and a cache tier's lines in json over HTTP/1.1 and HTTP/2")
        func textAndTier() throws {
            let fixture = try EdgeFixture.make("log-tier")
            defer { fixture.cleanup() }
            let origin = try Self.start(fixture, "text")
            defer { origin.stop() }
            let tier = try EdgeProcess.start(
                root: fixture.root,
                args: [
                    "--origin", origin.baseURL, "--access-log", fixture.dir + "/tier.log", "--access-log-format", "json",
                    "--tls-cert", TestStack.pki.cert, "--tls-key", TestStack.pki.key,
                ])
            defer { tier.stop() }
            var bodies: [Int] = []
            for version in ["--http1.1", "--http2"] {
                let r = try EdgeCurl.request(
                    "https://127.0.0.1:\(tier.port)/manifest.plist", options: ["--cacert", TestStack.pki.pki.ca, version],
                    headers: ["User-Agent: \(Self.userAgent)"]
                ).response
                #expect(r.status == 200)
                bodies.append(r.body.count)
            }
            let lines = try Self.lines(after: tier, fixture.dir + "/tier.log")
            try #require(lines.count == 2, "\(lines)")
            for (line, (version, bytes)) in zip(lines, zip(["HTTP/1.1", "HTTP/2.0"], bodies)) {
                #expect(line.contains("\"method\":\"GET\",\"path\":\"/manifest.plist\",\"protocol\":\"\(version)\",\"status\":200,\"bytes\":\(bytes),"), "\(line)")
                #expect(line.contains("\"user_agent\":\"Folio-Test/1.0 (\\\"quoted\\\" \\\\ back)\""), "\(line)")
            }
            let text = try Self.lines(after: origin, fixture.dir + "/access.log")
            #expect(text.contains { $0.contains("folio.edge.access") && $0.contains("path=/manifest.plist") }, "\(text)")
        }

        @Test(arguments: [
            (["--access-log-format", "xml"], "--access-log-format is text, combined or json, got 'xml'"),
            (["--no-access-log", "--access-log", "/tmp/a.log"], "--access-log configures the access log that --no-access-log turns off"),
            (["--no-access-log", "--access-log-format", "json"], "--access-log-format configures the access log that --no-access-log turns off"),
            (["--access-log", "/nonexistent-folio-dir/access.log"], "the directory /nonexistent-folio-dir does not exist"),
        ])
        func badOptions(args: [String], message: String) throws {
            let r = try Harness.run(Harness.binary("folio-edge"), ["--port", "0", "--root", "/nonexistent"] + args)
            #expect(r.status != 0 && r.stderr.contains(message), "\(args): \(r.stderr)")
        }

        static func waitForFile(_ path: String, containing text: String, timeout: Double = 20) async -> Bool {
            // Looked at again after every wait, the deadline's last one included: a test starved
            // of threads past the deadline still sees what was written meanwhile.
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if let s = try? String(contentsOfFile: path, encoding: .utf8), s.contains(text) { return true }
                if Date() >= deadline { return false }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
