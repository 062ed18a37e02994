import Foundation

/// `--timeout SECONDS`, else `FOLIO_TIMEOUT`, else 15 s: how long the edge may stay silent
/// before a request fails (then the command is offline).
enum TimeoutSetting {
    static let defaultSeconds = 15.0
    static let variable = "FOLIO_TIMEOUT"

    /// The text given, by the option or the variable, with the name it came by.
    static func given(_ option: String?) -> (name: String, text: String)? {
        if let option { return ("--timeout", option) }
        return ClientOptions.variable(variable).map { (variable, $0) }
    }

    /// Seconds in (0, 3600], or nil.
    static func seconds(_ text: String) -> Double? {
        guard let s = Double(text), s.isFinite, s > 0, s <= 3600 else { return nil }
        return s
    }

    /// Why the timeout given cannot be used, or nil.
    static func problem(_ option: String?) -> String? {
        guard let (name, text) = given(option), seconds(text) == nil else { return nil }
        return "\(name) takes seconds from 0.1 to 3600, like 5 or 2.5, got '\(text)'"
    }

    /// The timeout to use (a bad value is refused earlier, by `problem`).
    static func duration(_ option: String?) -> Duration {
        let s = given(option).flatMap { seconds($0.text) } ?? defaultSeconds
        return .milliseconds(Int64((max(s, 0.1) * 1000).rounded()))
    }
}
