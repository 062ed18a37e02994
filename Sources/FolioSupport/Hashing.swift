import Crypto
import Foundation

/// SHA-256 content addresses.
package enum ContentHash {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The lowercase hex SHA-256 of `bytes`.
    package static func sha256Hex(_ bytes: some DataProtocol) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// The lowercase hex SHA-256 of an array: over its buffer, not through `DataProtocol`'s
    /// regions (a generic call per object cost more than hashing a small one).
    package static func sha256Hex(_ bytes: [UInt8]) -> String {
        var hasher = Streaming()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finish()
    }

    /// A SHA-256 fed piece by piece.
    package struct Streaming {
        private var hasher = SHA256()
        package init() {}
        package mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }
        /// The lowercase hex digest.
        package func finish() -> String { ContentHash.hex(hasher.finalize()) }
    }

    /// The lowercase hex SHA-256 of the file at `path` and its size, read a chunk at a time.
    package static func sha256Hex(file path: String) throws(FileError) -> (hex: String, size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError("open", path) }
        defer { close(fd) }
        var hasher = Streaming()
        let size = try FileIO.readChunks(fd, path: path) { hasher.update($0) }
        return (hasher.finish(), size)
    }

    /// The SHA-256 digest of `bytes`.
    package static func sha256(_ bytes: some DataProtocol) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    /// Appends the first `count` bytes of the SHA-256 digest of `bytes` to `out`: over the
    /// buffer, for many small inputs (no generic call per region).
    package static func appendSHA256(of bytes: UnsafeRawBufferPointer, prefix count: Int, to out: inout [UInt8]) {
        var hasher = SHA256()
        hasher.update(bufferPointer: bytes)
        hasher.finalize().withUnsafeBytes { out.append(contentsOf: $0.prefix(count)) }
    }

    /// Lowercase hex text of `bytes`.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of hex text (either case); nil when it is not hex.
    package static func bytes(hex text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let hi = nibble(u[i]), let lo = nibble(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// Whether `s` looks like a lowercase hex SHA-256.
    package static func isSHA256Hex(_ s: some StringProtocol) -> Bool {
        // Over contiguous UTF-8 where there is one (a manifest checks 20,000 of these per read).
        let fast = s.utf8.withContiguousStorageIfAvailable { $0.count == 64 && $0.allSatisfy(isLowerHex) }
        return fast ?? (s.utf8.count == 64 && s.utf8.allSatisfy(isLowerHex))
    }

    /// The same check for a `String`, compiled for it: the generic one above,
    /// called from another module, took 165 ns a digest (a build cache's 20,000 records, 3 ms).
    package static func isSHA256Hex(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { $0.count == 64 && $0.allSatisfy(isLowerHex) }
    }

    @inline(__always) private static func isLowerHex(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) }
}
