import Foundation

/// A value behind a lock, for state shared across threads. `Synchronization.Mutex` does the
/// same from iOS 18 and macOS 15 only; `NSLock` is on every platform FolioKit declares.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A count shared across threads (`Synchronization.Atomic` is iOS 18 and macOS 15 only).
package final class Counter: Sendable {
    private let count = Locked(0)

    package init() {}

    /// Adds `n` (negative to take away); the new count.
    @discardableResult
    package func add(_ n: Int) -> Int { count.withLock { $0 += n; return $0 } }

    package var value: Int { count.withLock { $0 } }
}
