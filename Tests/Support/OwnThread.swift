import Foundation

/// A task executor with a thread of its own, for a test whose many `await`s must not each wait
/// for a cooperative thread. In a full `make test` the two cooperative threads (one per core)
/// are held for minutes by other suites' blocking tests, and every resumption of an async test
/// queues behind them: a loop of 900 sequential requests took over ten minutes that way. The
/// thread starts with the first job and ends when its queue is empty after `finish()`.
package final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var running = false
    private var finished = false

    private static let marker = "folio.OwnThreadExecutor"

    /// Whether the caller runs on the thread of an OwnThreadExecutor.
    package static var isCurrent: Bool { Thread.current.threadDictionary[marker] != nil }

    package init() {}

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        defer { condition.unlock() }
        jobs.append(job)
        if running {
            condition.signal()
        } else {
            running = true
            Thread { [self] in
                Thread.current.threadDictionary[Self.marker] = true
                drain()
            }.start()
        }
    }

    /// Lets the thread end once nothing is queued (a job enqueued later starts a new one).
    package func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func drain() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                running = false
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll()
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

extension Harness {
    /// Runs `body` (and its child tasks) preferring a thread of its own to the cooperative
    /// pool (``OwnThreadExecutor``). A task `body` starts with `Task { }` does not inherit the
    /// preference: start it with `Task(executorPreference:)` and the executor `body` is given.
    package static func onOwnThread<T>(_ body: (OwnThreadExecutor) async throws -> T) async throws -> T {
        let executor = OwnThreadExecutor()
        defer { executor.finish() }
        return try await withTaskExecutorPreference(executor) { try await body(executor) }
    }
}
