import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Listening sockets handed over by systemd's socket activation (sd_listen_fds(3)), or by any
/// parent that holds them the same way: `$LISTEN_FDS` descriptors from 3 on, for the process
/// `$LISTEN_PID`, named in order by `$LISTEN_FDNAMES` (`https`, `http`, `admin`). The sockets
/// outlive the process, so a restart or an upgrade refuses no connection: the kernel queues new
/// ones until the next process accepts them.
package struct InheritedSockets: Sendable {
    /// The descriptors by name, in the order they were passed.
    package private(set) var sockets: [(name: String, descriptor: CInt)]

    package init(sockets: [(name: String, descriptor: CInt)]) { self.sockets = sockets }

    /// The sockets passed to this process, nil when none were. Each is marked close-on-exec, and
    /// the variables are removed so that a child does not take them for its own.
    package static func fromEnvironment() -> InheritedSockets? {
        let environment = ProcessInfo.processInfo.environment
        defer { for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) } }
        guard let pid = environment["LISTEN_PID"], pid == String(getpid()), let count = environment["LISTEN_FDS"].flatMap(Int.init), count > 0
        else { return nil }
        let names = environment["LISTEN_FDNAMES"]?.split(separator: ":", omittingEmptySubsequences: false).map(String.init) ?? []
        var sockets: [(String, CInt)] = []
        for i in 0..<count {
            let fd = CInt(3 + i)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            sockets.append((i < names.count ? names[i] : "unknown", fd))
        }
        return InheritedSockets(sockets: sockets)
    }

    /// Takes the socket named `name`; with a single socket of another name, `fallback` takes
    /// that one (a socket unit that names none serves the main listener).
    package mutating func take(_ name: String, fallback: Bool = false) -> CInt? {
        if let i = sockets.firstIndex(where: { $0.name == name }) { return sockets.remove(at: i).descriptor }
        guard fallback, sockets.count == 1, !Self.knownNames.contains(sockets[0].name) else { return nil }
        return sockets.removeFirst().descriptor
    }

    static let knownNames: Set<String> = ["https", "http", "admin"]
}
