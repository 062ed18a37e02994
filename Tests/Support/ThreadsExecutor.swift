import Foundation

/// A task executor with threads of its own: two stand in for a small cooperative pool
/// (FolioKitTimingTests), one serves a test whose many `await`s must not each wait for a
/// cooperative thread (``Harness/onOwnThread(_:)``). In a full `make test` the two cooperative
/// threads (one per core) are held for minutes by other suites' blocking tests, and every
/// resumption of an async test queues behind them: a loop of 900 sequential requests took over
/// ten minutes that way. Its threads end at `shutdown()`, once nothing is queued.
package final class ThreadsExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    private static let marker = "folio.ThreadsExecutor"

    /// Whether the caller runs on a thread of a ThreadsExecutor.
    package static var isCurrent: Bool { Thread.current.threadDictionary[marker] != nil }

    package init(threads: Int) {
        for _ in 0..<threads {
            Thread {
                Thread.current.threadDictionary[Self.marker] = true
                self.work()
            }.start()
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Lets the threads end once nothing is queued.
    package func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}

extension Harness {
    /// Runs `body` (and its child tasks) preferring a thread of its own to the cooperative
    /// pool (``ThreadsExecutor``). A task `body` starts with `Task { }` does not inherit the
    /// preference: start it with `Task(executorPreference:)` and the executor `body` is given.
    package static func onOwnThread<T>(_ body: (ThreadsExecutor) async throws -> T) async throws -> T {
        let executor = ThreadsExecutor(threads: 1)
        defer { executor.shutdown() }
        return try await withTaskExecutorPreference(executor) { try await body(executor) }
    }
}
