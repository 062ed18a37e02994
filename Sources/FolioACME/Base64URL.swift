import Foundation

/// Base64url without padding (RFC 4648 §5, as JOSE uses it: RFC 7515 §2).
package enum Base64URL {
    package static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// The bytes of unpadded base64url text; nil for any other character (padding included).
    package static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count % 4 != 1,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
