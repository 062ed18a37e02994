import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A POSIX thread running `body`: what `Foundation.Thread` does, without its per-thread setup,
/// which measured about 0.5 ms of a 7 ms `folio sync` (its first use in a process).
///
/// A thread that has run its body waits, parked, for the next one (``ThreadPool``): making a
/// thread (its stack mapped, its first pages zeroed, its malloc arena warmed) cost each
/// `Parallel.map` of an edge's deploy about as much as the work it spread.
package enum OSThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a parked thread (``ThreadPool``), else on a new one with a stack of at
    /// least `stackSize` bytes; on the caller's thread if no thread can be made. Never waits for
    /// a thread to be free.
    package static func spawn(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
        guard stackSize <= ThreadPool.stackSize else {
            if !start(stackSize: stackSize, body) { body() }
            return
        }
        ThreadPool.shared.run(body)
    }

    /// Starts a new detached thread running `body`; false (and `body` not run) when none can be made.
    static func start(stackSize: Int, _ body: @escaping () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, stackSize)
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if rc != 0 { Unmanaged<Box>.fromOpaque(box).release() }
        return rc == 0
    }
}

/// The threads ``OSThread`` made that wait for another body to run, the most recently parked
/// first (its stack and caches the warmest). At most `maxParked` wait; one more ends instead.
package final class ThreadPool: Sendable {
    /// The stack every pooled thread has: the largest any caller asks for.
    static let stackSize = 8 << 20

    static let shared = ThreadPool(maxParked: 32)

    let maxParked: Int

    /// One parked thread: the body it is handed, and the semaphore that wakes it.
    private final class Parked: Sendable {
        let job = Mutex<(@Sendable () -> Void)?>(nil)
        let wake = DispatchSemaphore(value: 0)
    }

    private let parked = Mutex<[Parked]>([])

    package init(maxParked: Int) {
        self.maxParked = maxParked
    }

    /// How many threads wait now.
    package var parkedCount: Int { parked.withLock { $0.count } }

    /// Runs `body` on a parked thread, else on a new one that parks here once it is done.
    package func run(_ body: @escaping @Sendable () -> Void) {
        if let thread = parked.withLock({ $0.popLast() }) {
            thread.job.withLock { $0 = body }
            thread.wake.signal()
            return
        }
        let started = OSThread.start(stackSize: Self.stackSize) {
            body()
            self.park()
        }
        // Run here when no thread can be made; this thread is not one to park.
        if !started { body() }
    }

    /// Waits for the next body and runs it, again and again; returns (the thread ends) when
    /// `maxParked` threads already wait.
    private func park() {
        let me = Parked()
        while true {
            let admitted = parked.withLock { list in
                guard list.count < maxParked else { return false }
                list.append(me)
                return true
            }
            guard admitted else { return }
            me.wake.wait()
            guard let body = me.job.withLock({ job in defer { job = nil }; return job }) else { continue }
            body()
        }
    }
}
