import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The edge's log: swift-log's stream format on stderr, or, when stderr is the journal
/// (`$JOURNAL_STREAM` names it, systemd.exec(5)), lines without a timestamp of their own and
/// with a syslog priority prefix (`<6>`) that journald reads as the line's level. One level for
/// every logger, changed by a reload.
package struct EdgeLogHandler: LogHandler {
    /// The least severe level written, for every logger at once (a reload sets it).
    package static let level = Atomic<UInt8>(EdgeLogHandler.code(.info))

    private var stream: StreamLogHandler
    private let label: String
    private let journal: Bool
    package var metadata: Logger.Metadata = [:]

    package init(label: String, journal: Bool) {
        self.label = label
        self.journal = journal
        stream = StreamLogHandler.standardError(label: label)
    }

    /// Sets swift-log's handler for the process: the journal's form when stderr is the journal.
    package static func bootstrap(level: Logger.Level) {
        setLevel(level)
        let journal = stderrIsJournal()
        LoggingSystem.bootstrap { EdgeLogHandler(label: $0, journal: journal) }
    }

    package static func setLevel(_ level: Logger.Level) { Self.level.store(code(level), ordering: .relaxed) }

    package var logLevel: Logger.Level {
        get { Logger.Level.allCases[Int(Self.level.load(ordering: .relaxed))] }
        set { Self.setLevel(newValue) }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        guard journal else {
            var stream = self.stream
            stream.metadata = metadata
            return stream.log(event: event)
        }
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = all.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let text = "<\(Self.priority(event.level))>\(label): \(event.message)\(fields)\n"
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// syslog's priority for a level (sd-daemon(3)).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    static func code(_ level: Logger.Level) -> UInt8 { UInt8(Logger.Level.allCases.firstIndex(of: level) ?? 2) }

    /// Whether `$JOURNAL_STREAM` (`DEVICE:INODE`) is the file stderr is.
    static func stderrIsJournal(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
