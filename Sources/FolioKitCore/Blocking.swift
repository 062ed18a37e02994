import Foundation

/// Set when the task that waits for blocking work is cancelled; the work's loops (a socket's,
/// a retry's wait) ask it at least every 50 ms.
package final class CancelFlag: Sendable {
    private let flag = Locked(false)
    package init() {}
    package func cancel() { flag.withLock { $0 = true } }
    package var isCancelled: Bool { flag.withLock { $0 } }
}

/// Runs blocking work on a thread of ``BlockingThreads`` and awaits it, so that no thread of
/// Swift's cooperative pool (or of Dispatch's) waits on a socket or a disk. Cancelling the awaiting task sets the work's
/// ``CancelFlag``; the socket loops see it within 50 ms. An error the work throws once cancelled
/// is a `CancellationError`; a value it returns is returned (it may own a resource, such as a
/// lock, that the caller must release).
package enum Blocking {
    package static func run<T: Sendable>(_ work: @escaping @Sendable (CancelFlag) throws -> T) async throws -> T {
        let flag = CancelFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                BlockingThreads.shared.run {
                    continuation.resume(with: Result { try work(flag) }.mapError { flag.isCancelled ? CancellationError() : $0 })
                }
            }
        } onCancel: {
            flag.cancel()
        }
    }
}

/// Threads for blocking work, kept for the next job once idle: a job never waits for a busy
/// thread (another is started, so work that waits on other work cannot deadlock), and a sync's
/// hundreds of objects reuse a handful of threads instead of starting one each.
package final class BlockingThreads: @unchecked Sendable {
    package static let shared = BlockingThreads()

    package init() {}

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    /// Threads waiting for a job.
    private var waiting = 0
    /// Idle threads past this many end.
    private let keptIdle = 16
    /// Threads started so far.
    package var threadsStarted: Int { condition.withLock { started } }
    /// Threads waiting for a job now.
    package var idleThreads: Int { condition.withLock { waiting } }
    private var started = 0

    /// Runs `job` on an idle thread, else on a new one.
    package func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let wake = waiting >= jobs.count
        if wake { condition.signal() }
        condition.unlock()
        if !wake { start() }
    }

    private func start() {
        condition.withLock { started += 1 }
        let thread = Thread { [self] in work() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Takes jobs until none comes while `keptIdle` threads already wait.
    private func work() {
        while let job = next() { job() }
    }

    private func next() -> (@Sendable () -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty {
            guard waiting < keptIdle else { return nil }
            waiting += 1
            condition.wait()
            waiting -= 1
        }
        return jobs.removeFirst()
    }
}
