import FolioPlist
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

/// How `folio` fails (issue #29): one JSON document with `--json`, docs/exit-codes.md's exit codes, an
/// edge lost mid-sync or silent, https spoken to a plain-http edge, a cache dir that is a file,
/// and messages without build paths or Swift type names.
@Suite("folio failures", .serialized)
struct ClientFailureTests {
    /// Checks that a message shown to users names no build path or Swift type.
    static func expectClean(_ out: Harness.Output, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = out.stdout + out.stderr
        let forbidden = [
            "/work/", ".build/", "checkouts", ".swift:", "NIOSSL", "BoringSSL", "TransportError", "DecodingError", "HTTPClientError",
            "FolioError", "CLIError", "PlistError", "SocketError", "IOError", "Fatal error",
        ]
        for pattern in forbidden {
            #expect(!text.contains(pattern), "'\(pattern)' in: \(text)", sourceLocation: sourceLocation)
        }
    }

    /// The one JSON document on stdout of a failed `--json` command: its result and error code.
    static func expectJSONFailure(
        _ out: Harness.Output, result: String, code: Int32, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(out.status == code, "\(out.status): \(out.stderr)", sourceLocation: sourceLocation)
        let json = try ClientTest.json(out)
        #expect(json["result"] == .string(result), "\(out.stdout)", sourceLocation: sourceLocation)
        #expect(json["error"]?["code"] == .int(Int64(code)), "\(out.stdout)", sourceLocation: sourceLocation)
        #expect(json["error"]?["message"]?.stringValue?.isEmpty == false, "\(out.stdout)", sourceLocation: sourceLocation)
        expectClean(out, sourceLocation: sourceLocation)
    }

    /// A server that accepts connections and never answers.
    static func silentEdge() throws -> PythonServer {
        try PythonServer.start(
            """
            import socket
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen(64)
            print("port %d" % s.getsockname()[1], flush=True)
            held = []
            while True:
                c, _ = s.accept()
                held.append(c)
            """)
    }

    /// A static host of `root` that, while the file `flag` exists, closes the connection
    /// without a word on every object and delta request: an edge lost in the middle of a sync.
    static func flakyEdge(root: String, flag: String) throws -> PythonServer {
        try PythonServer.start(
            """
            import functools, http.server, os, sys
            class Handler(http.server.SimpleHTTPRequestHandler):
                def log_message(self, *args): pass
                def do_GET(self):
                    if os.path.exists(sys.argv[2]) and ("/objects/" in self.path or "/deltas/" in self.path):
                        self.close_connection = True
                        return
                    super().do_GET()
            class Server(http.server.ThreadingHTTPServer):
                daemon_threads = True
            server = Server(("127.0.0.1", 0), functools.partial(Handler, directory=sys.argv[1]))
            print("port %d" % server.server_address[1], flush=True)
            server.serve_forever()
            """, args: [root, flag])
    }

