import Dispatch
import Synchronization

/// Data-parallel helpers for the Builder's CPU-bound steps (parsing, compressing).
package enum Parallel {
    /// `items.map(body)`, with the calls spread over the machine's cores; results in input order.
    package static func map<T: Sendable, R: Sendable>(_ items: [T], _ body: @Sendable (T) -> R) -> [R] {
        guard items.count > 1 else { return items.map(body) }
        let results = Mutex<[R?]>(Array(repeating: nil, count: items.count))
        DispatchQueue.concurrentPerform(iterations: items.count) { i in
            let r = body(items[i])
            results.withLock { $0[i] = r }
        }
        return results.withLock { $0.map { $0! } }
    }
}
