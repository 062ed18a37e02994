import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// The edge over HTTPS (`--tls-cert`, `--tls-key`, `--http-port`), checked with curl, openssl
/// and Python's ssl module: versions, ciphers, SNI, reloads without dropped connections, and
/// certificates refused at start with one line that says why.
@Suite("edge over HTTPS", .serialized)
struct EdgeTLSTests {
    static func withTLSEdge(
        _ label: String, extra: (TestPKI) throws -> [String] = { _ in [] }, env: [String: String] = [:],
        _ body: (EdgeProcess, TestPKI, EdgeFixture) throws -> Void
    ) throws {
        let fixture = try EdgeFixture.make(label)
        defer { fixture.cleanup() }
        let pki = try TestPKI(fixture.dir)
        let (cert, key) = try pki.leaf("localhost")
        let edge = try EdgeProcess.start(root: fixture.root, args: ["--tls-cert", cert, "--tls-key", key] + extra(pki), env: env)
        defer { edge.stop() }
        try body(edge, pki, fixture)
    }

    static func curl(_ args: [String]) throws -> Harness.Output {
        try Harness.run("/usr/bin/curl", ["-s", "--max-time", "10"] + args)
    }

    @Test("curl fetches the manifest and a 304 over https, byte for byte")
    func servesHTTPS() throws {
        try Self.withTLSEdge("tls-serve") { edge, pki, fixture in
            #expect(edge.scheme == "https")
            let out = fixture.dir + "/m.plist"
            let r = try Self.curl([
                "--http1.1", "--cacert", pki.ca, "--resolve", "localhost:\(edge.port):127.0.0.1", "-o", out, "-D", "-", "-w", "%{ssl_verify_result}",
                "https://localhost:\(edge.port)/manifest.plist",
            ])
            #expect(r.stdout.hasPrefix("HTTP/1.1 200"), "\(r.stdout) \(r.stderr)")
            #expect(r.stdout.hasSuffix("0"), "the certificate did not verify: \(r.stdout)")
            #expect(try FileIO.read(out) == fixture.bytes("manifest.plist"))
            let etag = r.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) }
            let again = try Self.curl([
                "--cacert", pki.ca, "-o", "/dev/null", "-w", "%{http_code}", "-H", "If-None-Match: \(etag ?? "")",
                "https://127.0.0.1:\(edge.port)/manifest.plist",
            ])
            #expect(again.stdout == "304")
        }
    }

    @Test("TLS 1.2 and 1.3 only, forward-secret suites only")
    func versionsAndCiphers() throws {
        try Self.withTLSEdge("tls-versions") { edge, _, _ in
            for old in ["-tls1", "-tls1_1"] {
                let r = try TestPKI.handshake(port: edge.port, [old])
                #expect(r.contains("alert protocol version") || r.contains("no protocols available"), "\(old) was accepted: \(r)")
            }
            let v12 = try TestPKI.handshake(port: edge.port, ["-tls1_2"])
            #expect(v12.contains("Protocol  : TLSv1.2") && v12.contains("Cipher    : ECDHE-"), "\(v12)")
            let v13 = try TestPKI.handshake(port: edge.port, ["-tls1_3"])
            #expect(v13.contains("New, TLSv1.3"), "\(v13)")
            for weak in ["AES128-SHA", "AES256-GCM-SHA384", "DHE-RSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA"] {
                let r = try TestPKI.handshake(port: edge.port, ["-tls1_2", "-cipher", weak])
                #expect(r.contains("Cipher is (NONE)"), "\(weak) was negotiated: \(r)")
            }
        }
    }

    @Test("the certificate is chosen by the name the client asks for")
    func sni() throws {
        try Self.withTLSEdge("tls-sni", extra: { pki in
            let other = try pki.leaf("other.test")
            return ["--tls-cert", other.cert, "--tls-key", other.key]
        }) { edge, _, _ in
            let other = try TestPKI.handshake(port: edge.port, ["-servername", "other.test"])
            let local = try TestPKI.handshake(port: edge.port, ["-servername", "localhost"])
            let unknown = try TestPKI.handshake(port: edge.port, ["-servername", "unknown.test"])
            #expect(other.contains("subject=CN = other.test"), "\(other)")
            #expect(local.contains("subject=CN = localhost"), "\(local)")
            #expect(unknown.contains("subject=CN = localhost"), "\(unknown)")
        }
    }

    /// Opens a connection, replaces the certificate files (and sends SIGHUP with `signal`),
    /// then uses the old connection again and opens a new one.
    static let keepAlive = """
        import os, socket, ssl, sys, time
        port, ca, cert, key, newcert, newkey, pid = sys.argv[1:8]
        ctx = ssl.create_default_context(cafile=ca)
        def get(s):
            s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                chunk = s.recv(4096)
                if not chunk: return "closed"
                data += chunk
            head, rest = data.split(b"\\r\\n\\r\\n", 1)
            n = int([l.split(b":")[1] for l in head.split(b"\\r\\n") if l.lower().startswith(b"content-length")][0])
            while len(rest) < n: rest += s.recv(4096)
            return head.split(b"\\r\\n")[0].decode()
        def connect(): return ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(port))), server_hostname="localhost")
        old = connect(); first = old.getpeercert(True)
        print("before:", get(old))
        os.replace(newcert, cert); os.replace(newkey, key)
        if pid != "-": os.kill(int(pid), 1)
        time.sleep(1.5)
        print("old after:", get(old), old.getpeercert(True) == first)
        new = connect()
        print("new:", get(new), new.getpeercert(True) != first)
        """

    @Test("certificates reload on a file change and on SIGHUP; open connections go on; a bad file keeps the old one", arguments: [false, true])
    func reload(signal: Bool) throws {
        try Self.withTLSEdge("tls-reload") { edge, pki, fixture in
            let script = fixture.dir + "/keepalive.py"
            try Data(Self.keepAlive.utf8).write(to: URL(fileURLWithPath: script))
            let fresh = try pki.leaf("localhost", file: "renewed")
            let r = try Harness.run(
                "/usr/bin/python3",
                [script, String(edge.port), pki.ca, pki.dir + "/localhost.pem", pki.dir + "/localhost.key", fresh.cert, fresh.key,
                 signal ? String(edge.pid) : "-"])
            #expect(r.stdout == "before: HTTP/1.1 200 OK\nold after: HTTP/1.1 200 OK True\nnew: HTTP/1.1 200 OK True\n", "\(r.stdout) \(r.stderr)")
            #expect(edge.log.contains("reloaded \(pki.dir)/localhost.pem"), "\(edge.log)")

            // A certificate file that does not parse: the one serving stays, and the log says why.
            let serving = try TestPKI.handshake(port: edge.port, ["-servername", "localhost"])
            try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: pki.dir + "/localhost.pem"))
            if signal { edge.signal(SIGHUP) }
            let deadline = Date().addingTimeInterval(5)
            while !edge.log.contains("kept the previous certificate"), Date() < deadline { usleep(50_000) }
            #expect(edge.log.contains("kept the previous certificate for \(pki.dir)/localhost.pem"), "\(edge.log)")
            let still = try TestPKI.handshake(port: edge.port, ["-servername", "localhost"])
            #expect(TestPKI.servedCertificate(still) != nil && TestPKI.servedCertificate(still) == TestPKI.servedCertificate(serving))
            #expect(edge.isAlive)
        }
    }

    @Test("a TLS handshake not finished within --request-timeout ends that connection; others are served", .http1Only)
    func handshakeDeadline() throws {
        let hello = try TLSClientHelloTests.hello("localhost", ["h2"])
        func check(_ edge: EdgeProcess, _ pki: TestPKI) throws {
            let silent = try RawHTTPConnection(port: edge.port)
            let half = try RawHTTPConnection(port: edge.port)
            try half.send(Array(hello.prefix(hello.count / 2)))
            let started = Date()
            // Meanwhile an ordinary client is served.
            let ok = try Self.curl(["--cacert", pki.ca, "-o", "/dev/null", "-w", "%{http_code}", "https://localhost:\(edge.port)/manifest.plist"])
            #expect(ok.stdout == "200")
            #expect(silent.waitForClose(timeout: 5), "a connection that sent nothing was kept open")
            #expect(half.waitForClose(timeout: 5), "a connection with half a ClientHello was kept open")
            #expect(Date().timeIntervalSince(started) >= 0.5, "closed before the timeout")
            #expect(edge.isAlive)
        }
        try Self.withTLSEdge("tls-deadline", extra: { _ in ["--request-timeout", "1"] }) { edge, pki, _ in try check(edge, pki) }
        // With --acme the ClientHello is read before TLS starts: the same deadline holds there.
        let fixture = try EdgeFixture.make("tls-deadline-acme")
        defer { fixture.cleanup() }
        let pki = try TestPKI(fixture.dir)
        let (cert, key) = try pki.leaf("localhost")
        let edge = try EdgeProcess.start(
            root: fixture.root,
            args: [
                "--tls-cert", cert, "--tls-key", key, "--request-timeout", "1", "--acme", "edge.folio.test",
                "--acme-directory", "https://127.0.0.1:1/dir", "--acme-state", fixture.dir + "/acme",
            ])
        defer { edge.stop() }
        try check(edge, pki)
    }

    @Test("a certificate it cannot serve with stops the start with one line that says why")
    func refusedAtStart() throws {
        let fixture = try EdgeFixture.make("tls-bad")
        defer { fixture.cleanup() }
        let pki = try TestPKI(fixture.dir)
        let good = try pki.leaf("localhost")
        let other = try pki.leaf("other.test")
        let expired = try pki.leaf("localhost", file: "expired", days: -1)
        let readable = try pki.leaf("localhost", file: "readable")
        chmod(readable.key, 0o644)
        let certAsKey = fixture.dir + "/cert-as-key.pem"
        try FileIO.createExclusive(try FileIO.read(good.cert), at: certAsKey, mode: 0o600)
        let cases: [([String], String)] = [
            (["--tls-cert", good.cert, "--tls-key", other.key], "does not match the certificate"),
            (["--tls-cert", expired.cert, "--tls-key", expired.key], "expired on"),
            (["--tls-cert", readable.cert, "--tls-key", readable.key], "is readable by other users (mode 644); run chmod 600"),
            (["--tls-cert", good.key, "--tls-key", good.key], "is not a PEM certificate"),
            (["--tls-cert", good.cert, "--tls-key", certAsKey], "is not a PEM private key"),
            (["--tls-cert", good.cert, "--tls-key", fixture.dir + "/missing.key"], "cannot read the key file"),
            (["--tls-cert", good.cert], "give one --tls-key for each --tls-cert"),
            (["--http-port", "0"], "--http-port redirects to https"),
            (["--hsts-max-age", "60"], "--hsts-max-age is sent over https only"),
        ]
        for (args, message) in cases {
            let r = try Harness.run(Harness.binary("folio-edge"), ["--root", fixture.root, "--port", "0"] + args)
            #expect(r.status != 0 && r.stderr.contains(message), "\(args): exit \(r.status), \(r.stderr)")
            #expect(!r.stdout.contains("listening"), "\(args) started listening")
        }
    }

    @Test("--http-port answers every request with a 308 to the same URL on https; HSTS only over https")
    func redirect() throws {
        try Self.withTLSEdge("tls-redirect", extra: { _ in ["--http-port", "0", "--hsts-max-age", "31536000"] }) { edge, pki, _ in
            for path in ["/manifest.plist", "/healthz", "/nothing-here"] {
                let https = try Self.curl(["--cacert", pki.ca, "-D", "-", "-o", "/dev/null", "https://127.0.0.1:\(edge.port)\(path)"])
                #expect(https.stdout.lowercased().contains("\r\nstrict-transport-security: max-age=31536000\r\n"), "\(path): \(https.stdout)")
            }
            let plain = try #require(edge.httpPort)
            let r = try Self.curl(["-D", "-", "-o", "/dev/null", "http://127.0.0.1:\(plain)/sonnets/index.plist?x=1"])
            #expect(r.stdout.hasPrefix("HTTP/1.1 308"), "\(r.stdout)")
            #expect(r.stdout.contains("Location: https://127.0.0.1:\(edge.port)/sonnets/index.plist?x=1\r\n"), "\(r.stdout)")
            #expect(!r.stdout.contains("Strict-Transport-Security"), "HSTS over plain http: \(r.stdout)")
            // curl follows it to the https edge, which answers.
            let followed = try Self.curl(["-L", "--cacert", pki.ca, "-o", "/dev/null", "-w", "%{http_code} %{num_redirects}", "http://127.0.0.1:\(plain)/healthz"])
            #expect(followed.stdout == "200 1", "\(followed.stdout)")
            // No usable Host: a 400, not a redirect to somewhere else.
            let c = try RawHTTPConnection(port: plain)
            defer { c.close() }
            try c.send(RawHTTPConnection.head("GET", "/healthz", headers: [("Host", "evil/host")], host: false))
            let raw = try c.readResponse(method: "GET")
            #expect(raw.status == 400, "\(raw.status)")
        }
    }

    @Test("testssl.sh finds no old protocol, no weak cipher, and forward secrecy throughout")
    func testssl() throws {
        try Self.withTLSEdge("tls-testssl") { edge, pki, fixture in
            let json = fixture.dir + "/testssl.json"
            let r = try Harness.run(
                "/usr/bin/testssl",
                ["--quiet", "--color", "0", "--warnings", "off", "--ip", "one", "--add-ca", pki.ca, "-p", "-s", "-f", "--jsonfile", json,
                 "127.0.0.1:\(edge.port)"])
            let data = try Data(contentsOf: URL(fileURLWithPath: json))
            let findings = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]], "\(r.stdout)")
            var byID: [String: (severity: String, finding: String)] = [:]
            for f in findings {
                if let id = f["id"] as? String { byID[id] = ((f["severity"] as? String) ?? "", (f["finding"] as? String) ?? "") }
            }
            for id in ["SSLv2", "SSLv3", "TLS1", "TLS1_1", "cipherlist_NULL", "cipherlist_aNULL", "cipherlist_EXPORT", "cipherlist_LOW",
                       "cipherlist_3DES_IDEA", "cipherlist_AVERAGE"] {
                #expect(byID[id]?.finding == "not offered", "\(id): \(String(describing: byID[id]))")
            }
            #expect(byID["TLS1_2"]?.finding == "offered" && byID["TLS1_3"]?.finding.hasPrefix("offered") == true)
            #expect(byID["PFS"]?.finding == "offered" && byID["cipherlist_STRONG"]?.finding == "offered")
            let bad = byID.filter { ["LOW", "MEDIUM", "HIGH", "CRITICAL"].contains($0.value.severity) }
            #expect(bad.isEmpty, "\(bad)")
        }
    }

    @Test("folio syncs and reads over https, trusting a private CA through FOLIO_CA_FILE; without it, or with a bad file, it says why")
    func folioOverHTTPS() throws {
        try Self.withTLSEdge("tls-folio") { edge, pki, fixture in
            let cache = fixture.dir + "/cache"
            let url = "https://127.0.0.1:\(edge.port)"
            let untrusted = try ClientTest.folio(["sync"], cache: cache, edge: url, env: ["FOLIO_CA_FILE": ""])
            #expect(untrusted.status != 0, "synced without trusting the CA: \(untrusted.stdout)")
            let said = untrusted.stdout + untrusted.stderr
            #expect(said.contains("the TLS handshake failed: the edge's certificate is not trusted here") && !said.contains("BoringSSL"), "\(said)")
            let sync = try ClientTest.folio(["sync", "--json"], cache: cache, edge: url, env: ["FOLIO_CA_FILE": pki.ca])
            #expect(sync.status == 0 && sync.stdout.contains("\"result\": \"updated\""), "\(sync.stdout) \(sync.stderr)")
            let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache, edge: url)
            #expect(read.stdout.contains("Shall I compare thee to a summer’s day?"), "\(read.stdout) \(read.stderr)")
            let again = try ClientTest.folio(["sync", "--json"], cache: cache, edge: url, env: ["FOLIO_CA_FILE": pki.ca])
            #expect(again.status == 0 && again.stdout.contains("\"objectsFetched\": 0"), "\(again.stdout)")
            for (file, message) in [(fixture.dir + "/none.pem", "the file cannot be read"), (pki.dir + "/localhost.key", "holds no PEM certificate")] {
                let bad = try ClientTest.folio(["status"], cache: cache, edge: url, env: ["FOLIO_CA_FILE": file])
                #expect(bad.status != 0 && bad.stderr.contains("FOLIO_CA_FILE=\(file)") && bad.stderr.contains(message), "\(bad.stderr)")
            }
        }
    }

    @Test("the cache tier serves https in front of a plain origin")
    func cacheTier() throws {
        try TierHTTP2Tests.withTier("tls-tier", layer: "libnghttp2", extra: ["--hsts-max-age", "600"]) { tier, pki, fixture in
            let out = fixture.dir + "/via-tier.plist"
            for _ in 0..<2 {
                let r = try Self.curl(["--cacert", pki.ca, "-o", out, "-D", "-", "-w", "%{http_code}", "https://127.0.0.1:\(tier.port)/manifest.plist"])
                #expect(r.stdout.hasSuffix("200") && r.stdout.lowercased().contains("\r\nstrict-transport-security: max-age=600\r\n"), "\(r.stdout) \(r.stderr)")
                #expect(try FileIO.read(out) == fixture.bytes("manifest.plist"))
            }
        }
    }
}
