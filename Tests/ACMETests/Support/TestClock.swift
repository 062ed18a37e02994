import FolioACME
import Foundation
import Logging
import Synchronization

/// A clock the test moves: the real time plus an offset the test sets. In `instant` mode a
/// sleep moves the offset to its deadline and returns at once (a backoff of hours takes no
/// time); otherwise it waits, in 10 ms steps, until the offset or the real time reach it.
/// Either way it records each wait it was asked for, in seconds.
final class TestClock: ACMEClock {
    let instant: Bool
    private let offset = Mutex<Double>(0)
    private let waits = Mutex<[Double]>([])

    init(instant: Bool = false) { self.instant = instant }

    func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    /// Moves the clock to `date` (forward or back).
    func set(_ date: Date) { offset.withLock { $0 = date.timeIntervalSinceNow } }

    func reset() { offset.withLock { $0 = 0 } }

    var requestedWaits: [Double] { waits.withLock { $0 } }

    func sleep(until deadline: Date) async throws {
        waits.withLock { $0.append(deadline.timeIntervalSince(now())) }
        if instant {
            try Task.checkCancellation()
            if now() < deadline { set(deadline) }
            await Task.yield()
            return
        }
        while now() < deadline { try await Task.sleep(for: .milliseconds(10)) }
    }
}

/// Log messages, kept for the test to read.
final class LogSink: Sendable {
    private let lines = Mutex<[String]>([])

    var messages: [String] { lines.withLock { $0 } }

    var logger: Logger {
        Logger(label: "folio.acme.test") { _ in Handler(sink: self) }
    }

    struct Handler: LogHandler {
        let sink: LogSink
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            sink.lines.withLock { $0.append("\(event.level): \(event.message)") }
        }
    }
}

/// Every file in a state directory: its bytes and permission bits, to compare before and after.
struct StateSnapshot: Equatable, CustomStringConvertible {
    var files: [String: [UInt8]] = [:]
    var modes: [String: Int] = [:]

    init(_ dir: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            let path = dir + "/" + name
            files[name] = FileManager.default.contents(atPath: path).map { [UInt8]($0) }
            modes[name] = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
        }
    }

    var description: String { modes.keys.sorted().map { "\($0) \(String(modes[$0] ?? 0, radix: 8)) \(files[$0]?.count ?? 0) bytes" }.joined(separator: ", ") }
}

/// Values a callback hands over, for the test to read.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    /// Appends `value`; returns how many there are now.
    @discardableResult
    func append(_ value: Value) -> Int {
        values.withLock {
            $0.append(value)
            return $0.count
        }
    }

    var all: [Value] { values.withLock { $0 } }
}
