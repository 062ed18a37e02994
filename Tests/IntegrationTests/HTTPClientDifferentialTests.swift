import AsyncHTTPClient
import FolioHTTPCore
import FolioKit
import FolioKitNIO
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import NIOHTTP1
import Testing

/// `folio sync` reads plain-http edges with `QuickHTTP` (blocking sockets, keep-alive, one seam
/// in `Syncer`); https edges, and every app that links FolioKit over https, with AsyncHTTPClient.
/// Both must read the same responses the same way: here each request goes through both, to the
/// real edge and to a server of canned responses (chunked, interim, close-delimited, trickled,
/// malformed), and the status, fields (less `Date`) and body must agree, or both must fail.
@Suite("QuickHTTP and AsyncHTTPClient read every response alike", .serialized)
struct HTTPClientDifferentialTests {
    struct Answer: Equatable, CustomStringConvertible {
        var status: Int
        var fields: [String]
        var body: [UInt8]

        init(status: Int, headers: TransportFields, body: [UInt8]) {
            self.status = status
            self.fields = headers.filter { $0.name.lowercased() != "date" }.map { "\($0.name.lowercased()): \($0.value)" }
            self.body = body
        }

        var description: String { "\(status) \(fields) \(body.count) bytes" }
    }

    /// One request on a keep-alive connection, as `folio sync` makes it.
    static func quick(_ connection: QuickHTTP.Connection, _ path: String, _ headers: [(String, String)]) -> Result<Answer, QuickHTTP.Failure> {
        do {
            let r = TransportResponse(try connection.get(path, headers: headers, maxBody: 1 << 24))
            return .success(Answer(status: r.status, headers: r.headers, body: r.body))
        } catch let failure as QuickHTTP.Failure {
            return .failure(failure)
        } catch {
            return .failure(QuickHTTP.Failure(description: "\(error)"))
        }
    }

    /// The same request through FolioKit's AsyncHTTPClient transport (the one of https edges).
    static func general(_ base: String, _ path: String, _ headers: [(String, String)]) async -> Result<Answer, QuickHTTP.Failure> {
        // 120 s: the response body is read by this task, which in a full `make test` waits for
        // one of the cooperative pool's threads (as many as cores) while other suites' blocking
        // tests hold them; a trickled answer once stalled past 10 s, then past 30 s, that way,
        // while QuickHTTP (blocking, on this thread) read it at once.
        let transport = HTTPClientTransport(base: base, configuration: FolioHTTPConfiguration(timeout: .seconds(120)))
        do {
            let r = try await transport.get(TransportRequest(path: path, headers: headers, maxBody: 1 << 24))
            return .success(Answer(status: r.status, headers: r.headers, body: r.body))
        } catch {
            return .failure(QuickHTTP.Failure(description: "\(error)"))
        }
    }

    /// Sends every request through both clients; returns how many both answered.
    static func compare(base: String, port: Int, _ requests: [(String, [(String, String)])]) async -> Int {
        let fields = FolioHTTPConfiguration().requestFields.map { "\($0.0): \($0.1)\r\n" }.joined()
        let connection = QuickHTTP.Connection(PlainEndpoint("http://127.0.0.1:\(port)")!, timeoutMs: 30_000, fields: fields, cancel: CancelFlag())
        var answered = 0
        for (path, headers) in requests {
            let a = quick(connection, path, headers)
            let b = await general(base, path, headers)
            switch (a, b) {
            case (.success(let x), .success(let y)):
                #expect(x == y, "GET \(path) \(headers): QuickHTTP \(x), AsyncHTTPClient \(y)")
                answered += 1
            case (.failure, .failure):
                break
            default:
                Issue.record("GET \(path) \(headers): QuickHTTP \(a), AsyncHTTPClient \(b)")
            }
        }
        return answered
    }

