import FolioSupport
import Foundation
import Synchronization

/// Compresses bytes that are still being produced into exactly what ``Gzip/compress(_:level:)``
/// makes of the whole: each full chunk handed to ``submit(_:)`` is deflated on a worker thread
/// right away, and ``finish(_:)`` does the rest, with the calling thread taking its share of the
/// chunks still waiting.
package final class GzipChunkStream: Sendable {
    private struct State {
        var waiting: [(index: Int, chunk: [UInt8])] = []
        var done: [Int: Result<[UInt8], GzipError>] = [:]
        var submitted = 0
        var workerRunning = false
    }

    private let level: Int32
    private let state = Mutex(State())
    private let group = DispatchGroup()

    /// A stream at `level`, which ``finish(_:)`` checks like ``Gzip/compress(_:level:)`` does.
    package init(level: Int32) { self.level = level }

    /// The number of chunks handed over so far.
    package var submittedChunks: Int { state.withLock { $0.submitted } }

    /// Hands over the next ``Gzip/chunkSize`` bytes of the input; never the input's last bytes.
    package func submit(_ chunk: [UInt8]) {
        precondition(chunk.count == Gzip.chunkSize, "submit takes whole chunks")
        group.enter()
        let startWorker = state.withLock { s in
            s.waiting.append((s.submitted, chunk))
            s.submitted += 1
            defer { s.workerRunning = true }
            return !s.workerRunning
        }
        if startWorker {
            let thread = Thread { [self] in drain(asWorker: true) }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Drops the chunks not started yet (the result is not needed after all).
    package func cancel() {
        let dropped = state.withLock { s in
            defer { s.waiting.removeAll() }
            return s.waiting.count
        }
        for _ in 0..<dropped { group.leave() }
    }

    /// Deflates waiting chunks until none is left.
    private func drain(asWorker: Bool) {
        while let job = state.withLock({ s -> (index: Int, chunk: [UInt8])? in
            guard !s.waiting.isEmpty else {
                if asWorker { s.workerRunning = false }
                return nil
            }
            return s.waiting.removeFirst()
        }) {
            let result = Result { () throws(GzipError) in
                try Gzip.deflateChunk(job.chunk, 0..<job.chunk.count, level: level, isLast: false)
            }
            state.withLock { $0.done[job.index] = result }
            group.leave()
        }
    }

    /// The gzip member of `input`, whose first ``submittedChunks`` chunks were handed over.
    package func finish(_ input: [UInt8]) throws(GzipError) -> [UInt8] {
        guard (1...Gzip.maxLevel).contains(level) else { throw GzipError(description: "gzip: level \(level) is not in 1...\(Gzip.maxLevel)") }
        let size = Gzip.chunkSize
        let first = submittedChunks
        guard first > 0 else { return try Gzip.compress(input, level: level) }
        precondition(input.count > first * size, "the input must go on after the chunks handed over")
        // Full chunks written after the last hand-over, then the last one (here, at once).
        var start = first * size
        while input.count - start > size {
            submit(Array(input[start..<(start + size)]))
            start += size
        }
        drain(asWorker: false)
        let last = try Gzip.deflateChunk(input, start..<input.count, level: level, isLast: true)
        group.wait()
        let done = state.withLock { $0.done }
        var deflated: [UInt8] = []
        deflated.reserveCapacity(input.count / 3)
        for i in 0..<done.count { deflated += try done[i]!.get() }
        deflated += last
        return Gzip.member(deflated, of: input, level: level)
    }
}
