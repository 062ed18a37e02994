import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// The bytes of the mirrors of a `manifest.plist` other than gzip, made before they are written
/// (after the commit point), so that they can be made while the gzip mirror, the deltas and the
/// manifest are.
struct ManifestMirrors: Sendable {
    /// The key list of a signed manifest (the manifest carries its own copy).
    var keyList: [UInt8]?
    /// The manifest brotli-compressed, when brotli is on; `manifest.plist.br` only when smaller
    /// than the gzip mirror (``brotli(smallerThan:)``). Past 256 KiB the quality drops to 1: a
    /// 20,000-entry manifest in about 12 ms.
    var compressed: [UInt8]?
    var json: [UInt8]

    /// `manifest.plist.br` beside a gzip mirror of `gzipSize` bytes: nil (none, and one on disk
    /// is removed) unless smaller (a manifest of many entries is mostly SHA-256 digests, where
    /// gzip often wins).
    func brotli(smallerThan gzipSize: Int) -> [UInt8]? { compressed.flatMap { $0.count < gzipSize ? $0 : nil } }

    /// The mirrors of `plist`, the bytes of `manifest`. Only a manifest with an expiry is
    /// signed: an unsigned one is not decoded again (`signed` is the envelope when this build
    /// signed it). The JSON mirror is made from `previous` (the mirror this builder wrote for
    /// the current manifest, and that manifest) where it can be (``ManifestJSONEdit``: the
    /// same bytes), else encoded whole.
    init(
        manifest: Manifest, plist: [UInt8], signed: SignedManifest?, expires: Bool, brotliQuality: Int32?,
        previous: (json: [UInt8], manifest: Manifest)?
    ) throws(PlistError) {
        let envelope = signed ?? (expires ? try? SignedManifest.decode(plist) : nil)
        keyList = envelope?.keyList.bytes
        let quality = brotliQuality.map { PublishedCompression.manifestBrotliQuality($0, size: plist.count) }
        compressed = quality.flatMap { try? Brotli.compress(plist, quality: $0) }
        if let previous, let made = ManifestJSONEdit.mirror(of: manifest, signed: envelope, from: previous.json, of: previous.manifest) {
            json = made
        } else {
            json = try JSONPlist.encode(Manifest.jsonMirror(manifest, signed: envelope))
        }
    }
}

/// Which `manifest.json` this builder wrote for which `manifest.plist`, kept in the channel's
/// directory as `.folio-build-mirror` (never served): the stamps of both files as the last
/// publish left them. When both still match, the JSON mirror on disk is the one this builder
/// made for the current manifest, and the next is made from it (``ManifestJSONEdit``). A
/// missing, damaged or stale record (another program wrote either file, a build was killed
/// before its mirrors) only means the next mirror is encoded whole.
struct ManifestMirrorRecord {
    static let fileName = ".folio-build-mirror"
    private static let magic = Array("FBM1".utf8)

    /// The JSON mirror on disk when it is the one recorded for the manifest on disk.
    static func currentJSON(channelDir: String) -> [UInt8]? {
        guard let record = try? FileIO.read(channelDir + "/" + fileName), record.count == 4 + 64, record.starts(with: magic),
            let manifest = FileStamp.read(PublishedLayout.path(channelDir, PublishedLayout.manifest)),
            let json = FileStamp.read(PublishedLayout.path(channelDir, PublishedLayout.manifestJSON)),
            record[4...].elementsEqual(bytes(manifest, json))
        else { return nil }
        return try? FileIO.read(PublishedLayout.path(channelDir, PublishedLayout.manifestJSON))
    }

    /// Records the manifest and JSON mirror now on disk; not made durable (a cache).
    static func save(channelDir: String) {
        let path = channelDir + "/" + fileName
        guard let manifest = FileStamp.read(PublishedLayout.path(channelDir, PublishedLayout.manifest)),
            let json = FileStamp.read(PublishedLayout.path(channelDir, PublishedLayout.manifestJSON))
        else {
            unlink(path)
            return
        }
        try? FileIO.writeAtomically(magic + bytes(manifest, json), to: path, sync: false)
    }

    private static func bytes(_ a: FileStamp, _ b: FileStamp) -> [UInt8] {
        var out: [UInt8] = []
        for n in a.fields + b.fields { withUnsafeBytes(of: n.littleEndian) { out += $0 } }
        return out
    }
}
