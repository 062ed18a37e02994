import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How the access log writes a request (`--access-log-format`).
package enum AccessLogFormat: String, Sendable, CaseIterable {
    /// swift-log's text, as the edge always wrote it.
    case text
    /// NCSA combined, nginx's default (`$remote_addr - $remote_user [$time_local] "$request"
    /// $status $body_bytes_sent "$http_referer" "$http_user_agent"`).
    case combined
    /// One JSON object per line, with fixed field names (`AccessLogRecord.jsonLine`).
    case json
}

/// Where the edge's handlers send each answered request: swift-log in the text format (to
/// stderr through the process's log handler, or to a file), or formatted lines to a file or
/// stderr.
package enum AccessLogSink: Sendable {
    case text(Logger)
    case lines(AccessLogWriter, AccessLogFormat)

    /// The sink and its writer the listener's options ask for: nil with `--no-access-log`; text
    /// to stderr goes through swift-log's own handler (as before), everything else through a
    /// writer of our own. Throws when the file cannot be opened.
    package static func make(_ listener: EdgeListener) throws -> (sink: AccessLogSink?, writer: AccessLogWriter?) {
        guard listener.accessLog else { return (nil, nil) }
        if listener.accessLogFormat == .text, listener.accessLogPath == nil {
            return (.text(Logger(label: "folio.edge.access")), nil)
        }
        let writer = try AccessLogWriter(path: listener.accessLogPath)
        if listener.accessLogFormat == .text {
            return (.text(Logger(label: "folio.edge.access") { AccessLogTextHandler(label: $0, writer: writer) }), writer)
        }
        return (.lines(writer, listener.accessLogFormat), writer)
    }
}

/// Buffered lines to the access log's file (or stderr), shared by every event loop: a line is
/// appended to a buffer under a lock, and the buffer is written when it passes 32 KiB, on
/// `flush()` (once a second, and at exit), and before `reopen()` switches files.
package final class AccessLogWriter: Sendable {
    private struct State {
        var fd: Int32
        var buffer: [UInt8]
    }

    /// The file (nil: stderr).
    package let path: String?
    private let state: Mutex<State>
    private static let flushAt = 32 << 10

    package init(path: String?) throws {
        self.path = path
        let fd = try path.map(Self.open) ?? STDERR_FILENO
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.flushAt + 4096)
        state = Mutex(State(fd: fd, buffer: buffer))
    }

    deinit {
        state.withLock { s in
            Self.drain(&s)
            if s.fd != STDERR_FILENO { close(s.fd) }
        }
    }

    /// Opens `path` for appending (created 0640; the umask applies).
    private static func open(_ path: String) throws -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else {
            throw AccessLogError("cannot open the access log \(path): \(String(cString: strerror(errno))); check that its directory exists and is writable")
        }
        return fd
    }

    /// Appends one line (ending in a newline).
    package func write(_ line: String) {
        state.withLock { s in
            s.buffer.append(contentsOf: line.utf8)
            if s.buffer.count >= Self.flushAt { Self.drain(&s) }
        }
    }

    /// Writes out what is buffered.
    package func flush() {
        state.withLock { Self.drain(&$0) }
    }

    /// After the file was moved (logrotate): writes what is buffered to the old file, then opens
    /// the path anew. On failure the old file is kept and the error returned.
    package func reopen() -> AccessLogError? {
        guard let path else {
            flush()
            return nil
        }
        return state.withLock { s in
            Self.drain(&s)
            do {
                let fd = try Self.open(path)
                close(s.fd)
                s.fd = fd
                return nil
            } catch let error as AccessLogError {
                return error
            } catch {
                return AccessLogError("\(error)")
            }
        }
    }

    /// Writes the whole buffer (retrying short writes and EINTR); a failed write drops the
    /// buffered lines rather than growing without bound.
    private static func drain(_ s: inout State) {
        guard !s.buffer.isEmpty else { return }
        let fd = s.fd
        s.buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
        }
        s.buffer.removeAll(keepingCapacity: true)
    }
}

package struct AccessLogError: Error, CustomStringConvertible {
    package var description: String
    init(_ d: String) { description = d }
}

/// swift-log's text format (as its `StreamLogHandler` writes it) into an `AccessLogWriter`: the
/// text format to a file.
struct AccessLogTextHandler: LogHandler {
    let label: String
    let writer: AccessLogWriter
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    init(label: String, writer: AccessLogWriter) {
        self.label = label
        self.writer = writer
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let (level, source, message) = (event.level, event.source, event.message)
        writer.write("\(AccessLogClock.iso8601(Date())) \(level) \(label) :\(fields) [\(source)] \(message)\n")
    }
}
