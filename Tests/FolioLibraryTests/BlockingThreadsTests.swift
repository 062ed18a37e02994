import FolioKit
import Foundation
import Testing

/// The threads FolioKit runs blocking work on: a job never waits for a busy thread, and idle
/// threads are reused.
@Suite("Blocking threads")
struct BlockingThreadsTests {
    @Test("64 jobs that each wait for all the others all run: a busy pool starts another thread")
    func neverWaitsForABusyThread() {
        let pool = BlockingThreads()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for _ in 0..<64 {
            done.enter()
            pool.run {
                started.signal()
                release.wait()
                done.leave()
            }
        }
        var running = 0
        while running < 64, started.wait(timeout: .now() + 10) == .success { running += 1 }
        #expect(running == 64, "only \(running) of 64 jobs started")
        for _ in 0..<64 { release.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
    }

    @Test("jobs one after another reuse the idle threads")
    func reusesIdleThreads() {
        let pool = BlockingThreads()
        for _ in 0..<50 {
            let done = DispatchSemaphore(value: 0)
            pool.run { done.signal() }
            done.wait()
            // A job's caller can resume before its thread is back waiting: wait for it (bounded).
            let deadline = Date().addingTimeInterval(5)
            while pool.idleThreads == 0, Date() < deadline { usleep(100) }
        }
        #expect(pool.threadsStarted == 1, "50 jobs in a row started \(pool.threadsStarted) threads")
    }
}
