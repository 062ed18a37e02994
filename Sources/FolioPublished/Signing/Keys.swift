import Crypto
import FolioSupport
import Foundation

/// An Ed25519 public key and its key ID (the first 8 bytes of its SHA-256, in hex).
package struct PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte Ed25519 public key.
    package let raw: [UInt8]
    /// 16 lowercase hex digits naming the key in key lists, signatures and messages.
    package let keyID: String

    package init(raw: [UInt8]) throws(KeyFileError) {
        guard raw.count == 32, (try? Curve25519.Signing.PublicKey(rawRepresentation: raw)) != nil else {
            throw KeyFileError("an Ed25519 public key is 32 bytes, got \(raw.count)")
        }
        self.raw = raw
        self.keyID = PublicKey.keyID(raw)
    }

    package static func keyID(_ raw: [UInt8]) -> String { String(ContentHash.sha256Hex(raw).prefix(16)) }

    /// Whether `signature` is this key's Ed25519 signature of `message`.
    package func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == 64, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    package var description: String { keyID }

    /// The `.pub` file's text.
    package var fileText: String {
        "\(KeyFile.publicHeader)\nkey-id: \(keyID)\ned25519: \(Data(raw).base64EncodedString())\n"
    }

    /// Reads a `.pub` file's text; `path` names it in errors.
    package init(fileText text: String, path: String) throws(KeyFileError) {
        let fields = try KeyFile.fields(text, header: KeyFile.publicHeader, path: path)
        let raw = try KeyFile.bytes(fields, "ed25519", count: 32, path: path)
        try self.init(raw: raw)
        try KeyFile.checkID(fields, keyID, path: path)
    }

    /// Reads a `.pub` file.
    package init(contentsOf path: String) throws(KeyFileError) {
        try self.init(fileText: try KeyFile.read(path), path: path)
    }
}

/// An Ed25519 private key (its 32-byte seed) with its public half.
package struct SecretKey: Sendable {
    private let key: Curve25519.Signing.PrivateKey
    package let publicKey: PublicKey

    package init(seed: [UInt8]) throws(KeyFileError) {
        guard seed.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else {
            throw KeyFileError("an Ed25519 secret key is a 32-byte seed, got \(seed.count)")
        }
        self.key = key
        self.publicKey = try PublicKey(raw: Array(key.publicKey.rawRepresentation))
    }

    /// A new random key pair.
    package static func generate() -> SecretKey {
        // A fresh key's seed is always 32 bytes.
        try! SecretKey(seed: Array(Curve25519.Signing.PrivateKey().rawRepresentation))
    }

    package var keyID: String { publicKey.keyID }

    /// The Ed25519 signature of `message` (deterministic, RFC 8032).
    package func sign(_ message: [UInt8]) -> [UInt8] {
        // Signing with a valid key does not fail.
        Array(try! key.signature(for: message))
    }

    /// The `.key` file's text.
    package var fileText: String {
        "\(KeyFile.secretHeader)\nkey-id: \(keyID)\ned25519-seed: \(key.rawRepresentation.base64EncodedString())\n"
    }

    /// Reads a `.key` file's text; `path` names it in errors.
    package init(fileText text: String, path: String) throws(KeyFileError) {
        let fields = try KeyFile.fields(text, header: KeyFile.secretHeader, path: path)
        try self.init(seed: try KeyFile.bytes(fields, "ed25519-seed", count: 32, path: path))
        try KeyFile.checkID(fields, keyID, path: path)
    }

    /// Reads a `.key` file, refusing one that other users can read (as ssh does). A public key
    /// given instead is named as such first (its mode is not the problem).
    package init(contentsOf path: String) throws(KeyFileError) {
        let text = try KeyFile.read(path)
        _ = try KeyFile.fields(text, header: KeyFile.secretHeader, path: path)
        var st = stat()
        if stat(path, &st) == 0, st.st_mode & 0o077 != 0 {
            throw KeyFileError(
                "\(path) can be read by other users (mode \(String(st.st_mode & 0o777, radix: 8))); a secret key must be private: chmod 600 \(path)")
        }
        try self.init(fileText: text, path: path)
    }
}

