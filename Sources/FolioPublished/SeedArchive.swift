import FolioPlist
import FolioSupport
import Foundation

/// A published version packed into one file: the manifest's bytes and every object it names.
/// `folio-build --seed FILE` writes it; an app bundles it as its first-run and offline data.
///
/// The file is a binary plist `{manifest: data, objects: {sha256: data}}`, uncompressed so that
/// the same published version gives the same bytes whatever compressor a machine has (git and
/// app packaging compress it anyway). Older gzip-wrapped archives are still read.
package struct SeedArchive: Sendable, Equatable {
    package var manifestBytes: [UInt8]
    package var objects: [String: [UInt8]]

    package init(manifestBytes: [UInt8], objects: [String: [UInt8]]) {
        self.manifestBytes = manifestBytes
        self.objects = objects
    }

    /// Packs the version `root/manifest.plist` names, checking every object's hash; only the
    /// entries whose logical paths `include` accepts carry their objects.
    /// Another channel's seed (`channel`) holds that channel's manifest.
    package static func pack(root: String, channel: String = Channel.production, include: (String) -> Bool = { _ in true }) throws -> SeedArchive {
        let manifestBytes = try FileIO.read(PublishedLayout.channelManifest(root, channel))
        let manifest = try Manifest(bytes: manifestBytes)
        var objects: [String: [UInt8]] = [:]
        for e in manifest.entries where objects[e.sha256] == nil && include(e.path) {
            let bytes = try FileIO.read(PublishedLayout.path(root, e.objectPath))
            guard e.matches(bytes) else {
                throw ManifestError("\(root)/\(e.objectPath) does not match its hash")
            }
            objects[e.sha256] = bytes
        }
        return SeedArchive(manifestBytes: manifestBytes, objects: objects)
    }

    /// The archive's bytes.
    package func encoded() -> [UInt8] {
        let plist = PlistValue.dict([
            "manifest": .data(Data(manifestBytes)),
            "objects": .dict(objects.mapValues { .data(Data($0)) }),
        ])
        return BinaryPlist.encode(plist)
    }

    /// Unpacks `encoded()` output; with `verify`, checks every object against its name
    /// (readers that verify each object they use can skip it).
    package static func decode(_ bytes: [UInt8], verify: Bool = true) throws -> SeedArchive {
        let raw = bytes.starts(with: [0x1F, 0x8B]) ? try Gzip.decompress(bytes, maxSize: 256 << 20) : bytes
        let plist = try BinaryPlist.decode(raw)
        guard let manifest = plist["manifest"]?.dataValue, let objects = plist["objects"]?.dictValue else {
            throw ManifestError("seed archive lacks manifest or objects")
        }
        var out: [String: [UInt8]] = [:]
        for (sha, value) in objects {
            guard let data = value.dataValue, !verify || ContentHash.sha256Hex(data) == sha else {
                throw ManifestError("seed object \(sha) does not match its hash")
            }
            out[sha] = Array(data)
        }
        return SeedArchive(manifestBytes: Array(manifest), objects: out)
    }
}
