import Foundation
import Logging

/// The command line's logger: what FolioKit logs at notice and above, as `folio: …` lines on
/// standard error (the library itself never prints).
enum CLILog {
    static let logger: Logger = {
        var logger = Logger(label: "folio", factory: { _ in Handler() })
        logger.logLevel = .notice
        return logger
    }()

    struct Handler: LogHandler {
        var logLevel: Logger.Level = .notice
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            FileHandle.standardError.write(Data("folio: \(event.message)\n".utf8))
        }
    }
}
