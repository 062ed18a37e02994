import FolioPublished
import FolioSupport
import Foundation

/// The ``ManifestPrints`` of a channel's last versions, kept between builds in the channel's
/// directory as `.folio-build-prints` (never served, like the build cache): each delta from an
/// older version then compares 16 bytes per entry instead of both manifest files.
///
/// Only a cache: prints are found by their manifest file's SHA-256 and checked against their own
/// checksum, so a missing, stale or damaged file means only that the prints are made again
/// from the manifests.
package struct ManifestPrintStore: Sendable {
    static let fileName = ".folio-build-prints"
    let path: String
    /// The stored prints read, by manifest SHA-256.
    private let stored: [String: [UInt8]]

    init(channelDir: String) {
        path = channelDir + "/" + Self.fileName
        stored = Self.parse((try? FileIO.read(path)) ?? [])
    }

    /// The prints of the manifest file `bytes` whose SHA-256 is `sha256`, as stored when they
    /// are there and sound, else made from the file; and their stored form. Nil when the file
    /// is not a manifest ``ManifestPrints`` takes.
    func prints(for sha256: String, bytes: [UInt8]) -> (prints: ManifestPrints, stored: [UInt8])? {
        if let stored = stored[sha256], let prints = ManifestPrints(stored: stored, manifestSHA256: sha256) { return (prints, stored) }
        return ManifestPrints(manifest: bytes).map { ($0, $0.stored(manifestSHA256: sha256)) }
    }

    /// The prints of a new manifest file `bytes` (SHA-256 `sha256`) whose entries array holds
    /// `entries`: as stored when they are there, else with the prints of the entries it shares
    /// with `previous` (a manifest file whose prints are stored, and its entries in file order)
    /// taken from those (``ManifestPrints/init(manifest:entries:reusing:of:)``), else made from
    /// the file. The same prints every way (tests compare them).
    func prints(
        for sha256: String, bytes: [UInt8], entries: [Manifest.Entry], previous: (sha256: String, entries: [Manifest.Entry])?
    ) -> (prints: ManifestPrints, stored: [UInt8])? {
        if let stored = stored[sha256], let prints = ManifestPrints(stored: stored, manifestSHA256: sha256) { return (prints, stored) }
        if let previous, let kept = stored[previous.sha256], let old = ManifestPrints(stored: kept, manifestSHA256: previous.sha256),
            let prints = ManifestPrints(manifest: bytes, entries: entries, reusing: old, of: previous.entries)
        {
            return (prints, prints.stored(manifestSHA256: sha256))
        }
        return prints(for: sha256, bytes: bytes)
    }

    /// Replaces the file with these stored prints; not made durable (a cache).
    func save(_ records: [[UInt8]]) {
        var out: [UInt8] = []
        out.reserveCapacity(records.reduce(0) { $0 + 8 + $1.count })
        for record in records {
            withUnsafeBytes(of: UInt64(record.count).littleEndian) { out += $0 }
            out += record
        }
        try? FileIO.writeAtomically(out, to: path, sync: false)
    }

    /// The file's records (a length, then one ``ManifestPrints/stored(manifestSHA256:)``), by
    /// the SHA-256 each names; reading stops at the first that does not fit.
    static func parse(_ bytes: [UInt8]) -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        var at = 0
        while at + 8 <= bytes.count {
            let n = bytes.withUnsafeBytes { Int(truncatingIfNeeded: UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self))) }
            guard n >= 36, n <= bytes.count - at - 8 else { break }
            let record = Array(bytes[(at + 8)..<(at + 8 + n)])
            out[ContentHash.hex(record[4..<36])] = record
            at += 8 + n
        }
        return out
    }
}
