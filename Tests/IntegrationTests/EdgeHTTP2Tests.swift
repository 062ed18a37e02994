import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// HTTP/2 over TLS (ALPN), in both modes, checked with real clients: curl, nghttp2's h2load,
/// and abusive peers built from hyper-h2's frame and HPACK libraries (`h2_abuse.py`).
@Suite("edge over HTTP/2", .serialized)
struct EdgeHTTP2Tests {
    static let abuse = Harness.repoRoot + "/Tests/IntegrationTests/h2_abuse.py"

    static func curl(_ pki: TestPKI, _ args: [String]) throws -> Harness.Output {
        try Harness.run("/usr/bin/curl", ["-s", "--max-time", "10", "--cacert", pki.ca] + args)
    }

    /// GET over HTTP/2 with curl: the protocol curl used, the status, the head and the body.
    static func get(_ pki: TestPKI, _ url: String, _ headers: [String] = [], head: Bool = false) throws -> (version: String, response: EdgeResponse) {
        let options = ["--cacert", pki.ca, "--http2", "-w", "%{http_version}"] + (head ? ["-I"] : [])
        let (response, version) = try EdgeCurl.request(url, options: options, headers: headers, readBody: !head)
        return (version, response)
    }


    /// The same answers as HTTP/1.1 gives: bodies byte for byte, the gzip variant, 304, HEAD, a range, 404, 405.
    static func checkSemantics(_ pki: TestPKI, _ base: String, _ fixture: EdgeFixture) throws {
        let manifest = try get(pki, base + "/manifest.plist")
        #expect(manifest.version == "2" && manifest.response.status == 200, "\(manifest)")
        let manifestBytes = try fixture.bytes("manifest.plist")
        #expect(manifest.response.body == manifestBytes)
        let entry = try #require(try fixture.manifest().entries.first)
        let gzip = try get(pki, base + "/" + entry.objectPath, ["Accept-Encoding: gzip"])
        let gzipBytes = try fixture.bytes(entry.objectPath + ".gz")
        #expect(gzip.response.header("content-encoding") == "gzip" && gzip.response.body == gzipBytes)
        let etag = try #require(manifest.response.header("etag"))
        #expect(try get(pki, base + "/manifest.plist", ["If-None-Match: \(etag)"]).response.status == 304)
        let head = try get(pki, base + "/manifest.plist", head: true).response
        #expect(head.status == 200 && head.header("content-length") == String(manifest.response.body.count), "\(head.headers)")
        let range = try get(pki, base + "/manifest.plist", ["Range: bytes=0-9"]).response
        #expect(range.status == 206 && range.body == Array(manifest.response.body.prefix(10)), "\(range.status)")
        #expect(try get(pki, base + "/no-such-thing").response.status == 404)
        let post = try curl(pki, ["--http2", "-X", "POST", "-d", "x", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", base + "/manifest.plist"])
        #expect(post.stdout == "2 405", "\(post.stdout)")
    }

    @Test("both modes answer over HTTP/2 as over HTTP/1.1; the tier reaches an https origin")
    func semantics() throws {
        try EdgeTLSTests.withTLSEdge("h2-origin") { edge, pki, fixture in
            try Self.checkSemantics(pki, "https://localhost:\(edge.port)", fixture)
            let (cert, key) = try pki.leaf("localhost", file: "tier")
            let tier = try EdgeProcess.start(
                root: fixture.root,
                args: ["--origin", "https://localhost:\(edge.port)", "--origin-ca", pki.ca, "--tls-cert", cert, "--tls-key", key])
            defer { tier.stop() }
            try Self.checkSemantics(pki, "https://localhost:\(tier.port)", fixture)
            let again = try Self.get(pki, "https://localhost:\(tier.port)/manifest.plist").response
            #expect(again.header("cache-status") == "folio-edge; hit", "\(again.headers)")
        }
    }

    @Test("over the memory budget, bodies come from disk over HTTP/2: every object, ranges, many streams at once")
    func fromDisk() throws {
        try EdgeTLSTests.withTLSEdge("h2-disk", extra: { _ in ["--memory-budget", "0"] }) { edge, pki, fixture in
            let base = "https://localhost:\(edge.port)"
            let manifest = try fixture.manifest()
            let entries = Array(manifest.entries.prefix(40))
            // One curl, one connection, 40 streams in parallel: each body is its object.
            let dir = Harness.tempDir("h2-disk")
            defer { Harness.cleanup(dir) }
            var args = ["--http2", "--parallel", "--parallel-max", "40"]
            for (i, e) in entries.enumerated() { args += ["-o", "\(dir)/\(i)", base + "/" + e.objectPath] }
            let r = try Self.curl(pki, args)
            #expect(r.status == 0, "\(r.stderr)")
            for (i, e) in entries.enumerated() {
                #expect(e.matches(try FileIO.read("\(dir)/\(i)")), "\(e.path)")
            }
            let entry = try #require(entries.first { $0.size > 20 })
            let object = try fixture.bytes(entry.objectPath)
            let part = try Self.get(pki, base + "/" + entry.objectPath, ["Range: bytes=5-14"]).response
            #expect(part.status == 206 && part.body == Array(object[5...14]), "\(part.status)")
            let br = try Self.get(pki, base + "/" + entry.objectPath, ["Accept-Encoding: br"]).response
            #expect(br.header("content-encoding") == (entry.brSize == nil ? nil : "br"))
            #expect(br.body == (try fixture.bytes(entry.brotliObjectPath ?? entry.objectPath)))
        }
    }

    @Test("h2load: 4,000 requests on 8 connections, 10 streams each, all answered 200")
    func h2load() throws {
        try EdgeTLSTests.withTLSEdge("h2-load") { edge, _, _ in
            let r = try Harness.run("/usr/bin/h2load", ["-n", "4000", "-c", "8", "-m", "10", "https://127.0.0.1:\(edge.port)/manifest.plist"])
            #expect(r.status == 0 && r.stdout.contains("4000 succeeded, 0 failed, 0 errored"), "\(r.stdout)")
            #expect(r.stdout.contains("status codes: 4000 2xx"), "\(r.stdout)")
            #expect(r.stdout.contains("Application protocol: h2"), "\(r.stdout)")
        }
    }

    /// One abusive client; its JSON report.
    static func abuse(_ port: Int, _ attack: String, _ count: Int = 1000, wait: Int = 3) throws -> [String: Any] {
        let r = try Harness.run("/usr/bin/env", ["python3", abuse, String(port), attack, String(count)], env: ["H2_WAIT": String(wait)])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw HarnessError("h2_abuse.py \(attack): \(r.status) \(r.stdout) \(r.stderr)")
        }
        return object
    }

    @Test("floods and malformed requests end that connection with the right GOAWAY; others are served")
    func defences() throws {
        try EdgeTLSTests.withTLSEdge("h2-abuse") { edge, pki, _ in try Self.checkDefences(edge, pki) }
    }

    static func checkDefences(_ edge: EdgeProcess, _ pki: TestPKI) throws {
        // ENHANCE_YOUR_CALM (11) for the floods: rapid reset (CVE-2023-44487), CONTINUATION, PING, SETTINGS.
        for (attack, count) in [("rapid-reset", 1000), ("continuation", 100), ("ping", 1000), ("settings", 1000)] {
            let report = try Self.abuse(edge.port, attack, count)
            #expect(report["goaway"] as? Int == 11 && report["closed"] as? Bool == true, "\(attack): \(report)")
        }
        // A header list over --max-header-bytes (16 KB): COMPRESSION_ERROR (9) or PROTOCOL_ERROR (1).
        let big = try Self.abuse(edge.port, "big-headers", 120)
        #expect([1, 9].contains(big["goaway"] as? Int ?? -1) && big["closed"] as? Bool == true, "\(big)")
        // A value with CR LF never reaches the HTTP/1.1 handler as a second request: that
        // stream is reset (PROTOCOL_ERROR), the connection goes on.
        let crlf = try Self.abuse(edge.port, "crlf-value")
        #expect((crlf["statuses"] as? [Int])?.isEmpty == true && (crlf["resets"] as? [Int]) == [1], "\(crlf)")
        #expect(try Self.get(pki, "https://localhost:\(edge.port)/healthz").response.status == 200)
    }

    static let conformance = Harness.repoRoot + "/Tests/IntegrationTests/h2_conformance.py"

    /// Cases the edge does not pass, and why (each is checked to still fail, so that this list
    /// stays true).
    /// (Empty: libnghttp2's one, a HEADERS frame on a lower, never-opened stream identifier
    /// ignored rather than §5.1.1's connection error, is the handler's to catch.)
    static let knownDeviations: [String: String] = [:]

    /// RFC 9113's cases for a server answering GET and HEAD (`h2_conformance.py`: the
    /// connection preface, frame sizes, stream states and identifiers, HPACK errors, PRIORITY,
    /// RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE and flow control, CONTINUATION,
    /// malformed requests), each on a connection of its own; on libnghttp2, and on the
    /// swift-nio-http2 layer it replaced (`FOLIO_EDGE_H2=swift-nio-http2`), the differential
    /// reference that must answer every case the same.
    @Test("RFC 9113 conformance: every case of h2_conformance.py", arguments: ["libnghttp2", "swift-nio-http2"])
    func conformance(layer: String) throws {
        try EdgeTLSTests.withTLSEdge("h2-conformance", env: Self.layerEnv(layer)) { edge, _, _ in try Self.checkConformance(edge) }
    }

    static func layerEnv(_ layer: String) -> [String: String] { layer == "libnghttp2" ? [:] : ["FOLIO_EDGE_H2": layer] }

    static func checkConformance(_ edge: EdgeProcess) throws {
        let r = try Harness.run("/usr/bin/env", ["python3", Self.conformance, String(edge.port)])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: [String: Any]], "\(r.status) \(r.stderr)")
        #expect(report.count >= 60, "\(report.keys.sorted())")
        for (name, result) in report.sorted(by: { $0.key < $1.key }) {
            let deviation = Self.knownDeviations[name] != nil
            #expect(result["ok"] as? Bool == !deviation, "\(name): \(result["got"] ?? "-")\(deviation ? " (a known deviation that is gone: update knownDeviations)" : "")")
        }
        // The connection limit of each case was the case's own: the edge still answers.
        #expect(try Self.abuse(edge.port, "ok")["statuses"] as? [Int] == [200])
    }

    /// `lastStream`: what the final GOAWAY names, stream 1 (the request's) where it is right.
    static func checkDrain(_ edge: EdgeProcess, lastStream: Int = 1) throws {
        let r = try Harness.run("/usr/bin/env", ["python3", Self.conformance, String(edge.port), "--drain", String(edge.pid)])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stderr)")
        #expect(report["statuses"] as? [Int] == [200], "\(report)")
        #expect(report["goaways"] as? [[Int]] == [[Int(Int32.max), 0], [lastStream, 0]], "\(report)")
        #expect(report["closed"] as? Bool == true, "\(report)")
    }

    @Test("on SIGTERM, an HTTP/2 connection gets GOAWAY for every stream, then the last stream taken, then closes")
    func drain() throws {
        try EdgeTLSTests.withTLSEdge("h2-drain") { edge, _, _ in try Self.checkDrain(edge) }
    }

    @Test("an idle HTTP/2 connection is closed after --request-timeout")
    func idle() throws {
        try EdgeTLSTests.withTLSEdge("h2-idle", extra: { _ in ["--request-timeout", "1"] }) { edge, _, _ in try Self.checkIdle(edge) }
    }

    /// An edge with `--request-timeout 1`: a connection that sends nothing is closed within 5 s.
    static func checkIdle(_ edge: EdgeProcess) throws {
        let start = edgeMonotonicSeconds()
        let report = try Self.abuse(edge.port, "idle", wait: 8)
        let elapsed = edgeMonotonicSeconds() - start
        #expect(report["closed"] as? Bool == true && elapsed < 5, "\(report) after \(elapsed) s")
    }

    @Test("--no-http2 offers HTTP/1.1 only")
    func disabled() throws {
        try EdgeTLSTests.withTLSEdge("h2-off", extra: { _ in ["--no-http2"] }) { edge, pki, _ in
            let r = try Self.get(pki, "https://localhost:\(edge.port)/manifest.plist")
            #expect(r.version == "1.1" && r.response.status == 200, "\(r.version)")
        }
    }
}
