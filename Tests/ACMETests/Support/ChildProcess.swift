import FolioTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A long-running program the test starts (pebble, pebble-challtestsrv), its output in a log
/// file; stopped by its PID.
final class ChildProcess: @unchecked Sendable {
    let process: Process
    let logPath: String
    var pid: pid_t { process.processIdentifier }

    private init(process: Process, logPath: String) {
        self.process = process
        self.logPath = logPath
    }

    static func start(_ program: String, _ args: [String], environment: [String: String] = [:], logPath: String) throws -> ChildProcess {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let log = FileHandle(forWritingAtPath: logPath) else { throw HarnessError("cannot open \(logPath)") }
        defer { try? log.close() }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        p.standardOutput = log
        p.standardError = log
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return ChildProcess(process: p, logPath: logPath)
    }

    var isRunning: Bool { process.isRunning }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGKILL to our child's PID, then reaped; safe to call twice.
    func stop() {
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitForExit()
    }

    /// Waits until 127.0.0.1:`port` accepts a connection; false if the process exits first or
    /// `timeout` passes.
    func waitForPort(_ port: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, process.isRunning {
            if let fd = try? edgeConnectLoopback(port: port, timeout: 1) {
                edgeCloseDescriptor(fd)
                return true
            }
            usleep(20_000)
        }
        return false
    }
}

/// Loopback ports that were free a moment ago: bound to port 0, read, closed. Another process
/// may take one before the test's program binds it: the callers retry with new ports then.
enum FreePort {
    /// `count` distinct ports, each free for TCP and, with `udp`, for UDP too.
    static func take(_ count: Int, udp: Bool = false) throws -> [Int] {
        var ports: [Int] = []
        var tries = 0
        while ports.count < count {
            tries += 1
            guard tries < 100 else { throw HarnessError("found no free loopback port") }
            let port = try bound(type: SOCK_STREAM, port: 0)
            if ports.contains(port) { continue }
            if udp, (try? bound(type: SOCK_DGRAM, port: port)) == nil { continue }
            ports.append(port)
        }
        return ports
    }

    /// Binds a socket of `type` to 127.0.0.1:`port`, closes it, and returns the port it had.
    private static func bound(type: __socket_type, port: Int) throws -> Int {
        let fd = socket(AF_INET, Int32(type.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw HarnessError("bind 127.0.0.1:\(port): errno \(errno)") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
