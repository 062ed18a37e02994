import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport

/// The bytes of the mirrors of a `manifest.plist` other than gzip, made before they are written
/// (after the commit point), so that they can be made while the deltas and the manifest are.
struct ManifestMirrors: Sendable {
    /// The key list of a signed manifest (the manifest carries its own copy).
    var keyList: [UInt8]?
    /// `manifest.plist.br`, when brotli is on and it comes out smaller than the gzip mirror (a
    /// manifest of many entries is mostly SHA-256 digests, where gzip often wins); nil means
    /// none, and one on disk is removed. Past 256 KiB the quality drops to 1: a 20,000-entry
    /// manifest in about 12 ms.
    var brotli: [UInt8]?
    var json: [UInt8]

    /// The mirrors of `plist`, whose value is `value`. Only a manifest with an expiry is signed:
    /// an unsigned one is not decoded again (`signed` is the envelope when this build signed it).
    init(value: PlistValue, plist: [UInt8], gzipSize: Int, signed: SignedManifest?, expires: Bool, brotliQuality: Int32?) throws(PlistError) {
        let envelope = signed ?? (expires ? try? SignedManifest.decode(plist) : nil)
        keyList = envelope?.keyList.bytes
        let quality = brotliQuality.map { PublishedCompression.manifestBrotliQuality($0, size: plist.count) }
        if let quality, let br = try? Brotli.compress(plist, quality: quality), br.count < gzipSize { brotli = br }
        json = try JSONPlist.encode(Manifest.jsonMirror(value, signed: envelope))
    }
}
