import Foundation

/// Set when the task that waits for blocking work is cancelled; the work's loops (a socket's,
/// a retry's wait) ask it at least every 50 ms.
package final class CancelFlag: Sendable {
    private let flag = Locked(false)
    package init() {}
    package func cancel() { flag.withLock { $0 = true } }
    package var isCancelled: Bool { flag.withLock { $0 } }
}

/// Runs blocking work on a thread of its own and awaits it, so that no thread of Swift's
/// cooperative pool waits on a socket or a disk. Cancelling the awaiting task sets the work's
/// ``CancelFlag``; the socket loops see it within 50 ms. An error the work throws once cancelled
/// is a `CancellationError`; a value it returns is returned (it may own a resource, such as a
/// lock, that the caller must release).
package enum Blocking {
    package static func run<T: Sendable>(_ work: @escaping @Sendable (CancelFlag) throws -> T) async throws -> T {
        let flag = CancelFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let thread = Thread {
                    continuation.resume(with: Result { try work(flag) }.mapError { flag.isCancelled ? CancellationError() : $0 })
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
        } onCancel: {
            flag.cancel()
        }
    }
}
