import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// systemd's notify protocol (sd_notify(3)) without libsystemd: each state is one datagram to
/// the AF_UNIX socket named by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace).
/// With no such variable every call does nothing.
package struct SystemdNotifier: Sendable {
    /// The socket's address bytes (a leading NUL for the abstract namespace); nil: not under systemd.
    private let address: [UInt8]?

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], path.hasPrefix("/") || path.hasPrefix("@"), path.utf8.count < 108 else {
            address = nil
            return
        }
        var bytes = Array(path.utf8)
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        address = bytes
    }

    /// Whether a notify socket was given.
    package var isEnabled: Bool { address != nil }

    /// Sends `state` (`READY=1`, `STATUS=…`, several lines at once); false when it could not.
    @discardableResult
    package func send(_ state: String) -> Bool {
        guard let address else { return false }
        #if canImport(Glibc)
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var unix = sockaddr_un()
        unix.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &unix.sun_path) { path in
            for (i, byte) in address.enumerated() { path[i] = byte }
        }
        let length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + address.count)
        let sent = Array(state.utf8).withUnsafeBytes { bytes in
            withUnsafePointer(to: &unix) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes.baseAddress, bytes.count, 0, $0, length) }
            }
        }
        return sent == state.utf8.count
    }

    /// `READY=1` with a status line.
    package func ready(status: String) { send("READY=1\nSTATUS=\(status)") }

    /// `RELOADING=1` with the monotonic clock's time, as `Type=notify-reload` expects.
    package func reloading() { send("RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())") }

    /// `STOPPING=1`.
    package func stopping() { send("STOPPING=1\nSTATUS=draining connections") }

    /// CLOCK_MONOTONIC in microseconds.
    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }

    /// With `$WATCHDOG_USEC` (for this process, when `$WATCHDOG_PID` is set): how often to send
    /// `WATCHDOG=1`, half the timeout as sd_watchdog_enabled(3) advises; nil without a watchdog.
    package static func watchdogInterval(environment: [String: String] = ProcessInfo.processInfo.environment) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], pid != String(getpid()) { return nil }
        return .microseconds(usec / 2)
    }
}
