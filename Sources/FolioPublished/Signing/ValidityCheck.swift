/// Validity periods shorter than the clock skew clients allow: a client whose clock is a few
/// minutes behind or ahead still counts the signature valid (or already expired) for up to
/// ``Trust/clockSkewAllowance`` longer, so such a period does not mean what it says.
package enum ValidityCheck {
    /// The warning for a `--valid-for`-like option of `text`, or nil when it is long enough (or not a duration).
    package static func problem(option: String, _ text: String, what: String) -> String? {
        guard let seconds = DurationText.seconds(text), Double(seconds) < Trust.clockSkewAllowance else { return nil }
        let skew = Int(Trust.clockSkewAllowance) / 60
        return "\(option) \(text) is shorter than the \(skew) minutes of clock skew clients allow: \(what) would expire "
            + "for clients whose clocks run a few minutes ahead before they see it, and stay accepted up to \(skew) minutes "
            + "longer by clients running behind; give well over \(skew)m, like 1h"
    }
}
