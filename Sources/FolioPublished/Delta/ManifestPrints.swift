import FolioPlist
import FolioSupport
import Foundation

/// Prints of the entries of one `manifest.plist` file (plain or signed), so that ``ManifestEdit``
/// finds which entries an older version shares with the new one by comparing 16 bytes per
/// entry instead of walking both files: a builder keeps the prints of its last versions.
///
/// An entry's print is the SHA-256 (its first 16 bytes) of its written form
/// (``BinaryPlistView/written(_:into:limit:)``): two entries have equal prints exactly when
/// ``BinaryPlistView/same(_:as:in:limit:)`` finds them the same, short of a SHA-256 collision.
/// An entry `same` could never match has an all-zero print, equal to none.
package struct ManifestPrints: Sendable, Equatable {
    /// Where the entries array is: 0 in the file's top dictionary, 1 in a signed manifest's
    /// inner manifest; and its reference in that document.
    package var level: Int
    package var arrayRef: Int
    /// 16 bytes per entry.
    var digests: [UInt8]
    /// Per entry, the first 8 bytes of its `sha256` string (0 when shorter or not ASCII): a
    /// quick test of which entries may hold a SHA-256, checked against the file.
    var shaKeys: [UInt64]

    package var count: Int { shaKeys.count }
    static let digestSize = 16

    init(level: Int, arrayRef: Int, digests: [UInt8], shaKeys: [UInt64]) {
        (self.level, self.arrayRef, self.digests, self.shaKeys) = (level, arrayRef, digests, shaKeys)
    }

    /// Whether entry `i` here and entry `j` of `other` are written the same.
    package func same(_ i: Int, as j: Int, of other: ManifestPrints) -> Bool {
        digests.withUnsafeBytes { a in
            other.digests.withUnsafeBytes { b in
                let (x, y) = (a.baseAddress! + i * Self.digestSize, b.baseAddress! + j * Self.digestSize)
                let (x0, x1) = (x.loadUnaligned(as: UInt64.self), x.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                return (x0 | x1) != 0 && x0 == y.loadUnaligned(as: UInt64.self) && x1 == y.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
    }

    /// Whether these are the prints of the entries array `ref` at `level`, of `count` elements.
    func fit(level: Int, ref: Int, count: Int) -> Bool {
        self.level == level && arrayRef == ref && self.count == count && digests.count == count * Self.digestSize
    }

    /// The key of a SHA-256 text for ``shaKeys``.
    static func shaKey(_ ascii: UnsafeRawBufferPointer) -> UInt64 {
        ascii.count >= 8 ? ascii.loadUnaligned(as: UInt64.self) : 0
    }

    /// The prints of the manifest file `bytes`; nil when it is not a manifest as ``ManifestEdit``
    /// takes it (an entries array of dictionaries, each with a string `path`).
    package init?(manifest bytes: [UInt8]) {
        let found = try? BinaryPlistView.with(bytes) { (v: inout BinaryPlistView) throws(PlistError) -> ManifestPrints? in
            guard try v.kind(v.top) == .dictionary else { return nil }
            if let entries = try v.value(v.top, forASCIIKey: "entries") { return try Self.make(v, entries, level: 0) }
            guard let inner = try v.value(v.top, forASCIIKey: "manifest"), case .data(let data) = try v.decode(inner) else { return nil }
            return try BinaryPlistView.with(Array(data)) { (w: inout BinaryPlistView) throws(PlistError) -> ManifestPrints? in
                guard try w.kind(w.top) == .dictionary, let entries = try w.value(w.top, forASCIIKey: "entries") else { return nil }
                return try Self.make(w, entries, level: 1)
            }
        }
        guard let found = found ?? nil else { return nil }
        self = found
    }

    private static func make(_ v: BinaryPlistView, _ array: Int, level: Int) throws(PlistError) -> ManifestPrints? {
        guard try v.kind(array) == .array else { return nil }
        let elements = try v.elements(array)
        var prints = ManifestPrints(level: level, arrayRef: array, digests: [], shaKeys: [])
        prints.digests.reserveCapacity(elements.count * digestSize)
        prints.shaKeys.reserveCapacity(elements.count)
        var form: [UInt8] = []
        for element in elements {
            guard try v.kind(element) == .dictionary, let path = try v.value(element, forASCIIKey: "path"), try v.kind(path) == .string else {
                return nil
            }
            form.removeAll(keepingCapacity: true)
            if try v.written(element, into: &form) {
                form.withUnsafeBytes { ContentHash.appendSHA256(of: $0, prefix: digestSize, to: &prints.digests) }
            } else {
                prints.digests += repeatElement(0, count: digestSize)
            }
            let sha = try v.value(element, forASCIIKey: "sha256").flatMap { r throws(PlistError) in try v.asciiBytes(r) }
            prints.shaKeys.append(sha.map(shaKey) ?? 0)
        }
        return prints
    }
}

extension ManifestPrints {
    private static let magic = Array("FMP1".utf8)
    private static let headerSize = 4 + 32 + 3 * 8

    /// The prints as kept between builds, for the manifest file whose SHA-256 is `manifestSHA256`
    /// (hex), with a checksum of their own.
    package func stored(manifestSHA256: String) -> [UInt8] {
        var out = Self.magic + (ContentHash.bytes(hex: manifestSHA256) ?? [])
        for n in [level, arrayRef, count] { withUnsafeBytes(of: UInt64(n).littleEndian) { out += $0 } }
        out += digests
        shaKeys.map(\.littleEndian).withUnsafeBytes { out += $0 }
        var check: [UInt8] = []
        out.withUnsafeBytes { ContentHash.appendSHA256(of: $0, prefix: Self.digestSize, to: &check) }
        return out + check
    }

    /// Prints read back from ``stored(manifestSHA256:)``; nil unless they are whole, undamaged
    /// and for the manifest file whose SHA-256 is `manifestSHA256`.
    package init?(stored bytes: [UInt8], manifestSHA256: String) {
        guard bytes.count >= Self.headerSize + Self.digestSize, bytes.starts(with: Self.magic),
            let sha = ContentHash.bytes(hex: manifestSHA256), bytes[4..<36].elementsEqual(sha)
        else { return nil }
        let body = bytes.count - Self.digestSize
        var check: [UInt8] = []
        bytes.withUnsafeBytes { raw in
            ContentHash.appendSHA256(of: UnsafeRawBufferPointer(rebasing: raw[..<body]), prefix: Self.digestSize, to: &check)
        }
        guard check.elementsEqual(bytes[body...]) else { return nil }
        let words = bytes.withUnsafeBytes { raw in
            (0..<3).map { Int(truncatingIfNeeded: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 36 + 8 * $0, as: UInt64.self))) }
        }
        let (level, arrayRef, count) = (words[0], words[1], words[2])
        let perEntry = Self.digestSize + 8
        guard count >= 0, count <= (body - Self.headerSize) / perEntry, Self.headerSize + count * perEntry == body else { return nil }
        let keysStart = Self.headerSize + count * Self.digestSize
        let keys = bytes.withUnsafeBytes { raw in
            (0..<count).map { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: keysStart + 8 * $0, as: UInt64.self)) }
        }
        self.init(level: level, arrayRef: arrayRef, digests: Array(bytes[Self.headerSize..<keysStart]), shaKeys: keys)
    }
}

