import FolioCore
import Foundation
import NIOHTTP1

/// One plain-HTTP GET on one blocking socket, for the request every sync starts with (the
/// conditional GET of the manifest). A no-op sync is that request alone, and this path avoids
/// starting an event loop group and a connection pool for it: measured, it is most of the
/// difference between `folio sync` and `curl` for a 304. https edges use AsyncHTTPClient.
enum QuickHTTP {
    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var headBytes: Int
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Splits `http://host[:port]` into host and port; nil for anything else.
    static func endpoint(_ base: String) -> (host: String, port: Int)? {
        guard base.lowercased().hasPrefix("http://") else { return nil }
        var rest = base.dropFirst(7)
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        var host = String(rest)
        var port = 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") { guard let p = Int(after.dropFirst()) else { return nil }; port = p }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            guard let p = Int(host[host.index(after: colon)...]) else { return nil }
            port = p
            host = String(host[..<colon])
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        return (host, port)
    }

    /// GETs `path` from `endpoint`; throws on transport failure or a response it cannot read.
    static func get(_ endpoint: (host: String, port: Int), path: String, headers: [(String, String)], timeoutMs: Int32, maxBody: Int) throws -> Response {
        let (host, port) = endpoint
        let fd = try connect(host: host, port: port, timeoutMs: timeoutMs)
        defer { close(fd) }
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
        request += "User-Agent: folio/\(folioVersion)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let out = Array(request.utf8)
        var sent = 0
        while sent < out.count {
            let n = out.withUnsafeBytes { send(fd, $0.baseAddress! + sent, out.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: String(cString: strerror(errno)))
            }
            sent += n
        }
        // Read until the server closes (we asked it to) or the body is complete.
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var headEnd: Int?
        var contentLength: Int?
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, timeoutMs)
            if ready == 0 { throw Failure(description: "timed out") }
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure(description: String(cString: strerror(errno)))
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            data.append(contentsOf: chunk[0..<n])
            if headEnd == nil, let end = find(data, [13, 10, 13, 10]) {
                headEnd = end + 4
                guard let parsed = parseHead(Array(data[0..<end])) else { throw Failure(description: "malformed response head") }
                if parsed.headers.first(name: "transfer-encoding") != nil { throw Failure(description: "unexpected chunked response") }
                contentLength = parsed.headers.first(name: "content-length").flatMap { Int($0) }
                if parsed.status == 304 || parsed.status == 204 { contentLength = 0 }
            }
            if let h = headEnd {
                if data.count - h > maxBody { throw Failure(description: "response body larger than \(maxBody) bytes") }
                if let cl = contentLength, data.count - h >= cl { break }
            } else if data.count > 65536 {
                throw Failure(description: "response head larger than 64 KiB")
            }
        }
        guard let h = headEnd, let parsed = parseHead(Array(data[0..<(h - 4)])) else {
            throw Failure(description: "connection closed before a complete response")
        }
        var body = Array(data[h...])
        if let cl = contentLength {
            guard body.count >= cl else { throw Failure(description: "response body truncated") }
            body = Array(body[0..<cl])
        }
        return Response(status: parsed.status, headers: parsed.headers, body: body, headBytes: h)
    }

    private static func find(_ data: [UInt8], _ needle: [UInt8]) -> Int? {
        guard data.count >= needle.count else { return nil }
        for i in 0...(data.count - needle.count) where data[i] == needle[0] && Array(data[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }

    private static func parseHead(_ bytes: [UInt8]) -> (status: Int, headers: HTTPHeaders)? {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else { return nil }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers.add(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return (status, headers)
    }

    /// A connected TCP socket, or a thrown failure ("connection refused", "timed out", …).
    private static func connect(host: String, port: Int, timeoutMs: Int32) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            ai = a.pointee.ai_next
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), a.pointee.ai_protocol)
            if fd < 0 { continue }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { return fd }
            if errno == EINPROGRESS {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&pfd, 1, timeoutMs) == 1 {
                    var err: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                    if err == 0 { return fd }
                    lastError = err == ECONNREFUSED ? "connection refused" : String(cString: strerror(err))
                } else {
                    lastError = "connect timeout"
                }
            } else {
                lastError = errno == ECONNREFUSED ? "connection refused" : String(cString: strerror(errno))
            }
            close(fd)
        }
        throw Failure(description: lastError)
    }
}
