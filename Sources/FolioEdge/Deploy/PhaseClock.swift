import Logging

/// The milliseconds each phase of a request took, marked as each ends: a deploy's commit logs
/// them, so that an operator sees whether the checks, the disk or the load made it slow.
struct PhaseClock {
    private let clock = ContinuousClock()
    private var last: ContinuousClock.Instant
    private(set) var phases: [(name: String, milliseconds: Double)] = []

    init() { last = clock.now }

    /// Ends the phase `name` now.
    mutating func mark(_ name: String) {
        let now = clock.now
        let elapsed = last.duration(to: now)
        phases.append((name, Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15))
        last = now
    }

    /// Each phase as `NAME_ms`, to one decimal.
    var metadata: Logger.Metadata {
        Logger.Metadata(uniqueKeysWithValues: phases.map { ("\($0.name)_ms", .string(String(format: "%.1f", $0.milliseconds))) })
    }
}
