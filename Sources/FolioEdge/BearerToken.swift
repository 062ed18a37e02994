import FolioSupport
import Foundation

/// A bearer token read from a file (`--purge-token-file`, `--deploy-token-file`) and checked
/// against a request's `Authorization` field in the same time whatever the token given.
struct BearerToken: Sendable {
    /// What a request's `Authorization` field holds, against the token.
    enum Check: Equatable {
        case accepted
        /// No `Authorization: Bearer …` field.
        case missing
        case wrong
    }

    /// SHA-256 (hex) of the token: the comparison runs over digests of equal length.
    private let digest: [UInt8]

    init(_ token: String) {
        digest = Array(ContentHash.sha256Hex(Array(token.utf8)).utf8)
    }

    /// Reads the token file: its first line, trimmed; an error naming `what` (e.g. "purge")
    /// when it is missing, unreadable or shorter than 16 characters.
    static func read(_ path: String, what: String) throws -> String {
        let text = String(decoding: try FileIO.read(path), as: UTF8.self)
        let token = text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard token.count >= 16 else {
            throw EdgeStartupError("\(path): the \(what) token must be one line of at least 16 characters")
        }
        return token
    }

    /// Checks the value of an `Authorization` field (nil when the request has none).
    func check(authorization: String?) -> Check {
        guard let auth = authorization, auth.lowercased().hasPrefix("bearer ") else { return .missing }
        let given = Array(ContentHash.sha256Hex(Array(auth.dropFirst(7).trimmingCharacters(in: .whitespaces).utf8)).utf8)
        var difference: UInt8 = 0
        for (a, b) in zip(given, digest) { difference |= a ^ b }
        return difference == 0 ? .accepted : .wrong
    }
}
