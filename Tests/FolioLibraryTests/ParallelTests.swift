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

    @Test("both returns both results, the first computed on another thread when there are cores for it")
    func both() {
        let caller = pthread_self()
        let (a, b) = Parallel.both({ (pthread_equal(pthread_self(), caller) == 0, 6 * 7) }, { "b" })
        #expect(a.1 == 42)
        #expect(b == "b")
        #expect(a.0 == (Parallel.cores > 1))
    }
}
