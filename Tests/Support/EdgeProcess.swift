import FolioSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - The edge process

/// The real `folio-edge`, started on port 0; stderr goes to a file the tests can grep.
package final class EdgeProcess: @unchecked Sendable {
    package let root: String
    package let port: Int
    /// `https` when the edge was started with TLS.
    package let scheme: String
    /// The plain listener's port beside an https one (`--http-port`).
    package let httpPort: Int?
    /// The admin listener's port (`--admin-listen`).
    package private(set) var adminPort: Int?
    /// What the edge printed on stdout up to its listening lines.
    package private(set) var stdoutText = ""
    package let pid: pid_t
    package let logPath: String
    private let process: Process
    private let logDir: String
    private let stdoutPipe: Pipe
    private let stderrHandle: FileHandle
    private let stopped = Mutex(false)

    private init(
        root: String, port: Int, scheme: String, httpPort: Int?, process: Process, logDir: String, stdoutPipe: Pipe,
        stderrHandle: FileHandle
    ) {
        self.root = root
        self.port = port
        self.scheme = scheme
        self.httpPort = httpPort
        self.process = process
        self.pid = process.processIdentifier
        self.logDir = logDir
        self.logPath = logDir + "/stderr.log"
        self.stdoutPipe = stdoutPipe
        self.stderrHandle = stderrHandle
    }

    /// Starts `folio-edge --root ROOT --port 0 --no-access-log ARGS` (without `--root` for a
    /// tier, `--origin` in ARGS, or when ROOT is "": a config file's tier; without
    /// `--no-access-log` when ARGS configure the access log)
    /// and waits (20 s at most)
    /// for its `listening on http://127.0.0.1:PORT` line.
    package static func start(root: String, args: [String] = [], env: [String: String] = [:], timeout: Double = 20) throws -> EdgeProcess {
        let logDir = Harness.tempDir("edge-log")
        let logPath = logDir + "/stderr.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let stderrHandle = FileHandle(forWritingAtPath: logPath) else {
            Harness.cleanup(logDir)
            throw HarnessError("cannot open \(logPath)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Harness.binary("folio-edge"))
        // A cache tier takes no --root (folio-edge refuses the other mode's options).
        let args = TestStack.current.edgeArguments(args)
        let logged = args.contains("--access-log") || args.contains("--access-log-format")
        p.arguments = (args.contains("--origin") || root.isEmpty ? [] : ["--root", root]) + ["--port", "0"] + (logged ? [] : ["--no-access-log"]) + args
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = stderrHandle
        p.standardInput = FileHandle.nullDevice
        if !env.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(env) { $1 } }
        do { try p.run() } catch {
            Harness.cleanup(logDir)
            throw error
        }
        let fd = pipe.fileHandleForReading.fileDescriptor
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        func fail(_ why: String) -> Error {
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitForExit()
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            Harness.cleanup(logDir)
            return HarnessError("folio-edge \(why); stdout: \(text); stderr: \(log)")
        }
        // With TLS the https line comes first, then the plain listener's with --http-port.
        let wantsPlain = args.contains("--http-port")
        let wantsAdmin = args.contains("--admin-listen")
        func port(_ scheme: String, admin: Bool = false) -> Int? {
            let prefix = (admin ? "admin " : "") + "listening on \(scheme)://"
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }), let colon = line.lastIndex(of: ":") else { return nil }
            return Int(line[line.index(after: colon)...].prefix { $0.isNumber })
        }
        while true {
            if text.hasSuffix("\n"), !wantsAdmin || (port("http", admin: true) ?? port("https", admin: true)) != nil {
                var started: EdgeProcess?
                if let tls = port("https"), !wantsPlain || port("http") != nil {
                    TestStack.addTLSPort(tls)
                    started = EdgeProcess(
                        root: root, port: tls, scheme: "https", httpPort: port("http"), process: p, logDir: logDir, stdoutPipe: pipe,
                        stderrHandle: stderrHandle)
                } else if let plain = port("http"), !args.contains("--tls-cert") {
                    started = EdgeProcess(
                        root: root, port: plain, scheme: "http", httpPort: nil, process: p, logDir: logDir, stdoutPipe: pipe,
                        stderrHandle: stderrHandle)
                }
                if let started {
                    started.adminPort = port("http", admin: true) ?? port("https", admin: true)
                    started.stdoutText = text
                    return started
                }
            }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { throw fail("printed no listening line within \(timeout) s") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&pfd, 1, Int32(max(1, min(remaining, 0.5) * 1000)))
            if r > 0 {
                var buf = [UInt8](repeating: 0, count: 4096)
                let n = read(fd, &buf, buf.count)
                if n <= 0 { throw fail("exited before listening") }
                text += String(decoding: buf[0..<n], as: UTF8.self)
            } else if r < 0, errno != EINTR {
                throw fail("poll failed (errno \(errno))")
            }
        }
    }

    package var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }

    /// Running and signalable (the PID is ours until Foundation reaps it).
    package var isAlive: Bool { process.isRunning && kill(pid, 0) == 0 }

    /// Sends `sig` to the edge we started, and only while it runs.
    package func signal(_ sig: Int32) {
        if process.isRunning { kill(pid, sig) }
    }

    /// Waits for the process to exit; true when it did within `timeout`.
    package func waitForExit(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// The exit status once exited (nil while running); `normalExit` is false for a signal.
    package var exitStatus: (status: Int32, normalExit: Bool)? {
        process.isRunning ? nil : (process.terminationStatus, process.terminationReason == .exit)
    }

    /// SIGTERM, up to 10 s to drain, then SIGKILL. Returns the termination status.
    @discardableResult
    package func terminate() -> Int32 {
        signal(SIGTERM)
        if !waitForExit(timeout: 10) {
            signal(SIGKILL)
        }
        process.waitForExit()
        return process.terminationStatus
    }

    /// Terminates and removes the log directory; safe to call twice.
    package func stop() {
        let first = stopped.withLock { s in
            defer { s = true }
            return !s
        }
        guard first else { return }
        terminate()
        try? stdoutPipe.fileHandleForReading.close()
        try? stderrHandle.close()
        Harness.cleanup(logDir)
    }

    /// Everything the edge wrote to stderr so far.
    package var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Polls the log for `text`; true when it appears within `timeout`.
    package func waitForLog(_ text: String, timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if log.contains(text) { return true }
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(25))
        }
    }

    /// GET /healthz on a fresh connection.
    package func health() throws -> String {
        try RawHTTPConnection.fetch(port: port, "/healthz").text
    }

    /// Waits (`timeout` seconds at most) until `/healthz` reports `version`, blocking; throws
    /// with the last answer otherwise.
    package func requireVersion(_ version: Int, timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            if let text = try? health() {
                if text == "ok version \(version)\n" { return }
                last = text
            }
            usleep(20_000)
        }
        throw HarnessError("the edge on port \(port) did not reach version \(version) (last /healthz: \(last))")
    }

    /// Polls /healthz until it reports `version`; returns the seconds it took, or nil.
    package func waitForVersion(_ version: Int, timeout: Double) async -> Double? {
        let start = Date()
        while true {
            if (try? health()) == "ok version \(version)\n" { return Date().timeIntervalSince(start) }
            if Date().timeIntervalSince(start) >= timeout { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The value of one Prometheus sample (name with its labels, e.g. `x{status="404"}`).
    package func metric(_ sample: String) throws -> Double? {
        let text = try RawHTTPConnection.fetch(port: port, "/metrics").text
        return Self.metric(sample, in: text)
    }

    package static func metric(_ sample: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(sample + " ") {
            return Double(line.dropFirst(sample.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
