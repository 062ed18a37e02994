import FolioSupport
import FolioKitCore
import FolioToolSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// After a failed TLS handshake: asks the same host and port in plain HTTP, to tell an
/// `https://` URL given for a cleartext edge (a configuration mistake) from a TLS failure.
package enum PlainHTTPProbe {
    /// The error for an https `base` whose edge answered a plain `HEAD /` with `HTTP/…`, else nil.
    package static func mistake(base: String) async -> TransportError? {
        guard let url = URL(string: base), url.scheme?.lowercased() == "https", let host = url.host else { return nil }
        let port = url.port ?? 443
        let answered = (try? await Blocking.run { cancel in answersPlainHTTP(host: host, port: port, cancel: cancel) }) ?? false
        guard answered else { return nil }
        let hostPort = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        return TransportError(.plainHTTP, "the edge at \(hostPort) answered plain HTTP, not TLS; use http://\(hostPort)\(url.path == "/" ? "" : url.path)")
    }

    /// Whether a `HEAD /` sent in cleartext is answered with a status line (`HTTP/`), within 2 s.
    static func answersPlainHTTP(host: String, port: Int, cancel: CancelFlag) -> Bool {
        guard let fd = try? TCPSocket.connect(host: host, port: port, timeoutMs: 2000, cancelled: { cancel.isCancelled }) else { return false }
        defer { close(fd) }
        let hostField = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard (try? TCPSocket.sendAll(fd, Array("HEAD / HTTP/1.1\r\nHost: \(hostField)\r\nConnection: close\r\n\r\n".utf8))) != nil else { return false }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64)
        while received.count < 5, TCPSocket.wait(fd, events: POLLIN, timeoutMs: 2000, cancelled: { cancel.isCancelled }) {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n <= 0 { break }
            received += chunk[0..<n]
        }
        return received.starts(with: Array("HTTP/".utf8))
    }
}
