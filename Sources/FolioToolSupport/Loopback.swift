import Foundation

/// Host names and addresses that reach this machine only.
package enum Loopback {
    /// Whether `host` (a name, an IPv4 address, or an IPv6 one with or without brackets) names
    /// this machine only: `localhost`, `127.0.0.0/8`, `::1`.
    package static func contains(_ host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let octets = h.split(separator: ".", omittingEmptySubsequences: false)
        return h == "localhost" || h == "::1" || (octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil })
    }
}
