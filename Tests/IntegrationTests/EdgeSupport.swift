import FolioTestSupport
import FolioPublished
import FolioSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Helpers for the live folio-edge tests: a published fixture, the real edge process, a raw
// HTTP/1.1 client over POSIX sockets (127.0.0.1 only), curl, and a few thread utilities.

/// The parent of every live edge suite. Serialized so that the timing-sensitive suites
/// (slowloris, hot swap under load) never share the machine's two cores with each other.
@Suite(.serialized) enum EdgeIntegration {}

// MARK: - Published fixture

/// A directory published by the real `folio-build`.
struct EdgeFixture: Sendable {
    /// The temporary directory holding everything (removed by `cleanup`).
    let dir: String
    /// The published root (`dir/public`).
    let root: String
    /// The content directory it was built from.
    let content: String

    static let buildEnv = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]

    /// Publishes the repository's content (or an editable copy of it) into a fresh directory.
    static func make(_ label: String = "edge", editableContent: Bool = false) throws -> EdgeFixture {
        let dir = Harness.tempDir(label)
        do {
            let content = editableContent ? Harness.copyContent(to: dir) : Harness.repoRoot + "/content"
            let fixture = EdgeFixture(dir: dir, root: dir + "/public", content: content)
            let r = try fixture.publish()
            guard r.status == 0 else { throw HarnessError("folio-build failed (\(r.status)): \(r.stderr)") }
            return fixture
        } catch {
            Harness.cleanup(dir)
            throw error
        }
    }

    /// Runs folio-build from `content` (default: this fixture's) into the root.
    @discardableResult
    func publish(from content: String? = nil) throws -> Harness.Output {
        try Harness.run(
            Harness.binary("folio-build"),
            ["--content", content ?? self.content, "--output", root, "--quiet"], env: Self.buildEnv)
    }

    /// The manifest currently on disk.
    func manifest() throws -> Manifest {
        try Manifest(bytes: try FileIO.read(root + "/manifest.plist"))
    }

    /// The bytes of a file under the root.
    func bytes(_ relative: String) throws -> [UInt8] {
        try FileIO.read(root + "/" + relative)
    }

    func cleanup() { Harness.cleanup(dir) }
}

// MARK: - The edge process

/// The real `folio-edge`, started on port 0; stderr goes to a file the tests can grep.
final class EdgeProcess: @unchecked Sendable {
    let root: String
    let port: Int
    let pid: pid_t
    let logPath: String
    private let process: Process
    private let logDir: String
    private let stdoutPipe: Pipe
    private let stderrHandle: FileHandle
    private let stopped = Mutex(false)

    private init(root: String, port: Int, process: Process, logDir: String, stdoutPipe: Pipe, stderrHandle: FileHandle) {
        self.root = root
        self.port = port
        self.process = process
        self.pid = process.processIdentifier
        self.logDir = logDir
        self.logPath = logDir + "/stderr.log"
        self.stdoutPipe = stdoutPipe
        self.stderrHandle = stderrHandle
    }

