import Foundation

/// The time the manager schedules renewals by; tests inject one that they move forward.
package protocol ACMEClock: Sendable {
    func now() -> Date
    /// Returns once `now()` has reached `deadline`; throws CancellationError when cancelled.
    func sleep(until deadline: Date) async throws
}

/// The system's wall clock. Long waits are slept an hour at a time and the time read again,
/// so that a suspended machine or a clock change cannot push a renewal far past its date.
package struct ACMESystemClock: ACMEClock {
    package init() {}

    package func now() -> Date { Date() }

    package func sleep(until deadline: Date) async throws {
        while true {
            let remaining = deadline.timeIntervalSince(now())
            if remaining <= 0 { return }
            try await Task.sleep(for: .milliseconds(Int64(min(remaining, 3600) * 1000)))
        }
    }
}
