import FolioKitCore
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

extension DiffSide {
    /// `@N`: version N from the cache, else from the edge's history.
    static func version(_ spec: String, channel: String, places: DiffPlaces) async throws -> DiffSide {
        guard let n = Int(spec.dropFirst()), n >= 1 else { throw CLIError("'\(spec)': @N needs a version number, like @3", exitCode: 2) }
        let cache = ContentCache(dir: places.cachePath, edge: places.edgeURL, channel: channel)
        if let (m, bytes) = cache.manifestFile(version: n), m.channelName == channel {
            let (_, signing) = try parse(bytes, from: "version \(n) in the cache")
            return DiffSide(label: "version \(n) (cache)", manifest: m, signing: signing) { e in
                if let bytes = try? cache.object(e) { return bytes }
                return try await EdgeFetch.object(places.edgeURL, e, http: places.http)
            }
        }
        let bytes = try await EdgeFetch.version(n, channel: channel, places: places)
        let (m, signing) = try parse(bytes, from: "version \(n) from \(places.edgeURL)")
        return DiffSide(label: "version \(n) (\(places.edgeURL))", manifest: m, signing: signing) { e in
            try await EdgeFetch.object(places.edgeURL, e, http: places.http)
        }
    }

    /// An edge URL: its current manifest in `channel`.
    static func edge(_ spec: String, channel: String, http: FolioHTTPConfiguration) async throws -> DiffSide {
        var base = spec
        while base.hasSuffix("/") { base.removeLast() }
        for suffix in ["/" + PublishedLayout.manifest, "/" + PublishedLayout.manifestJSON] where base.hasSuffix(suffix) {
            base.removeLast(suffix.count)
        }
        let bytes = try await EdgeFetch.bytes(base, PublishedLayout.channelPrefix(channel) + PublishedLayout.manifest, http: http)
        let (m, signing) = try parse(bytes, from: base + "/" + PublishedLayout.manifest)
        return DiffSide(label: "\(base) (version \(m.version))", manifest: m, signing: signing) { e in
            try await EdgeFetch.object(base, e, http: http)
        }
    }

    /// A published directory, a manifest file, or a JSON mirror, with its objects beside it.
    static func local(_ spec: String, channel: String, places: DiffPlaces) throws -> DiffSide {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: spec, isDirectory: &isDir) else {
            throw CLIError("'\(spec)' does not exist: pass a published directory, a manifest file, an edge URL or @N", exitCode: 2)
        }
        let (root, manifestPath) = try locate(spec, isDirectory: isDir.boolValue, channel: channel)
        let bytes: [UInt8]
        do { bytes = try FileIO.read(manifestPath) } catch { throw CLIError("cannot read \(manifestPath): \(error)", exitCode: 2) }
        let (m, signing) = try parse(bytes, from: manifestPath)
        let cache = ContentCache(dir: places.cachePath, edge: places.edgeURL, channel: channel)
        return DiffSide(label: "\(spec) (version \(m.version))", manifest: m, signing: signing) { e in
            let path = (root.isEmpty ? "." : root) + "/" + e.objectPath
            if let bytes = try? FileIO.read(path), e.matches(bytes) { return bytes }
            if let bytes = try? cache.object(e) { return bytes }
            throw CLIError("the object for \(e.path) (\(e.sha256)) is neither in \(root)/objects nor in the cache", exitCode: 2)
        }
    }

    /// The published root and the manifest file for `spec`.
    static func locate(_ spec: String, isDirectory: Bool, channel: String) throws -> (root: String, manifest: String) {
        guard isDirectory else {
            // The published directory holding the manifest ("." for a bare file name).
            let parent = FileIO.parent(of: spec).isEmpty ? "." : FileIO.parent(of: spec)
            return (publishedRoot(ofManifestDirectory: parent), spec)
        }
        let inChannels = FileIO.lastComponent(of: FileIO.parent(of: spec)) == PublishedLayout.channels
        let root = inChannels ? FileIO.parent(of: FileIO.parent(of: spec)) : spec
        let manifestPath = PublishedLayout.channelManifest(spec, channel)
        if channel != Channel.production, !FileIO.exists(manifestPath) {
            let held = PublishedLayout.publishedChannels(spec).joined(separator: ", ")
            throw CLIError("\(spec) has no channel \(channel)" + (held.isEmpty ? "" : "; it has \(held)"), exitCode: 2)
        }
        guard FileIO.exists(manifestPath) else {
            throw CLIError("\(spec) is a directory without a \(PublishedLayout.manifest): pass a published directory (folio-build's output)", exitCode: 2)
        }
        return (root, manifestPath)
    }

    /// The published root above a manifest file's directory: past `manifests/` and `channels/NAME/`.
    static func publishedRoot(ofManifestDirectory dir: String) -> String {
        var root = FileIO.lastComponent(of: dir) == PublishedLayout.manifests ? FileIO.parent(of: dir) : dir
        let up = FileIO.parent(of: root)
        if FileIO.lastComponent(of: up) == PublishedLayout.channels { root = FileIO.parent(of: up) }
        return root
    }
}
