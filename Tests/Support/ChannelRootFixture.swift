import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// A published root built by hand: objects by hash at the root, production's manifest at the
/// root and other channels' under `channels/<name>/`.
package struct ChannelRootFixture {
    /// The published root (a fresh temporary directory).
    package let root = Harness.tempDir("edge-channels")

    package init() {}

    /// Writes `text` as the object of `path` (and its gzip variant with `gzip`); returns its entry.
    package func object(_ path: String, _ text: String, gzip: Bool = false) throws -> Manifest.Entry {
        let bytes = Array(text.utf8)
        var entry = Manifest.Entry(path: path, sha256: ContentHash.sha256Hex(bytes), size: bytes.count, gzipSize: nil, contentType: "text/plain")
        try FileIO.makeDirectory(root + "/objects")
        try FileIO.writeAtomically(bytes, to: root + "/" + entry.objectPath, sync: false)
        if gzip {
            let gz = try Gzip.compress(bytes)
            entry.gzipSize = gz.count
            try FileIO.writeAtomically(gz, to: root + "/" + entry.gzipObjectPath!, sync: false)
        }
        return entry
    }

    /// A manifest of `channel` (nil: production), created `version` seconds after a fixed date.
    package static func manifest(_ version: Int, channel: String? = nil, entries: [Manifest.Entry], releases: [Release] = []) -> Manifest {
        var m = Manifest(version: version, createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(version)), entries: entries)
        m.channel = channel
        m.releases = releases
        return m
    }

    /// Publishes `manifest` into `channel` as the builder does: the versioned copy and the
    /// head, then `manifest.plist` by rename. Returns the manifest's bytes.
    @discardableResult
    package func publish(_ manifest: Manifest, channel: String = Channel.production) throws -> [UInt8] {
        let dir = PublishedLayout.channelRoot(root, channel)
        try FileIO.makeDirectory(dir + "/" + PublishedLayout.manifests)
        let bytes = BinaryPlist.encode(manifest.plist)
        try FileIO.writeAtomically(bytes, to: dir + "/" + PublishedLayout.versionedManifest(manifest.version), sync: false)
        let head = DeltaHead(
            version: manifest.version, sha256: ContentHash.sha256Hex(bytes), size: bytes.count, gzipSize: nil, deltaHistory: 0,
            deltasFrom: [], waypoint: nil)
        try FileIO.writeAtomically(head.bytes, to: dir + "/" + PublishedLayout.head, sync: false)
        try FileIO.writeAtomically(bytes, to: dir + "/" + PublishedLayout.manifest, sync: false)
        return bytes
    }

    /// Removes the root.
    package func cleanup() { Harness.cleanup(root) }
}
