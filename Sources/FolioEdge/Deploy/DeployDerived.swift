import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport

/// The files of a published directory an edge makes itself from a deployed manifest or delta
/// instead of having them sent: a channel's mirrors (`manifest.plist.gz`, `.br` past 256 KiB,
/// `manifest.json`, `keylist.plist`), the versioned manifest of the deployed version (the same
/// bytes as `manifest.plist`), and the gzip variants of deltas. Each decodes to what the
/// builder wrote; the builder's compression levels make most of them the same bytes too.
enum DeployDerived {
    /// Whether the edge makes `name` (a path inside a channel's directory) itself for a channel
    /// deployed as `channel` (a delta's variants: ``deltaSource(of:sizes:)``).
    static func isDerived(_ name: String, channel: DeployBegin.Channel?) -> Bool {
        switch name {
        case PublishedLayout.manifestGzip, PublishedLayout.manifestJSON, PublishedLayout.keyList:
            return channel != nil
        case PublishedLayout.manifestBrotli:
            return channel.map { makesManifestBrotli(size: $0.size) } ?? false
        default:
            if let channel, name == PublishedLayout.versionedManifest(channel.version) { return true }
            return false
        }
    }

    /// Whether the edge makes a manifest's brotli mirror: past 256 KiB, where the builder uses
    /// quality 1 (milliseconds); below, its quality 11 takes tens of milliseconds, so it is sent.
    static func makesManifestBrotli(size: Int) -> Bool { PublishedCompression.manifestBrotliQuality(11, size: size) < 11 }

    /// Whether `relative` is one of a delta's files (`deltas/…plist`, `.gz`, `.br`).
    static func isDelta(_ relative: String) -> Bool { DeployPaths.inChannel(relative).hasPrefix(PublishedLayout.deltas + "/") }

    /// The one file of a delta that is sent, the edge making the others from it: its brotli
    /// variant when the client has one (the smallest), else its gzip one, else the delta.
    /// `relative` is any of the three; `sizes` are the client's files.
    static func deltaSource(of relative: String, sizes: [String: Int]) -> String {
        let base = PublishedHeaders.stripEncoding(relative).base
        return [base + ".br", base + ".gz"].first { sizes[$0] != nil } ?? base
    }

    /// What the edge serves of a channel that its next version's mirrors are made from.
    struct Served {
        /// The JSON mirror and the manifest it mirrors.
        var json: [UInt8]
        var manifest: Manifest
        /// Its `manifest.plist.gz` by chunk, when known.
        var manifestGzip: GzipChunks?
    }

    /// The channel's derived files from its manifest's `bytes`, by name inside the channel's
    /// directory: those `wanted` (the client has them) alone; and the chunks of the
    /// `manifest.plist.gz` made. The JSON mirror is made from `served`'s where it can be, and
    /// the gzip variant from the chunks of `served`'s whose bytes did not change.
    static func channelFiles(
        _ bytes: [UInt8], _ manifest: Manifest, served: Served? = nil, wanted: (String) -> Bool
    ) throws(DeployFailure) -> (files: [(name: String, bytes: [UInt8])], manifestGzip: GzipChunks?) {
        let version = manifest.version
        var out: [(name: String, bytes: [UInt8])] = []
        var manifestGzip: GzipChunks?
        func add(_ name: String, _ make: () throws -> [UInt8]?) throws(DeployFailure) {
            guard wanted(name) else { return }
            do { if let made = try make() { out.append((name, made)) } } catch {
                throw DeployFailure(422, "the deployed manifest (version \(version)) has no \(name): \(error)")
            }
        }
        try add(PublishedLayout.versionedManifest(version)) { bytes }
        try add(PublishedLayout.manifestGzip) {
            manifestGzip = try Gzip.compress(bytes, level: PublishedCompression.gzipLevel(bytes.count), reusing: served?.manifestGzip)
            return manifestGzip?.member
        }
        if makesManifestBrotli(size: bytes.count) {
            try add(PublishedLayout.manifestBrotli) { try Brotli.compress(bytes, quality: PublishedCompression.manifestBrotliQuality(11, size: bytes.count)) }
        }
        try add(PublishedLayout.manifestJSON) {
            let signed = manifest.expiresAt == nil ? nil : try? SignedManifest.decode(bytes)
            if let served, let made = ManifestJSONEdit.mirror(of: manifest, signed: signed, from: served.json, of: served.manifest) { return made }
            return try JSONPlist.encode(Manifest.jsonMirror(manifest, signed: signed))
        }
        try add(PublishedLayout.keyList) { manifest.expiresAt == nil ? nil : (try? SignedManifest.decode(bytes))?.keyList.bytes }
        return (out, manifestGzip)
    }

    /// The gzip variant of a delta's `bytes`.
    static func deltaGzip(_ bytes: [UInt8]) throws(DeployFailure) -> [UInt8] {
        do { return try Gzip.compress(bytes, level: 9) } catch { throw DeployFailure(500, "the edge could not gzip a delta: \(error)") }
    }
}
