import FolioSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A test server written in Python (a static host, a deliberately unreliable edge, canned
/// responses), on an ephemeral 127.0.0.1 port. The script prints `port N` once it listens, or
/// calls `serve(HandlerClass)`, defined for it, which does that with a threading TCP server. It
/// runs under `Harness.guarded`: it ends when the test process does, never on a clock first.
package final class PythonServer: @unchecked Sendable {
    package let port: Int
    private let process: Process
    private let dir: String

    package var url: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, process: Process, dir: String) {
        self.port = port
        self.process = process
        self.dir = dir
    }

    /// Runs `script` with `args` (sys.argv[1...]) and waits (15 s at most) for its port line.
    package static func start(_ script: String, args: [String] = []) throws -> PythonServer {
        let dir = Harness.tempDir("python-server")
        let prologue = """
            import socketserver as _socketserver
            def serve(handler):
                class Server(_socketserver.ThreadingTCPServer):
                    daemon_threads = True
                    allow_reuse_address = True
                server = Server(("127.0.0.1", 0), handler)
                print("port %d" % server.server_address[1], flush=True)
                server.serve_forever()

            """
        try FileIO.writeAtomically(Array((prologue + script).utf8), to: dir + "/server.py")
        _ = FileManager.default.createFile(atPath: dir + "/out", contents: nil)
        _ = FileManager.default.createFile(atPath: dir + "/err", contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = Harness.guarded(["python3", dir + "/server.py"] + args)
        p.standardOutput = FileHandle(forWritingAtPath: dir + "/out")!
        p.standardError = FileHandle(forWritingAtPath: dir + "/err")!
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch {
            Harness.cleanup(dir)
            throw error
        }
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let text = String(decoding: (try? FileIO.read(dir + "/out")) ?? [], as: UTF8.self)
            if let range = text.range(of: "port "), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                return PythonServer(port: port, process: p, dir: dir)
            }
            if !p.isRunning { break }
            usleep(20_000)
        }
        Harness.killGuarded(p)
        let err = String(decoding: (try? FileIO.read(dir + "/err")) ?? [], as: UTF8.self)
        Harness.cleanup(dir)
        throw HarnessError("the python test server did not start: \(err)")
    }

    /// Python's `http.server` serving `root` as it is on disk (checks nothing).
    package static func staticFiles(root: String) throws -> PythonServer {
        try start(
            """
            import functools, http.server, sys
            class Server(http.server.ThreadingHTTPServer):
                daemon_threads = True
                request_queue_size = 128  # clients open several connections at once
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
            server = Server(("127.0.0.1", 0), handler)
            print("serving on port", server.server_address[1], flush=True)
            server.serve_forever()
            """, args: [root])
    }

    /// SIGKILL (a child of the test runner may inherit SIGTERM ignored), then waits; safe to
    /// call twice.
    package func stop() {
        Harness.killGuarded(process)
        Harness.cleanup(dir)
    }
}
