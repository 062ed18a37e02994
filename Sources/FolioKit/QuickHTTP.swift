import FolioHTTPCore
import FolioPublished
import FolioSupport
import Foundation
import NIOHTTP1

/// One plain-HTTP GET on one blocking socket, for the request every sync starts with (the
/// conditional GET of the manifest). A no-op sync is that request alone, and this path avoids
/// starting an event loop group and a connection pool for it: measured, it is most of the
/// difference between `folio sync` and `curl` for a 304. https edges use AsyncHTTPClient.
extension QuickHTTP {
    /// GETs `path` from `endpoint` on a connection of its own; throws on transport failure or a
    /// response it cannot read.
    package static func get(_ endpoint: (host: String, port: Int), path: String, headers: [(String, String)], timeoutMs: Int32, maxBody: Int) throws -> Response {
        let connection = Connection(endpoint, timeoutMs: timeoutMs)
        return try connection.get(path, headers: headers, maxBody: maxBody, keepAlive: false)
    }

    /// A keep-alive connection for a series of GETs, one at a time (no pipelining). A socket the
    /// server closed while idle is replaced once, before anything of the response was read.
    package final class Connection {
        private let endpoint: (host: String, port: Int)
        private let timeoutMs: Int32
        private var fd: Int32 = -1
        private var answered = 0

        package init(_ endpoint: (host: String, port: Int), timeoutMs: Int32) {
            self.endpoint = endpoint
            self.timeoutMs = timeoutMs
        }

        deinit { if fd >= 0 { close(fd) } }

        package func get(_ path: String, headers: [(String, String)], maxBody: Int, keepAlive: Bool = true) throws -> Response {
            let (host, port) = endpoint
            var request = "GET \(path) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
            request += "User-Agent: folio/\(folioVersion)\r\n" + (keepAlive ? "" : "Connection: close\r\n")
            for (name, value) in headers { request += "\(name): \(value)\r\n" }
            request += "\r\n"
            let bytes = Array(request.utf8)
            while true {
                if fd < 0 {
                    fd = try QuickHTTP.connect(host: host, port: port, timeoutMs: timeoutMs)
                    answered = 0
                }
                let reused = answered > 0
                do {
                    try QuickHTTP.send(fd, bytes)
                    let (response, reusable) = try QuickHTTP.readResponse(fd, timeoutMs: timeoutMs, maxBody: maxBody)
                    answered += 1
                    if !reusable || !keepAlive { drop() }
                    return response
                } catch let failure as Failure {
                    drop()
                    // The server may close an idle keep-alive connection at any time: a reused
                    // socket that fails before the first byte of the answer is replaced once.
                    if reused && failure.beforeResponse { continue }
                    throw failure
                }
            }
        }

        private func drop() {
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    private static func send(_ fd: Int32, _ out: [UInt8]) throws {
        do { try TCPSocket.sendAll(fd, out) } catch { throw Failure(description: error.description, beforeResponse: true) }
    }

    /// Reads one response: framed by Content-Length (none for 204 and 304), else by the server
    /// closing the connection. Returns it and whether the connection can carry another request.
    private static func readResponse(_ fd: Int32, timeoutMs: Int32, maxBody: Int) throws -> (Response, reusable: Bool) {
        var reader = ResponseReader(maxBody: maxBody)
        var chunk = [UInt8](repeating: 0, count: 65536)
        var closed = false
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
                throw Failure(description: String(cString: strerror(errno)), beforeResponse: reader.data.isEmpty)
            }
            if n == 0 {
                closed = true
                break
            }
            if try reader.append(chunk[0..<n]) { break }
        }
        return try reader.finish(closed: closed)
    }

    /// A connected TCP socket, or a thrown failure ("connection refused", "timed out", …).
    fileprivate static func connect(host: String, port: Int, timeoutMs: Int32) throws -> Int32 {
        do { return try TCPSocket.connect(host: host, port: port, timeoutMs: timeoutMs) } catch { throw Failure(description: error.description) }
    }
}
