import FolioSupport
import FolioToolSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `folio-build --notify URL…`: after a publish, tells each cache tier (`folio-edge --origin`)
/// that a new version exists, with `POST /.folio/notify`, so it revalidates the manifest now
/// rather than after its max-age. Plain http; a failure is reported, never fatal: the publish
/// has happened, and the tier finds the new version by itself when its copy goes stale.
package enum EdgeNotifier {
    /// The edge's answer: nil when it accepted (2xx), else why not.
    package static func notify(_ url: String, timeoutMs: Int32 = 5000) -> String? {
        guard let (host, port) = TCPSocket.endpoint(url) else { return "not an http:// URL" }
        let fd: Int32
        do { fd = try TCPSocket.connect(host: host, port: port, timeoutMs: timeoutMs) } catch { return error.description }
        defer { close(fd) }
        let hostField = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let request = "POST /.folio/notify HTTP/1.1\r\nHost: \(hostField)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        do { try TCPSocket.sendAll(fd, Array(request.utf8)) } catch { return error.description }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !received.contains(10), received.count < 4096 {
            guard TCPSocket.wait(fd, events: POLLIN, timeoutMs: timeoutMs, cancelled: { false }) else { return "timed out" }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        let statusLine = String(decoding: received.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            return statusLine.isEmpty ? "no answer" : "not an HTTP answer: \(statusLine.prefix(80))"
        }
        return (200..<300).contains(status) ? nil : "answered \(statusLine)"
    }
}
