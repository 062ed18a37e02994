import Dispatch
import Synchronization

/// A value being made on a thread of its own: started now, taken (waiting if it is not made
/// yet) by whoever needs it, from synchronous code. The edge makes its JSON mirror's variants
/// this way while a deploy goes on to its commit.
package final class Pending<Value: Sendable>: Sendable {
    private let made = Mutex<Value?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on a new thread.
    package init(_ work: @escaping @Sendable () -> Value) {
        OSThread.spawn(stackSize: 8 << 20) { [self] in
            let value = work()
            made.withLock { $0 = value }
            done.signal()
        }
    }

    /// A value that a thread already running makes and hands over with ``fulfil(_:)``, once.
    package init() {}

    /// Hands over the value of a ``init()`` one.
    package func fulfil(_ value: Value) {
        made.withLock { $0 = value }
        done.signal()
    }

    /// The value, once made.
    package var value: Value {
        if let value = made.withLock({ $0 }) { return value }
        done.wait()
        done.signal()  // for the next reader
        return made.withLock { $0 }!
    }
}