    /// Starts `folio-edge --root ROOT --port 0 --no-access-log ARGS` and waits (20 s at most)
    /// for its `listening on http://127.0.0.1:PORT` line.
    static func start(root: String, args: [String] = [], timeout: Double = 20) throws -> EdgeProcess {
        let logDir = Harness.tempDir("edge-log")
        let logPath = logDir + "/stderr.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let stderrHandle = FileHandle(forWritingAtPath: logPath) else {
            Harness.cleanup(logDir)
            throw HarnessError("cannot open \(logPath)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Harness.binary("folio-edge"))
        p.arguments = ["--root", root, "--port", "0", "--no-access-log"] + args
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = stderrHandle
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch {
            Harness.cleanup(logDir)
            throw error
        }
        let fd = pipe.fileHandleForReading.fileDescriptor
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        func fail(_ why: String) -> Error {
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitUntilExit()
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            Harness.cleanup(logDir)
            return HarnessError("folio-edge \(why); stdout: \(text); stderr: \(log)")
        }
        let prefix = "listening on http://127.0.0.1:"
        while true {
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
                text.contains("\n"), let port = Int(line.dropFirst(prefix.count).prefix { $0.isNumber })
            {
                return EdgeProcess(root: root, port: port, process: p, logDir: logDir, stdoutPipe: pipe, stderrHandle: stderrHandle)
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

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Running and signalable (the PID is ours until Foundation reaps it).
    var isAlive: Bool { process.isRunning && kill(pid, 0) == 0 }

    /// Sends `sig` to the edge we started, and only while it runs.
    func signal(_ sig: Int32) {
        if process.isRunning { kill(pid, sig) }
    }

    /// Waits for the process to exit; true when it did within `timeout`.
    func waitForExit(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// The exit status once exited (nil while running); `normalExit` is false for a signal.
    var exitStatus: (status: Int32, normalExit: Bool)? {
        process.isRunning ? nil : (process.terminationStatus, process.terminationReason == .exit)
    }

    /// SIGTERM, up to 10 s to drain, then SIGKILL. Returns the termination status.
    @discardableResult
    func terminate() -> Int32 {
        signal(SIGTERM)
        if !waitForExit(timeout: 10) {
            signal(SIGKILL)
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Terminates and removes the log directory; safe to call twice.
    func stop() {
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
    var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Polls the log for `text`; true when it appears within `timeout`.
    func waitForLog(_ text: String, timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if log.contains(text) { return true }
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(25))
        }
    }

    /// GET /healthz on a fresh connection.
    func health() throws -> String {
        try RawHTTPConnection.fetch(port: port, "/healthz").text
    }

    /// Polls /healthz until it reports `version`; returns the seconds it took, or nil.
    func waitForVersion(_ version: Int, timeout: Double) async -> Double? {
        let start = Date()
        while true {
            if (try? health()) == "ok version \(version)\n" { return Date().timeIntervalSince(start) }
            if Date().timeIntervalSince(start) >= timeout { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The value of one Prometheus sample (name with its labels, e.g. `x{status="404"}`).
    func metric(_ sample: String) throws -> Double? {
        let text = try RawHTTPConnection.fetch(port: port, "/metrics").text
        return Self.metric(sample, in: text)
    }

    static func metric(_ sample: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(sample + " ") {
            return Double(line.dropFirst(sample.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}

// MARK: - A shared edge per suite

/// What a suite sharing one edge gets: the fixture it serves and the running edge.
struct SharedEdgeContext: Sendable {
    let fixture: EdgeFixture
    let edge: EdgeProcess
    let manifest: Manifest
}

enum SharedEdge {
    @TaskLocal static var context: SharedEdgeContext?

    /// The context of the enclosing suite's `.sharedEdge` trait.
    static func current() throws -> SharedEdgeContext {
        guard let context else { throw HarnessError("no shared edge: the suite needs the .sharedEdge trait") }
        return context
    }
}

/// Publishes a fixture and starts one edge for a whole suite, stopping it when the suite ends.
struct SharedEdgeTrait: SuiteTrait, TestScoping {
    var label: String
    var args: [String]

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let fixture = try EdgeFixture.make(label)
        defer { fixture.cleanup() }
        let edge = try EdgeProcess.start(root: fixture.root, args: args)
        defer { edge.stop() }
        let context = SharedEdgeContext(fixture: fixture, edge: edge, manifest: try fixture.manifest())
        try await SharedEdge.$context.withValue(context) {
            try await function()
        }
    }
}

extension Trait where Self == SharedEdgeTrait {
    /// One published fixture and one edge (started with `args`) for the whole suite.
    static func sharedEdge(_ label: String, args: [String] = []) -> Self {
        SharedEdgeTrait(label: label, args: args)
    }
}

// MARK: - HTTP responses

struct EdgeHeaderField: Sendable, Equatable {
    var name: String
    var value: String
}

/// One HTTP response as received.
struct EdgeResponse: Sendable {
    var version: String
    var status: Int
    var reason: String
    var headers: [EdgeHeaderField]
    var body: [UInt8]

    /// The first value of a header (case-insensitive name).
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of a header (case-insensitive name).
    func values(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    func has(_ name: String) -> Bool { header(name) != nil }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// Headers as lowercase name → value, minus the ones that may differ between two
    /// responses for the same representation (Date).
    var stableHeaders: [String: String] {
        var d: [String: String] = [:]
        for h in headers where h.name.lowercased() != "date" { d[h.name.lowercased()] = h.value }
        return d
    }

    /// Parses a head (status line and fields, without the final blank line).
    static func parseHead(_ head: String) throws -> EdgeResponse {
        let lines = head.components(separatedBy: "\r\n")
        guard let statusLine = lines.first else { throw RawHTTPError.malformed("empty head") }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw RawHTTPError.malformed("bad status line: \(statusLine)")
        }
        var headers: [EdgeHeaderField] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPError.malformed("bad header line: \(line)") }
            headers.append(
                EdgeHeaderField(
                    name: String(line[..<colon]),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return EdgeResponse(
            version: String(parts[0]), status: status, reason: parts.count > 2 ? String(parts[2]) : "",
            headers: headers, body: [])
    }
}

enum RawHTTPError: Error, CustomStringConvertible {
    case system(String, Int32)
    /// The server closed the connection; `received` bytes of the response had arrived.
    case closed(received: Int)
    case timedOut
    case malformed(String)

    var description: String {
        switch self {
        case .system(let call, let e): "\(call) failed: \(String(cString: strerror(e))) (errno \(e))"
        case .closed(let n): "connection closed by the server after \(n) bytes of the response"
        case .timedOut: "timed out waiting for the server"
        case .malformed(let m): "malformed response: \(m)"
        }
    }
}

// MARK: - Raw HTTP/1.1 client

/// Opens a TCP connection to 127.0.0.1 with send and receive timeouts.
func edgeConnectLoopback(port: Int, timeout: Double = 5) throws -> Int32 {
    #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw RawHTTPError.system("socket", errno) }
    var tv = timeval(tv_sec: Int(timeout), tv_usec: .init((timeout - timeout.rounded(.down)) * 1_000_000))
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var one: Int32 = 1
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
    let rc = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    if rc != 0 {
        let e = errno
        close(fd)
        throw RawHTTPError.system("connect", e)
    }
    return fd
}

#if canImport(Glibc)
    let edgeSendFlags = Int32(MSG_NOSIGNAL)
#else
    let edgeSendFlags: Int32 = 0
#endif

/// close(2), callable where a method named `close` hides it.
func edgeCloseDescriptor(_ fd: Int32) { _ = close(fd) }

/// send(2) without SIGPIPE; returns the byte count or -1 with errno set.
func edgeSendBytes(_ fd: Int32, _ p: UnsafeRawPointer, _ count: Int) -> Int { send(fd, p, count, edgeSendFlags) }

/// A raw HTTP/1.1 client connection: writes exactly the bytes given and parses responses
/// (body by Content-Length; none for HEAD, 1xx, 204 and 304; else until close).
final class RawHTTPConnection {
    let fd: Int32
    private var pending: [UInt8] = []
    private var isClosed = false

    init(port: Int, timeout: Double = 5) throws {
        fd = try edgeConnectLoopback(port: port, timeout: timeout)
    }

    deinit { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        edgeCloseDescriptor(fd)
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { edgeSendBytes(fd, $0.baseAddress! + sent, bytes.count - sent) }
            if n < 0 {
                if errno == EINTR { continue }
                throw RawHTTPError.system("send", errno)
            }
            sent += n
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Receives more bytes into the buffer; false at end of stream.
    private func fill() throws -> Bool {
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n > 0 {
                pending.append(contentsOf: buf[0..<n])
                return true
            }
            if n == 0 { return false }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { throw RawHTTPError.timedOut }
            if e == ECONNRESET { return false }
            throw RawHTTPError.system("recv", e)
        }
    }

    /// Reads one response; `method` tells whether a body follows (HEAD has none).
    func readResponse(method: String = "GET") throws -> EdgeResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while true {
            if let r = pending.firstRange(of: separator) {
                headEnd = r.lowerBound
                break
            }
            guard try fill() else { throw RawHTTPError.closed(received: pending.count) }
        }
        let end = headEnd!
        var response = try EdgeResponse.parseHead(String(decoding: pending[0..<end], as: UTF8.self))
        pending.removeFirst(end + 4)
        let noBody = method == "HEAD" || response.status == 304 || response.status == 204 || response.status < 200
        if noBody { return response }
        if let cl = response.header("Content-Length") {
            guard let length = Int(cl), length >= 0 else { throw RawHTTPError.malformed("Content-Length \(cl)") }
            while pending.count < length {
                guard try fill() else { throw RawHTTPError.closed(received: end + 4 + pending.count) }
            }
            response.body = Array(pending[0..<length])
            pending.removeFirst(length)
        } else {
            while try fill() {}
            response.body = pending
            pending = []
        }
        return response
    }

    /// Reads one response per method, in order (for pipelined requests).
    func readResponses(_ methods: [String]) throws -> [EdgeResponse] {
        try methods.map { try readResponse(method: $0) }
    }

    /// Sends one request and reads its response.
    func request(_ method: String = "GET", _ target: String, headers: [(String, String)] = []) throws -> EdgeResponse {
        try send(Self.head(method, target, headers: headers))
        return try readResponse(method: method)
    }

    /// Waits for the server to close the connection: true at end of stream or reset within
    /// `timeout`. Bytes that arrive meanwhile are kept in `received`.
    func waitForClose(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&pfd, 1, Int32(max(1, remaining * 1000)))
            if r < 0 {
                if errno == EINTR { continue }
                return false
            }
            if r == 0 { return false }
            let n = recv(fd, &buf, buf.count, Int32(MSG_DONTWAIT))
            if n > 0 {
                pending.append(contentsOf: buf[0..<n])
                continue
            }
            if n == 0 { return true }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            return true
        }
    }

    /// Bytes received and not yet parsed as a response.
    var received: [UInt8] { pending }

    /// A request head: request line, `Host: 127.0.0.1` (unless `host` is false), the headers, CRLF.
    static func head(_ method: String, _ target: String, headers: [(String, String)] = [], version: String = "HTTP/1.1", host: Bool = true) -> String {
        var s = "\(method) \(target) \(version)\r\n"
        if host { s += "Host: 127.0.0.1\r\n" }
        for (name, value) in headers { s += "\(name): \(value)\r\n" }
        return s + "\r\n"
    }

    /// One request on a fresh connection.
    static func fetch(port: Int, _ method: String = "GET", _ target: String, headers: [(String, String)] = []) throws -> EdgeResponse {
        let c = try RawHTTPConnection(port: port)
        defer { c.close() }
        return try c.request(method, target, headers: headers)
    }

    static func fetch(port: Int, _ target: String, headers: [(String, String)] = []) throws -> EdgeResponse {
        try fetch(port: port, "GET", target, headers: headers)
    }
}

// MARK: - curl, a real HTTP client

enum EdgeCurl {
    static let path: String = {
        for p in ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"] where FileManager.default.isExecutableFile(atPath: p) {
            return p
        }
        return "curl"
    }()

    /// `curl -s -D - -o FILE -H … URL`: the status, headers and raw body bytes (no decoding).
    static func get(_ url: String, headers: [String] = []) throws -> EdgeResponse {
        let dir = Harness.tempDir("curl")
        defer { Harness.cleanup(dir) }
        var args = ["-s", "-S", "--max-time", "10", "-D", "-", "-o", dir + "/body"]
        for h in headers { args += ["-H", h] }
        args.append(url)
        let r = try Harness.run(path, args)
        guard r.status == 0 else { throw HarnessError("curl \(url) failed (\(r.status)): \(r.stderr)") }
        // With interim responses there are several heads; the last is the response.
        let heads = r.stdout.components(separatedBy: "\r\n\r\n").filter { $0.hasPrefix("HTTP/") }
        guard let last = heads.last else { throw HarnessError("curl printed no head: \(r.stdout)") }
        var response = try EdgeResponse.parseHead(last)
        response.body = (try? FileIO.read(dir + "/body")) ?? []
        return response
    }
}

// MARK: - Threads for blocking clients

/// Plain threads (not the cooperative pool) for blocking socket clients, joined asynchronously.
final class EdgeThreads: Sendable {
    private let running: Atomic<Int>

    private init(count: Int) { running = Atomic(count) }

    /// Starts `count` threads running `body(index)`.
    static func spawn(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> EdgeThreads {
        let w = EdgeThreads(count: count)
        for i in 0..<count {
            let t = Thread {
                body(i)
                w.running.subtract(1, ordering: .sequentiallyConsistent)
            }
            t.start()
        }
        return w
    }

    /// Waits until every thread finished; false on timeout.
    func join(timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while running.load(ordering: .sequentiallyConsistent) > 0 {
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}

/// A lock-protected value shared with worker threads.
final class EdgeLocked<Value: Sendable>: Sendable {
    private let m: Mutex<Value>
    init(_ value: Value) { m = Mutex(value) }
    @discardableResult
    func with<R: Sendable>(_ body: (inout Value) -> R) -> R { m.withLock { v in body(&v) } }
    var value: Value { m.withLock { $0 } }
}

/// A flag worker threads poll to stop.
final class EdgeStopFlag: Sendable {
    private let flag = Atomic(false)
    func stop() { flag.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { flag.load(ordering: .sequentiallyConsistent) }
}

/// Monotonic seconds, for measuring durations.
func edgeMonotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
