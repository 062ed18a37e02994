import FolioKitCore
import FolioPlist
import FolioPlistXML
import FolioPublished
import FolioSupport
import Foundation

/// One side of a diff: a manifest and a way to get its objects.
struct DiffSide {
    var label: String
    var manifest: Manifest
    /// Who signed it (``SignedManifest/summary``), when signed; not verified: diff compares.
    var signing: PlistValue? = nil
    /// The release applied (`+N`): the side is one install's view, with no releases to compare.
    var appliedRelease: Int? = nil
    var load: (Manifest.Entry) async throws -> [UInt8]

    /// Resolves `spec`: a published directory, a manifest file (or its JSON mirror), an edge URL,
    /// or `@N`, each optionally followed by `#CHANNEL` (a bare `#CHANNEL` is the edge's) and `+N`
    /// (as the installs in release N of that manifest see it).
    static func resolve(_ spec: String, places: DiffPlaces) async throws -> DiffSide {
        let target = try DiffTarget(spec, edge: places.edgeURL)
        var side = try await resolve(target.base, channel: target.channel, places: places)
        if target.channel != Channel.production { side.label += " channel \(target.channel)" }
        guard let release = target.release else { return side }
        guard side.manifest.release(release) != nil else {
            let ids = side.manifest.releases.map { String($0.id) }
            throw CLIError(
                "'\(spec)': version \(side.manifest.version) has no release \(release)" + (ids.isEmpty ? " (it has none)" : "; it has \(ids.joined(separator: ", "))"),
                exitCode: 2)
        }
        side.manifest = side.manifest.applying(release: release)
        side.appliedRelease = release
        side.label += " release \(release)"
        return side
    }

    /// One side without its release: `spec` in `channel`.
    static func resolve(_ spec: String, channel: String, places: DiffPlaces) async throws -> DiffSide {
        if spec.hasPrefix("@") { return try await version(spec, channel: channel, places: places) }
        if spec.hasPrefix("http://") || spec.hasPrefix("https://") { return try await edge(spec, channel: channel, http: places.http) }
        return try local(spec, channel: channel, places: places)
    }

    /// A manifest's bytes as a side: a binary/XML manifest, a signed one, or the JSON mirror.
    static func parse(_ bytes: [UInt8], from: String) throws -> (Manifest, PlistValue?) {
        if ManifestMirror.isJSON(bytes) { return try ManifestMirror.read(bytes, from: from) }
        do {
            // The manifest readers take binary: an XML manifest is read as the same value in binary.
            let bytes = PlistFormat.sniff(bytes) == .xml ? BinaryPlist.encode(try XMLPlist.decode(bytes)) : bytes
            // A plain manifest is decoded once; a signed one is unwrapped, and its signing read.
            let value = try PlistValue.decode(bytes)
            if try Manifest.signedBytes(value) == nil { return (try Manifest(plist: value), nil) }
            let m = try Manifest(bytes: bytes)
            return (m, (try? SignedManifest.decode(bytes, parsed: m))?.summary)
        } catch { throw CLIError("\(from) is not a readable manifest: \(error)", exitCode: 2) }
    }
}