    @Test("the real edge: manifest, 304, objects in both encodings, ranges, negotiation, 404")
    func realEdge() async throws {
        let fixture = try EdgeFixture.make("http-differential")
        defer { fixture.cleanup() }
        let edge = try EdgeProcess.start(root: fixture.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let manifest = try fixture.manifest()
        let etag = try #require(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").header("ETag"))
        let object = "/" + (try #require(manifest.entry("sonnets/018.plist"))).objectPath
        let requests: [(String, [(String, String)])] = [
            ("/manifest.plist", []),
            ("/manifest.plist", [("Accept-Encoding", "gzip")]),
            ("/manifest.plist", [("If-None-Match", etag)]),
            (object, []),
            (object, [("Accept-Encoding", "gzip")]),
            (object, [("Range", "bytes=0-9")]),
            (object, [("Range", "bytes=999999-")]),
            ("/content/en/sonnets/018.plist", [("Accept-Language", "fr, en;q=0.5")]),
            ("/objects/0000.plist", []),
            ("/healthz", []),
        ]
        let answered = await Self.compare(base: edge.baseURL, port: edge.port, requests)
        #expect(answered == requests.count)
    }

    /// Answers each path with fixed bytes: sent at once, or (`/trickle…`) a few bytes at a time.
    /// A response without a length closes the connection; the others keep it open.
    static let cannedServer = #"""
        import socketserver, sys, time
        def chunked(parts, trailer=b""):
            out = b""
            for p in parts: out += b"%x;ext=1\r\n" % len(p) + p + b"\r\n"
            return out + b"0\r\n" + trailer + b"\r\n"
        body = bytes(range(256)) * 40
        canned = {
            "/length": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello",
            "/chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked([body[:1000], body[1000:1001], body[1001:]]),
            "/chunked-trailer": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n" + chunked([b"abc"], b"X-T: 1\r\n"),
            "/chunked-upper": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
            "/interim": b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            "/no-content": b"HTTP/1.1 204 No Content\r\n\r\n",
            "/not-modified": b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
            "/empty": b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            "/error": b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nRetry-After: 1\r\n\r\nbusy",
            "/close-delimited": b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body,
            "/trickle-chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked([body[:300], body[300:700]]),
            "/trickle-length": b"HTTP/1.1 200 OK\r\nContent-Length: 700\r\n\r\n" + body[:700],
            "/bad-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
            "/bad-chunk-end": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n",
            "/truncated-length": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nabc",
            "/truncated-chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nab",
            "/bad-status": b"HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n",
        }
        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                while True:
                    line = self.rfile.readline()
                    if not line: return
                    while self.rfile.readline() not in (b"\r\n", b""): pass
                    path = line.split(b" ")[1].decode()
                    reply = canned.get(path, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    if path.startswith("/trickle"):
                        for i in range(0, len(reply), 7):
                            self.wfile.write(reply[i:i + 7]); self.wfile.flush(); time.sleep(0.0005)
                    else:
                        self.wfile.write(reply)
                    self.wfile.flush()
                    if b"Connection: close" in reply.split(b"\r\n\r\n")[0] or path.startswith("/truncated"):
                        return
        serve(Handler)
        """#

    /// Python's `http.server`, answering each POST or PUT with the SHA-256 of the body it read
    /// by its `Content-Length`, after reading it slowly (the client's send buffer fills).
    static let digestServer = #"""
        import hashlib, http.server, time
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def answer(self):
                left, digest = int(self.headers["Content-Length"]), hashlib.sha256()
                while left:
                    part = self.rfile.read(min(left, 1 << 16)); digest.update(part); left -= len(part); time.sleep(0.001)
                body = (self.command + " " + self.path + " " + digest.hexdigest()).encode()
                self.send_response(201); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
            do_POST = do_PUT = answer
            def log_message(self, *args): pass
        serve(Handler)
        """#

    @Test("QuickHTTP sends a request's body whole, by its length: 6 MB to a slow reader, then a small one on the same connection")
    func bodies() throws {
        let server = try PythonServer.start(Self.digestServer)
        defer { server.stop() }
        let connection = QuickHTTP.Connection(PlainEndpoint(server.url)!, timeoutMs: 30_000, fields: "", cancel: CancelFlag())
        let large = (0..<(6 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        for (method, path, body) in [("POST", "/large", large), ("PUT", "/small", Array("small".utf8)), ("POST", "/empty", [])] {
            let r = try connection.request(method, path, headers: [], body: body, maxBody: 1 << 10)
            #expect(r.status == 201)
            #expect(String(decoding: r.body, as: UTF8.self) == "\(method) \(path) \(ContentHash.sha256Hex(body))")
        }
    }

    @Test("framing: lengths, chunked (extensions, trailers, trickled), interim 1xx, close-delimited, malformed")
    func framing() async throws {
        let server = try PythonServer.start(Self.cannedServer)
        defer { server.stop() }
        let paths = [
            "/length", "/chunked", "/chunked-trailer", "/chunked-upper", "/interim", "/no-content", "/not-modified", "/empty",
            "/error", "/close-delimited", "/trickle-chunked", "/trickle-length", "/length", "/bad-chunk-size", "/length",
            "/bad-chunk-end", "/truncated-length", "/truncated-chunked", "/bad-status", "/missing", "/length",
        ]
        let answered = await Self.compare(base: server.url, port: server.port, paths.map { ($0, []) })
        // Five malformed or truncated responses fail in both; every other one is answered.
        #expect(answered == paths.count - 5)
    }
}
