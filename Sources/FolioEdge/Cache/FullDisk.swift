import Foundation
import Logging
import Synchronization

/// A cache directory whose file system said it is full (ENOSPC, EDQUOT): the tier stops writing
/// entries there and keeps serving from memory and from the files it has, says so once in its
/// log (and in `folio_edge_cache_disk_full`), and tries a write again every `retry`; the first
/// write that succeeds is logged too.
final class FullDisk: Sendable {
    private let since = Mutex<ContinuousClock.Instant?>(nil)
    private let directory: String
    private let logger: Logger?
    let retry: Duration

    init(directory: String, logger: Logger?, retry: Duration = .seconds(30)) {
        self.directory = directory
        self.logger = logger
        self.retry = retry
    }

    /// Whether writes are paused now (full, and not yet time to try again).
    var isFull: Bool {
        since.withLock { at in at.map { ContinuousClock.now - $0 < retry } ?? false }
    }

    /// A write failed for lack of space.
    func refused() {
        let first = since.withLock { at in
            defer { at = .now }
            return at == nil
        }
        if first {
            logger?.error(
                "the cache directory is full: entries are no longer written to it; serving from memory and the files it holds",
                metadata: ["directory": "\(directory)", "retry_s": "\(retry.components.seconds)"])
        }
    }

    /// A write succeeded.
    func wrote() {
        let wasFull = since.withLock { at in
            defer { at = nil }
            return at != nil
        }
        if wasFull { logger?.notice("the cache directory takes entries again", metadata: ["directory": "\(directory)"]) }
    }
}