    @Test("--json prints one JSON document with result and error on refusals and errors, with docs/exit-codes.md's exit codes")
    func jsonOnFailure() throws {
        let root = try ClientRoot.make("client-json-fail")
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        // A refusal: a trusted root and an unsigned edge (exit 10).
        let keys = try Harness.run(ClientTest.folioPath, ["keys", "generate", root.dir + "/root"])
        #expect(keys.status == 0, "\(keys.stderr)")
        let refused = try ClientTest.folio(["sync", "--json", "--trust", root.dir + "/root.pub"], cache: cache, edge: edge.baseURL)
        try Self.expectJSONFailure(refused, result: "refused", code: 10)
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        // Errors (exit 1): a cache dir that is a file, for sync and status; an unknown key; a bad plist.
        let file = root.dir + "/not-a-dir"
        try FileIO.writeAtomically(Array("x".utf8), to: file)
        try Self.expectJSONFailure(try ClientTest.folio(["sync", "--json"], cache: file, edge: edge.baseURL), result: "error", code: 1)
        try Self.expectJSONFailure(try ClientTest.folio(["status", "--json"], cache: file, edge: edge.baseURL), result: "error", code: 1)
        #expect(try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL).status == 0)
        let noKey = try ClientTest.folio(["strings", "no.such.key", "--json", "--offline"], cache: cache, edge: edge.baseURL)
        try Self.expectJSONFailure(noKey, result: "error", code: 1)
        try FileIO.writeAtomically(Array("{\"a\": tru}".utf8), to: root.dir + "/bad.json")
        try Self.expectJSONFailure(try Harness.run(ClientTest.folioPath, ["plist", "print", "--json", root.dir + "/bad.json"]), result: "error", code: 1)
        let ls = try ClientTest.folio(["show", "no/such.plist", "--json", "--offline"], cache: cache, edge: edge.baseURL)
        try Self.expectJSONFailure(ls, result: "error", code: 1)
        // A usage error is JSON too (the parser's exit code).
        let usage = try ClientTest.folio(["sync", "--json", "--timeout", "soon"], cache: cache, edge: edge.baseURL)
        try Self.expectJSONFailure(usage, result: "error", code: 64)
        // Success keeps its own results; status and strings say ok.
        #expect(try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: cache, edge: edge.baseURL))["result"] == .string("ok"))
        let synced = try ClientTest.json(try ClientTest.folio(["sync", "--json", "--force"], cache: cache, edge: edge.baseURL))
        #expect(synced["result"] == .string("notModified") && synced["error"] == nil, "\(synced)")
        // Offline: result offline, with the error object.
        let offline = try ClientTest.folio(["sync", "--json"], cache: cache, edge: ClientTest.unreachableEdge)
        try Self.expectJSONFailure(offline, result: "offline", code: 3)
    }

