import Foundation
import Synchronization
import Testing

@testable import FolioSupport
@testable import FolioToolSupport

@Suite struct ParallelTests {
    @Test("map keeps input order and calls the body once per item")
    func mapOrder() {
        let calls = Atomic<Int>(0)
        let out = Parallel.map(Array(0..<1000)) { i -> Int in
            calls.wrappingAdd(1, ordering: .relaxed)
            return i * i
        }
        #expect(out == (0..<1000).map { $0 * $0 })
        #expect(calls.load(ordering: .relaxed) == 1000)
    }

    @Test("map on several threads gives what the sequential map gives, for values holding references")
    func mapMatchesSequential() {
        let items = Array(0..<5000)
        let body: @Sendable (Int) -> [String] = { i in [String(i), String(repeating: "verse ", count: i % 40)] }
        #expect(Parallel.map(items, threads: 4, body) == items.map(body))
        #expect(Parallel.map([7, 8], threads: 4, body) == [body(7), body(8)])
        #expect(Parallel.map([Int](), threads: 4, body).isEmpty)
    }

    @Test("both returns both results, the first computed on another thread when there are cores for it")
    func both() {
        let caller = pthread_self()
        let (a, b) = Parallel.both({ (pthread_equal(pthread_self(), caller) == 0, 6 * 7) }, { "b" })
        #expect(a.1 == 42)
        #expect(b == "b")
        #expect(a.0 == (Parallel.cores > 1))
    }

    @Test("a pooled thread that ran its body runs the next one; bodies at once all run; at most maxParked wait")
    func threadsAreReused() {
        let pool = ThreadPool(maxParked: 4)
        let threads = Mutex<[pthread_t]>([])
        let ran = DispatchSemaphore(value: 0)
        let record: @Sendable () -> Void = {
            threads.withLock { $0.append(pthread_self()) }
            ran.signal()
        }
        pool.run(record)
        ran.wait()
        #expect(waitUntil { pool.parkedCount == 1 })
        pool.run(record)
        ran.wait()
        let seen = threads.withLock { $0 }
        #expect(seen.count == 2 && pthread_equal(seen[0], seen[1]) != 0)
        // More bodies at once than threads parked: each runs (new threads are made), none
        // waits for another to end; then maxParked threads wait, the others ended.
        let count = pool.maxParked + 6
        let arrived = Atomic<Int>(0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<count {
            pool.run {
                arrived.wrappingAdd(1, ordering: .relaxed)
                release.wait()
                ran.signal()
            }
        }
        #expect(waitUntil { arrived.load(ordering: .relaxed) == count })
        for _ in 0..<count { release.signal() }
        for _ in 0..<count { ran.wait() }
        #expect(waitUntil { pool.parkedCount == pool.maxParked })
    }

    /// Polls `condition` every millisecond for up to 5 s.
    private func waitUntil(_ condition: () -> Bool) -> Bool {
        for _ in 0..<5000 {
            if condition() { return true }
            usleep(1000)
        }
        return condition()
    }
}