extension ManifestPrints {
    /// The prints of the plain manifest file `bytes`, whose entries array holds `entries` in
    /// that order (as ``Manifest/binaryPlist`` writes them: the caller's promise), with the print
    /// of each entry equal to one of `old` taken from `oldPrints` instead of being written out
    /// and hashed again: an entry's print depends only on its value. `old` are the entries of the
    /// manifest file `oldPrints` were made from, in that file's order; an old print whose SHA-256
    /// key is not its entry's is not taken. Entries are paired by a merge on their paths (in path
    /// order, as manifests hold them; out of order, fewer are paired, none wrongly). Nil for a
    /// signed manifest or counts that differ: the caller makes the prints from the file.
    package init?(manifest bytes: [UInt8], entries: [Manifest.Entry], reusing oldPrints: ManifestPrints, of old: [Manifest.Entry]) {
        guard oldPrints.level == 0, oldPrints.count == old.count else { return nil }
        let found = try? BinaryPlistView.with(bytes) { (v: inout BinaryPlistView) throws(PlistError) -> ManifestPrints? in
            guard try v.kind(v.top) == .dictionary, let array = try v.value(v.top, forASCIIKey: "entries"), try v.kind(array) == .array else {
                return nil
            }
            let elements = try v.elements(array)
            guard elements.count == entries.count else { return nil }
            var prints = ManifestPrints(level: 0, arrayRef: array, digests: [], shaKeys: [])
            prints.digests.reserveCapacity(elements.count * Self.digestSize)
            prints.shaKeys.reserveCapacity(elements.count)
            var form: [UInt8] = []
            var j = 0
            for (i, element) in elements.enumerated() {
                let entry = entries[i]
                while j < old.count, old[j].path < entry.path { j += 1 }
                var key = entry.sha256
                let shaKey = key.withUTF8 { Self.shaKey(UnsafeRawBufferPointer($0)) }
                if j < old.count, old[j] == entry, oldPrints.shaKeys[j] == shaKey {
                    let at = j * Self.digestSize
                    prints.digests += oldPrints.digests[at..<(at + Self.digestSize)]
                    prints.shaKeys.append(shaKey)
                    continue
                }
                // Written out and hashed, as ``init(manifest:)`` does.
                guard try v.kind(element) == .dictionary, let path = try v.value(element, forASCIIKey: "path"), try v.kind(path) == .string else {
                    return nil
                }
                form.removeAll(keepingCapacity: true)
                if try v.written(element, into: &form) {
                    form.withUnsafeBytes { ContentHash.appendSHA256(of: $0, prefix: Self.digestSize, to: &prints.digests) }
                } else {
                    prints.digests += repeatElement(0, count: Self.digestSize)
                }
                let sha = try v.value(element, forASCIIKey: "sha256").flatMap { r throws(PlistError) in try v.asciiBytes(r) }
                prints.shaKeys.append(sha.map(Self.shaKey) ?? 0)
            }
            return prints
        }
        guard let found = found ?? nil else { return nil }
        self = found
    }
}
