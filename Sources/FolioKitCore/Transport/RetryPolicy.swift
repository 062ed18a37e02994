import Foundation
import FolioSupport

/// The one retry policy of every request a sync makes: up to `attempts` tries on a transport
/// failure or a 5xx answer, waiting `base`, 2×`base`, 4×`base`… plus up to 50% jitter between
/// them. A 503 or 429 with `Retry-After` is waited for as asked when that is at most
/// `longestRetryAfter`; a longer one ends the tries at once and the answer is returned, so the
/// caller can report maintenance rather than hold the app.
package struct RetryPolicy: Sendable {
    package var attempts = 3
    package var base: Duration = .milliseconds(100)
    package var longestRetryAfter: Duration = .seconds(2)
    /// Sees every answer, retried ones too (the sync counts requests and bytes with it).
    package var observe: (@Sendable (TransportResponse) -> Void)?

    package init(attempts: Int = 3) { self.attempts = max(1, attempts) }

    /// What to do after an answer or a failure on try `attempt` (0-based).
    package enum Step: Equatable {
        case done
        case retry(after: Duration)
    }

    /// The step after `response` (nil: the transport failed) on try `attempt`.
    package func step(after response: TransportResponse?, attempt: Int, jitter: Double = Double.random(in: 0...0.5)) -> Step {
        if let response { observe?(response) }
        guard attempt + 1 < attempts else { return .done }
        guard let response else { return .retry(after: backoff(attempt, jitter: jitter)) }
        if response.status == 503 || response.status == 429, let asked = Self.retryAfter(response) {
            let wait = Duration.milliseconds(Int64(asked * 1000))
            return wait <= longestRetryAfter ? .retry(after: max(wait, backoff(attempt, jitter: jitter))) : .done
        }
        return response.status >= 500 ? .retry(after: backoff(attempt, jitter: jitter)) : .done
    }

    /// `base` × 2^attempt, plus `jitter` of that.
    package func backoff(_ attempt: Int, jitter: Double) -> Duration {
        let delay = base * (1 << min(attempt, 16))
        return delay + delay * jitter
    }

    /// The seconds a response's `Retry-After` asks for (delay seconds or an HTTP date).
    package static func retryAfter(_ response: TransportResponse) -> Double? {
        RetryAfter.seconds(response.headers.first(name: "retry-after"), now: Date())
    }

    /// `request` on `transport` with this policy's tries: the last answer, or the last failure
    /// (naming the request's path).
    package func run(_ request: TransportRequest, on transport: some Transport) async throws -> TransportResponse {
        var attempt = 0
        while true {
            let outcome: Result<TransportResponse, TransportError>
            do { outcome = .success(try await transport.get(request)) } catch let error as TransportError { outcome = .failure(error) }
            switch try next(after: outcome, request, attempt: attempt) {
            case .answer(let answer): return answer
            case .retry(let delay):
                try await Task.sleep(for: delay)
                attempt += 1
            }
        }
    }

    /// The same on a thread that may block: `get` makes one try, and the waits between tries
    /// are slept in 50 ms slices that end early once `isCancelled` says so.
    package func runBlocking(
        _ request: TransportRequest, isCancelled: () -> Bool, _ get: () throws(TransportError) -> TransportResponse
    ) throws -> TransportResponse {
        var attempt = 0
        while true {
            let outcome: Result<TransportResponse, TransportError>
            do { outcome = .success(try get()) } catch { outcome = .failure(error) }
            switch try next(after: outcome, request, attempt: attempt) {
            case .answer(let answer): return answer
            case .retry(var left):
                while left > .zero, !isCancelled() {
                    let slice = min(left, .milliseconds(50))
                    usleep(useconds_t(slice / .microseconds(1)))
                    left -= slice
                }
                if isCancelled() { throw CancellationError() }
                attempt += 1
            }
        }
    }

    private enum Next {
        case answer(TransportResponse)
        case retry(Duration)
    }

    /// After one try: the answer to return, a wait before the next try, or the failure to
    /// throw, naming the request's path.
    private func next(after outcome: Result<TransportResponse, TransportError>, _ request: TransportRequest, attempt: Int) throws -> Next {
        // A silent edge already had the whole timeout, and a TLS mismatch is not cured by asking
        // again: neither is retried, so a sync ends within about one timeout.
        if case .failure(var error) = outcome, !error.kind.isRetryable {
            error.path = request.path
            throw error
        }
        switch (step(after: try? outcome.get(), attempt: attempt), outcome) {
        case (.retry(let delay), _): return .retry(delay)
        case (.done, .success(let answer)): return .answer(answer)
        case (.done, .failure(var error)):
            error.path = request.path
            throw error
        }
    }
}
