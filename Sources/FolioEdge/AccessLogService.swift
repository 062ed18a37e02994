import Logging
import ServiceLifecycle
import UnixSignals

/// The access log's upkeep while the edge runs: the buffered lines written once a second, and
/// the file reopened on SIGUSR1 (logrotate's `postrotate`, as for nginx). SIGUSR1 is taken even
/// without a log file, so that it never ends the process.
struct AccessLogService: Service {
    let writer: AccessLogWriter?
    let logger: Logger

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sigusr1).cancelOnGracefulShutdown() {
                    reopen()
                }
            }
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    try? await Task.sleep(for: .seconds(1))
                    writer?.flush()
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        writer?.flush()
    }

    private func reopen() {
        guard let writer else { return }
        if let error = writer.reopen() {
            logger.error("SIGUSR1: \(error); still writing to the file open before")
        } else if let path = writer.path {
            logger.info("SIGUSR1: reopened the access log \(path)")
        }
    }
}
