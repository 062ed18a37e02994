import Foundation
import Synchronization
#if canImport(Glibc)
    import CFolioLinux
#endif

/// Data-parallel helpers for the Builder's CPU-bound steps (parsing, compressing).
package enum Parallel {
    /// The number of worker threads to use.
    /// The cores this process may run on: its CPU affinity where the system has one (as Go's
    /// runtime and `nproc` count them; `taskset -c 0` gives 1), else the active processors.
    package static let cores: Int = {
        #if canImport(Glibc)
            let allowed = Int(folio_allowed_cpus())
            if allowed > 0 { return min(allowed, max(1, ProcessInfo.processInfo.activeProcessorCount)) }
        #endif
        return max(1, ProcessInfo.processInfo.activeProcessorCount)
    }()

    /// `items.map(body)`, with the calls spread over the machine's cores; results in input order.
    ///
    /// Runs on POSIX threads of its own (the caller's thread takes part): `DispatchQueue.concurrentPerform`
    /// called from a Swift-concurrency task on Linux was measured running everything on one thread.
    ///
    /// `threads` (default: the cores) is how many run at once, more for work that mostly waits.
    package static func map<T: Sendable, R: Sendable>(
        _ items: [T], threads: Int = cores, _ body: @escaping @Sendable (T) -> R
    ) -> [R] {
        guard items.count > 1, threads > 1 else { return items.map(body) }
        // Each result is written in place in the array being made, at its own index (no lock,
        // no optional per slot, no copy at the end: 20,000 artifacts were about 7 MB copied and
        // as many fresh pages); the semaphore orders the helpers' writes before the return.
        return [R](unsafeUninitializedCapacity: items.count) { buffer, count in
            let slots = Slots(base: buffer.baseAddress!)
            let next = Atomic<Int>(0)
            let work: @Sendable () -> Void = {
                while true {
                    let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard i < items.count else { return }
                    (slots.base + i).initialize(to: body(items[i]))
                }
            }
            let helpers = min(threads, items.count) - 1
            let done = DispatchSemaphore(value: 0)
            for _ in 0..<helpers {
                OSThread.spawn(stackSize: 8 << 20) {
                    work()
                    done.signal()
                }
            }
            work()
            for _ in 0..<helpers { done.wait() }
            count = items.count
        }
    }

    /// The storage of the array ``map(_:threads:_:)`` makes, shared by its threads, each
    /// initializing the slots of the indices it took.
    private struct Slots<R>: @unchecked Sendable {
        let base: UnsafeMutablePointer<R>
    }

    /// Runs `a` on a thread of its own and `b` on the caller's, and returns both results.
    package static func both<A: Sendable, B: Sendable>(
        _ a: @escaping @Sendable () -> A, _ b: () -> B
    ) -> (A, B) {
        guard cores > 1 else { return (a(), b()) }
        let result = Mutex<A?>(nil)
        let done = DispatchSemaphore(value: 0)
        OSThread.spawn(stackSize: 8 << 20) {
            let r = a()
            result.withLock { $0 = r }
            done.signal()
        }
        let rb = b()
        done.wait()
        return (result.withLock { $0! }, rb)
    }
}
