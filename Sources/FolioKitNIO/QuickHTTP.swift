import FolioHTTPCore
import FolioSupport
import FolioKitCore
import FolioToolSupport
import Foundation
import NIOHTTP1
import Synchronization

/// A plain-http edge's address: host, port and the path prefix of its base URL.
package struct PlainEndpoint: Sendable, Equatable {
    package var host: String
    package var port: Int
    /// The base URL's path without its trailing slash (`""` or `/content/qa`).
    package var prefix: String

    /// Nil for anything but `http://host[:port][/prefix]`.
    package init?(_ base: String) {
        guard let (host, port) = TCPSocket.endpoint(base) else { return nil }
        self.host = host
        self.port = port
        let rest = base.dropFirst(7)
        var path = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        prefix = path
    }

    /// The `Host` field: the host (bracketed when IPv6) and port.
    var hostField: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

/// Plain-HTTP requests on blocking sockets, for the sync's GETs to http:// edges and a deploy's
/// requests to an edge on loopback: measured, this path costs a fraction of an event loop and a
/// connection pool per request, which was most of a no-op sync's time against `curl`. The sync
/// runs it on threads of its own (`SocketTransport`), never on Swift's cooperative pool.
extension QuickHTTP {
    /// A keep-alive connection for a series of requests, one at a time (no pipelining). A socket the
    /// server closed while idle is replaced once, before anything of the response was read.
    package final class Connection {
        private let endpoint: PlainEndpoint
        private let timeoutMs: Int32
        private let fields: String
        private let cancel: CancelFlag
        private var fd: Int32 = -1
        private var answered = 0

        /// `fields`: header lines (each ending in CRLF) every request carries.
        package init(_ endpoint: PlainEndpoint, timeoutMs: Int32, fields: String, cancel: CancelFlag) {
            self.endpoint = endpoint
            self.timeoutMs = timeoutMs
            self.fields = fields
            self.cancel = cancel
        }

        deinit { if fd >= 0 { close(fd) } }

        package func get(_ path: String, headers: [(String, String)], maxBody: Int, keepAlive: Bool = true) throws -> Response {
            try request("GET", path, headers: headers, maxBody: maxBody, keepAlive: keepAlive)
        }

        /// One request with `body` (sent with its `Content-Length` when the method is not GET).
        package func request(
            _ method: String, _ path: String, headers: [(String, String)], body: [UInt8] = [], maxBody: Int, keepAlive: Bool = true
        ) throws -> Response {
            var request = "\(method) \(endpoint.prefix)\(path) HTTP/1.1\r\nHost: \(endpoint.hostField)\r\n" + fields
            if !keepAlive { request += "Connection: close\r\n" }
            for (name, value) in headers { request += "\(name): \(value)\r\n" }
            if method != "GET" { request += "Content-Length: \(body.count)\r\n" }
            request += "\r\n"
            let bytes = Array(request.utf8) + body
            while true {
                if fd < 0 {
                    fd = try connect()
                    answered = 0
                }
                let reused = answered > 0
                do {
                    try send(bytes)
                    let (response, reusable) = try readResponse(maxBody: maxBody)
                    answered += 1
                    if !reusable || !keepAlive { drop() }
                    return response
                } catch let failure as Failure {
                    drop()
                    // The server may close an idle keep-alive connection at any time: a reused
                    // socket that fails before the first byte of the answer is replaced once.
                    if reused && failure.beforeResponse && !cancel.isCancelled { continue }
                    throw failure
                }
            }
        }

        private func drop() {
            if fd >= 0 { close(fd) }
            fd = -1
        }

        private func connect() throws -> Int32 {
            do {
                return try TCPSocket.connect(host: endpoint.host, port: endpoint.port, timeoutMs: timeoutMs) { cancel.isCancelled }
            } catch {
                throw Failure(description: error.description, kind: error.reason == .refused ? .refused : error.reason == .timedOut ? .timedOut : .other)
            }
        }

        /// Reads one response: framed by Content-Length (none for 204 and 304), else by the
        /// server closing the connection. Returns it and whether the connection can carry another.
        private func readResponse(maxBody: Int) throws -> (Response, reusable: Bool) {
            var reader = ResponseReader(maxBody: maxBody)
            var chunk = [UInt8](repeating: 0, count: 65536)
            var closed = false
            while true {
                guard TCPSocket.wait(fd, events: POLLIN, timeoutMs: timeoutMs, cancelled: { cancel.isCancelled }) else {
                    throw cancel.isCancelled ? Failure(description: "cancelled") : Failure(description: "timed out", kind: .timedOut)
                }
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                if n < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
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
    }
}

extension QuickHTTP.Connection {
    fileprivate func send(_ out: [UInt8]) throws {
        do { try TCPSocket.sendAll(fd, out, timeoutMs: timeoutMs) { cancel.isCancelled } } catch {
            throw QuickHTTP.Failure(description: error.description, beforeResponse: true)
        }
    }
}
