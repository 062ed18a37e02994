import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A socket call that failed, in words ("connection refused", "connect timeout", …).
package struct SocketError: Error, CustomStringConvertible {
    package enum Reason: Sendable { case refused, timedOut, other }
    package var description: String
    package var reason: Reason
    package init(description: String, reason: Reason = .other) {
        self.description = description
        self.reason = reason
    }
}

/// Blocking TCP for the programs' small plain-HTTP requests (`folio sync`'s fast path,
/// `folio-build --notify`), without an event loop.
package enum TCPSocket {
    /// Splits `http://host[:port]` into host and port; nil for anything else.
    package static func endpoint(_ base: String) -> (host: String, port: Int)? {
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

    /// A connected TCP socket, or a thrown failure ("connection refused", "timed out", …).
    /// `cancelled` is asked every 50 ms while the connection is being made.
    package static func connect(
        host: String, port: Int, timeoutMs: Int32, cancelled: () -> Bool = { false }
    ) throws(SocketError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw SocketError(description: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = SocketError(description: "no address")
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            ai = a.pointee.ai_next
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), a.pointee.ai_protocol)
            if fd < 0 { continue }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { return fd }
            if errno == EINPROGRESS {
                if wait(fd, events: POLLOUT, timeoutMs: timeoutMs, cancelled: cancelled) {
                    var err: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                    if err == 0 { return fd }
                    lastError = Self.failure(err)
                } else {
                    lastError = cancelled() ? SocketError(description: "cancelled") : SocketError(description: "connect timeout", reason: .timedOut)
                }
            } else {
                lastError = Self.failure(errno)
            }
            close(fd)
        }
        throw lastError
    }

    private static func failure(_ code: Int32) -> SocketError {
        code == ECONNREFUSED
            ? SocketError(description: "connection refused", reason: .refused) : SocketError(description: String(cString: strerror(code)))
    }

    /// Waits until `fd` is ready for `events`, in slices of at most 50 ms so that `cancelled` is
    /// asked as often; false on timeout or cancellation.
    package static func wait(_ fd: Int32, events: Int32, timeoutMs: Int32, cancelled: () -> Bool) -> Bool {
        var left = Int(timeoutMs)
        while left > 0, !cancelled() {
            var pfd = pollfd(fd: fd, events: Int16(events), revents: 0)
            let slice = min(left, 50)
            let ready = poll(&pfd, 1, Int32(slice))
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return true }  // the next call on fd reports the error
            if ready == 0 { left -= slice }
        }
        return false
    }

    /// Writes all of `out` (retrying on EINTR); no SIGPIPE. On a non-blocking socket whose
    /// send buffer is full, waits until it takes more, at most `timeoutMs` each time.
    package static func sendAll(
        _ fd: Int32, _ out: [UInt8], timeoutMs: Int32 = 30_000, cancelled: () -> Bool = { false }
    ) throws(SocketError) {
        var sent = 0
        while sent < out.count {
            let n = out.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, out.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    guard wait(fd, events: Int32(POLLOUT), timeoutMs: timeoutMs, cancelled: cancelled) else {
                        throw SocketError(description: cancelled() ? "cancelled" : "timed out sending")
                    }
                    continue
                }
                throw SocketError(description: String(cString: strerror(errno)))
            }
            sent += n
        }
    }
}
