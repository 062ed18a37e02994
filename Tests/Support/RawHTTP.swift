import FolioSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - HTTP responses

package struct EdgeHeaderField: Sendable, Equatable {
    package var name: String
    package var value: String
}

/// One HTTP response as received.
package struct EdgeResponse: Sendable {
    package var version: String
    package var status: Int
    package var reason: String
    package var headers: [EdgeHeaderField]
    package var body: [UInt8]

    /// The first value of a header (case-insensitive name).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of a header (case-insensitive name).
    package func values(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    package func has(_ name: String) -> Bool { header(name) != nil }

    package var text: String { String(decoding: body, as: UTF8.self) }

    /// Headers as lowercase name → value, minus the ones that may differ between two
    /// responses for the same representation (Date).
    package var stableHeaders: [String: String] {
        var d: [String: String] = [:]
        for h in headers where h.name.lowercased() != "date" { d[h.name.lowercased()] = h.value }
        return d
    }

    /// Parses a head (status line and fields, without the final blank line).
    package static func parseHead(_ head: String) throws -> EdgeResponse {
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

package enum RawHTTPError: Error, CustomStringConvertible {
    case system(String, Int32)
    /// The server closed the connection; `received` bytes of the response had arrived.
    case closed(received: Int)
    case timedOut
    case malformed(String)

    package var description: String {
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
package func edgeConnectLoopback(port: Int, timeout: Double = 5) throws -> Int32 {
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
    package let edgeSendFlags = Int32(MSG_NOSIGNAL)
#else
    package let edgeSendFlags: Int32 = 0
#endif

/// close(2), callable where a method named `close` hides it.
package func edgeCloseDescriptor(_ fd: Int32) { _ = close(fd) }

/// send(2) without SIGPIPE; returns the byte count or -1 with errno set.
package func edgeSendBytes(_ fd: Int32, _ p: UnsafeRawPointer, _ count: Int) -> Int { send(fd, p, count, edgeSendFlags) }

/// A raw HTTP/1.1 client connection: writes exactly the bytes given and parses responses
/// (body by Content-Length; none for HEAD, 1xx, 204 and 304; else until close).
package final class RawHTTPConnection {
    package let fd: Int32
    private var pending: [UInt8] = []
    private var isClosed = false
    /// Over a TLS stack (`TestStack`) to a TLS edge: no socket; `request` goes through curl
    /// with the stack's protocol, and raw bytes cannot be sent.
    private let stackPort: Int?

    package init(port: Int, timeout: Double = 5) throws {
        if TestStack.current.isTLS(port: port) {
            stackPort = port
            fd = -1
            isClosed = true
            return
        }
        stackPort = nil
        fd = try edgeConnectLoopback(port: port, timeout: timeout)
    }

    deinit { close() }

    package func close() {
        guard !isClosed else { return }
        isClosed = true
        edgeCloseDescriptor(fd)
    }

    package func send(_ bytes: [UInt8]) throws {
        if stackPort != nil { throw HarnessError("raw HTTP/1.1 bytes need FOLIO_TEST_STACK=http1: mark the test .http1Only") }
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

    package func send(_ text: String) throws { try send(Array(text.utf8)) }

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
    package func readResponse(method: String = "GET") throws -> EdgeResponse {
        if stackPort != nil { throw HarnessError("raw HTTP/1.1 reads need FOLIO_TEST_STACK=http1: mark the test .http1Only") }
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
    package func readResponses(_ methods: [String]) throws -> [EdgeResponse] {
        try methods.map { try readResponse(method: $0) }
    }

    /// Sends one request and reads its response.
    package func request(_ method: String = "GET", _ target: String, headers: [(String, String)] = []) throws -> EdgeResponse {
        if let stackPort { return try TestStack.current.fetch(port: stackPort, method, target, headers: headers) }
        try send(Self.head(method, target, headers: headers))
        return try readResponse(method: method)
    }

    /// Waits for the server to close the connection: true at end of stream or reset within
    /// `timeout`. Bytes that arrive meanwhile are kept in `received`.
    package func waitForClose(timeout: Double) -> Bool {
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
    package var received: [UInt8] { pending }

    /// A request head: request line, `Host: 127.0.0.1` (unless `host` is false), the headers, CRLF.
    package static func head(_ method: String, _ target: String, headers: [(String, String)] = [], version: String = "HTTP/1.1", host: Bool = true) -> String {
        var s = "\(method) \(target) \(version)\r\n"
        if host { s += "Host: 127.0.0.1\r\n" }
        for (name, value) in headers { s += "\(name): \(value)\r\n" }
        return s + "\r\n"
    }

    /// One request on a fresh connection (through curl over TLS and HTTP/2 stacks, see `TestStack`).
    package static func fetch(port: Int, _ method: String = "GET", _ target: String, headers: [(String, String)] = []) throws -> EdgeResponse {
        let c = try RawHTTPConnection(port: port)
        defer { c.close() }
        return try c.request(method, target, headers: headers)
    }

    package static func fetch(port: Int, _ target: String, headers: [(String, String)] = []) throws -> EdgeResponse {
        try fetch(port: port, "GET", target, headers: headers)
    }
}

// MARK: - curl, a real HTTP client

package enum EdgeCurl {
    package static let path: String = {
        for p in ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"] where FileManager.default.isExecutableFile(atPath: p) {
            return p
        }
        return "curl"
    }()

    /// `curl -s -D - -o FILE -H … URL`: the status, headers and raw body bytes (no decoding).
    /// Over a TLS test stack, an https URL is fetched with the stack's CA and protocol.
    package static func get(_ url: String, headers: [String] = []) throws -> EdgeResponse {
        try request(url, options: stackOptions(url), headers: headers).response
    }

    /// curl's options for an https URL over a TLS test stack: the stack's CA and protocol.
    package static func stackOptions(_ url: String) -> [String] {
        let stack = TestStack.current.isTLS && url.hasPrefix("https:")
        return stack ? ["--cacert", TestStack.pki.pki.ca, TestStack.current == .h2 ? "--http2" : "--http1.1"] : []
    }

    /// One curl run: `options` (protocol, method, `-w`), the headers, the URL. The response is
    /// the last head curl received (interim ones come first) and the raw body bytes, unless
    /// `readBody` is false (with `-I` curl writes the head there); `printed` is curl's stdout.
    package static func request(
        _ url: String, options: [String], headers: [String], readBody: Bool = true
    ) throws -> (response: EdgeResponse, printed: String) {
        let dir = Harness.tempDir("curl")
        defer { Harness.cleanup(dir) }
        var args = ["-s", "-S", "--max-time", "10", "-D", dir + "/head", "-o", dir + "/body"] + options
        for h in headers { args += ["-H", h] }
        args.append(url)
        let r = try Harness.run(path, args)
        guard r.status == 0 else { throw HarnessError("curl \(url) failed (\(r.status)): \(r.stderr)") }
        let heads = String(decoding: (try? FileIO.read(dir + "/head")) ?? [], as: UTF8.self).components(separatedBy: "\r\n\r\n")
        guard let last = heads.last(where: { $0.hasPrefix("HTTP/") }) else { throw HarnessError("curl printed no head for \(url)") }
        var response = try EdgeResponse.parseHead(last)
        if readBody { response.body = (try? FileIO.read(dir + "/body")) ?? [] }
        return (response, r.stdout)
    }
}

// MARK: - Threads for blocking clients

/// Plain threads (not the cooperative pool) for blocking socket clients, joined asynchronously.
package final class EdgeThreads: Sendable {
    private let running: Atomic<Int>

    private init(count: Int) { running = Atomic(count) }

    /// Starts `count` threads running `body(index)`.
    package static func spawn(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> EdgeThreads {
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
    package func join(timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while running.load(ordering: .sequentiallyConsistent) > 0 {
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}

/// A lock-protected value shared with worker threads.
package final class EdgeLocked<Value: Sendable>: Sendable {
    private let m: Mutex<Value>
    package init(_ value: Value) { m = Mutex(value) }
    @discardableResult
    package func with<R: Sendable>(_ body: (inout Value) -> R) -> R { m.withLock { v in body(&v) } }
    package var value: Value { m.withLock { $0 } }
}

/// A flag worker threads poll to stop.
package final class EdgeStopFlag: Sendable {
    package init() {}
    private let flag = Atomic(false)
    package func stop() { flag.store(true, ordering: .sequentiallyConsistent) }
    package var isSet: Bool { flag.load(ordering: .sequentiallyConsistent) }
}

/// Monotonic seconds, for measuring durations.
package func edgeMonotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
