import Crypto
import Foundation

/// SHA-256 content addresses.
package enum ContentHash {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The lowercase hex SHA-256 of `bytes`.
    package static func sha256Hex(_ bytes: some DataProtocol) -> String {
        let digest = SHA256.hash(data: bytes)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for b in digest {
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `s` looks like a lowercase hex SHA-256.
    package static func isSHA256Hex(_ s: some StringProtocol) -> Bool {
        s.utf8.count == 64 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