    @Test("an edge lost in the middle of a sync: exit 3 in one line, the cache keeps its version, --json says offline")
    func edgeLostMidSync() throws {
        let root = try ClientRoot.make("client-lost-edge")
        defer { root.cleanup() }
        let flag = root.dir + "/drop"
        let server = try Self.flakyEdge(root: root.root, flag: flag)
        defer { server.stop() }
        let cache = root.dir + "/cache"
        let first = try ClientTest.json(try ClientTest.folio(["sync", "--json"], cache: cache, edge: server.url))
        #expect(first["result"] == .string("updated"), "\(first)")
        let v1 = try root.manifest().version
        try root.rewriteLines(of: 18) { i, line in i == 0 ? "Shall I compare thee to a winter's night?" : line }
        try root.publish()
        #expect(try root.manifest().version == v1 + 1)
        try FileIO.writeAtomically([], to: flag)
        let whole = try ClientTest.folio(["sync", "--no-delta", "--json", "--force"], cache: cache, edge: server.url)
        try Self.expectJSONFailure(whole, result: "offline", code: 3)
        #expect(whole.stderr.split(separator: "\n").count == 1, "\(whole.stderr)")
        let plain = try ClientTest.folio(["sync", "--force"], cache: cache, edge: server.url)
        #expect(plain.status == 3, "\(plain.status): \(plain.stderr)")
        #expect((plain.stdout + plain.stderr).split(separator: "\n").count == 1, "\(plain.stdout)\(plain.stderr)")
        Self.expectClean(plain)
        let noDeltaPlain = try ClientTest.folio(["sync", "--no-delta", "--force"], cache: cache, edge: server.url)
        #expect(noDeltaPlain.status == 3 && noDeltaPlain.stderr.contains("keeps version \(v1)"), "\(noDeltaPlain.stderr)")
        let status = try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: cache, edge: server.url))
        #expect(status["version"] == .int(Int64(v1)), "\(status)")
    }

    @Test("a silent edge: --timeout and FOLIO_TIMEOUT end the sync as offline within about that long")
    func silentEdgeTimesOut() throws {
        let server = try Self.silentEdge()
        defer { server.stop() }
        let dir = Harness.tempDir("client-silent")
        defer { Harness.cleanup(dir) }
        for (args, env) in [(["sync", "--timeout", "1"], [String: String]()), (["sync"], ["FOLIO_TIMEOUT": "1"])] {
            let start = Date()
            let out = try ClientTest.folio(args, cache: dir + "/cache", edge: server.url, env: env)
            let took = Date().timeIntervalSince(start)
            #expect(out.status == 3, "\(out.status): \(out.stderr)")
            #expect(took < 10, "took \(took) s")
            #expect((out.stdout + out.stderr).contains("did not answer within 1 s"), "\(out.stdout)\(out.stderr)")
            Self.expectClean(out)
        }
        let json = try ClientTest.folio(["sync", "--json", "--timeout", "0.5"], cache: dir + "/cache", edge: server.url)
        try Self.expectJSONFailure(json, result: "offline", code: 3)
        // A bad value is refused before anything is asked.
        let bad = try ClientTest.folio(["sync"], cache: dir + "/cache", edge: server.url, env: ["FOLIO_TIMEOUT": "-2"])
        #expect(bad.status != 0 && bad.stderr.contains("FOLIO_TIMEOUT takes seconds"), "\(bad.stderr)")
        let help = try Harness.run(ClientTest.folioPath, ["sync", "--help"], env: ["COLUMNS": "200"])
        #expect(help.stdout.contains("--timeout") && help.stdout.contains("FOLIO_TIMEOUT, else 15"), "\(help.stdout)")
    }

    @Test("https spoken to a plain-http edge: a configuration error naming the http URL, exit 1, not offline")
    func httpsToPlainEdge() throws {
        let root = try ClientRoot.make("client-https-plain")
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let https = "https://127.0.0.1:\(edge.port)"
        let out = try ClientTest.folio(["sync"], cache: root.dir + "/cache", edge: https)
        #expect(out.status == 1, "\(out.status): \(out.stderr)")
        #expect(out.stderr.contains("the edge at 127.0.0.1:\(edge.port) answered plain HTTP"), "\(out.stderr)")
        #expect(out.stderr.contains("use http://127.0.0.1:\(edge.port)"), "\(out.stderr)")
        #expect(!out.stderr.contains("offline"), "\(out.stderr)")
        Self.expectClean(out)
        try Self.expectJSONFailure(try ClientTest.folio(["sync", "--json"], cache: root.dir + "/cache", edge: https), result: "error", code: 1)
    }

    @Test("a cache dir that is a file, or that cannot be created, is refused by every command that uses the cache")
    func cacheDirIsAFile() throws {
        let dir = Harness.tempDir("client-cache-file")
        defer { Harness.cleanup(dir) }
        let file = dir + "/passwd"
        try FileIO.writeAtomically(Array("root:x:0:0\n".utf8), to: file)
        let commands = [
            ["status"], ["sync"], ["read", "sonnet", "18"], ["list", "sonnets"], ["ls"], ["show", "sonnets/018.plist"], ["strings"],
        ]
        for command in commands {
            let out = try ClientTest.folio(command, cache: file, edge: ClientTest.unreachableEdge)
            #expect(out.status == 1, "\(command): \(out.status) \(out.stderr)")
            #expect(out.stderr.contains("--cache-dir \(file) is a file, not a directory"), "\(command): \(out.stderr)")
            #expect(out.stdout.isEmpty, "\(command): \(out.stdout)")
            Self.expectClean(out)
        }
        // diff reads @N from the cache: its error exit, 2.
        let diff = try ClientTest.folio(["diff", "@1", "@2"], cache: file, edge: ClientTest.unreachableEdge)
        #expect(diff.status == 2 && diff.stderr.contains("--cache-dir \(file) is a file, not a directory"), "\(diff.stderr)")
        let env = try Harness.run(ClientTest.folioPath, ["status"], env: ["FOLIO_CACHE_DIR": file])
        #expect(env.status == 1 && env.stderr.contains("FOLIO_CACHE_DIR \(file) is a file"), "\(env.stderr)")
        let below = try ClientTest.folio(["sync"], cache: file + "/cache", edge: ClientTest.unreachableEdge)
        #expect(below.status == 1, "\(below.status) \(below.stderr)")
        #expect(below.stderr.contains("cannot be created: \(file) is a file, not a directory"), "\(below.stderr)")
    }
}