/// The text formats of key files:
///
/// ```
/// folio-public-key 1              folio-secret-key 1
/// key-id: 8c1f3d5e2a9b7c40        key-id: 8c1f3d5e2a9b7c40
/// ed25519: <base64, 32 bytes>     ed25519-seed: <base64, 32 bytes>
/// ```
/// Lines starting with `#` are comments; `key-id` must match the key.
package enum KeyFile {
    package static let publicHeader = "folio-public-key 1"
    package static let secretHeader = "folio-secret-key 1"

    static func read(_ path: String) throws(KeyFileError) -> String {
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch { throw KeyFileError("cannot read \(path): \(error)") }
        guard bytes.count <= 4096, let text = String(validating: bytes, as: UTF8.self) else {
            throw KeyFileError("\(path) is not a Folio key file (not short UTF-8 text)")
        }
        return text
    }

    static func fields(_ text: String, header: String, path: String) throws(KeyFileError) -> [String: String] {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard let first = lines.first, first == header else {
            let other = header == publicHeader ? secretHeader : publicHeader
            if lines.first == other {
                throw KeyFileError(
                    header == publicHeader
                        ? "\(path) is a secret key; give its public half (\(sibling(path, "pub")))"
                        : "\(path) is a public key; give the secret key (\(sibling(path, "key")))")
            }
            throw KeyFileError("\(path) is not a Folio key file: its first line should be '\(header)' (folio keys generate writes one)")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw KeyFileError("\(path): '\(line)' is not a 'name: value' line") }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            guard fields[name] == nil else { throw KeyFileError("\(path): '\(name)' appears twice") }
            fields[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    /// "public" or "secret" when `bytes` are a key file's, else nil.
    package static func kind(of bytes: [UInt8]) -> String? {
        if bytes.starts(with: Array(publicHeader.utf8)) { return "public" }
        if bytes.starts(with: Array(secretHeader.utf8)) { return "secret" }
        return nil
    }

    /// The other file of a pair: `keys/ci.pub` → `keys/ci.key` (the extension replaced or added).
    package static func sibling(_ path: String, _ ext: String) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return path + "." + ext }
        return String(path.dropLast(name.distance(from: dot, to: name.endIndex))) + "." + ext
    }

    static func bytes(_ fields: [String: String], _ name: String, count: Int, path: String) throws(KeyFileError) -> [UInt8] {
        guard let text = fields[name] else { throw KeyFileError("\(path) has no '\(name):' line") }
        guard let data = Data(base64Encoded: text), data.count == count else {
            throw KeyFileError("\(path): '\(name)' is not \(count) bytes of base64")
        }
        return Array(data)
    }

    static func checkID(_ fields: [String: String], _ keyID: String, path: String) throws(KeyFileError) {
        guard let stated = fields["key-id"] else { throw KeyFileError("\(path) has no 'key-id:' line") }
        guard stated.lowercased() == keyID else {
            throw KeyFileError("\(path): key-id \(stated) does not match its key (\(keyID)); the file was edited or damaged")
        }
    }
}

/// A key file that cannot be used: what is wrong and which file.
package struct KeyFileError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Durations on command lines: `90s`, `15m`, `12h`, `7d`, `2w`.
package enum DurationText {
    /// Seconds, or nil when `text` is not a positive whole number with one of the units.
    package static func seconds(_ text: String) -> Int? {
        guard let unit = text.last, let n = Int(text.dropLast()), n > 0 else { return nil }
        let scale: Int
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86_400
        case "w": scale = 604_800
        default: return nil
        }
        let (total, overflow) = n.multipliedReportingOverflow(by: scale)
        return overflow || total > 100 * 365 * 86_400 ? nil : total
    }

    /// The message for a value `seconds` rejects.
    package static func problem(_ option: String, _ text: String) -> String {
        "\(option) takes a duration like 90s, 15m, 12h, 7d or 2w (at most 100 years), got '\(text)'"
    }
}
