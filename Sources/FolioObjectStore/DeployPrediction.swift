import FolioPlist
import FolioPublished
import FolioSupport

/// The object files an edge will ask for after the begin of an edit's deploy, predicted by the
/// client: the brotli variants of the objects production's new manifest names that the
/// previous version did not (the edge rebuilds the objects and their gzip variants from the
/// delta, but not brotli's quality 11 at the builder's bytes). Sent with the first plan, they let
/// it commit at once (``EdgeDeployClient/finish(_:with:)``), so that an edit deploys in two
/// requests. Made while the begin is under way, from the two manifests read in place (each
/// entry's digest, and the new entries alone decoded: 10,000 entries in a few milliseconds);
/// used only when the edge serves that previous version, and a wrong guess costs bytes, never
/// the deploy.
package struct DeployPrediction: Sendable {
    /// The version the prediction is from: the edge must serve it.
    package let base: Int
    /// The files, relative to the published root, in the new manifest's order.
    package let files: [String]

    /// The prediction for `tree`'s production channel from the version before it; nil when
    /// its manifests cannot be read (no prediction: the plan names what the edge lacks).
    package init?(_ tree: DeployTree) {
        let version = tree.version
        guard version > 1,
            let new = Self.entries(tree.root, PublishedLayout.manifest),
            let previous = Self.entries(tree.root, PublishedLayout.versionedManifest(version - 1)),
            let had = previous.view({ (v: BinaryPlistView) throws(PlistError) in Set(try Self.digests(v)) }),
            let added = new.view({ (v: BinaryPlistView) throws(PlistError) in try Self.added(v, excluding: had) })
        else { return nil }
        base = version - 1
        var seen = Set<String>()
        files = added.compactMap { entry in
            guard seen.insert(entry.sha256).inserted, entry.size <= PublishedCompression.largeObject else { return nil }
            return entry.brotliObjectPath
        }
    }

    /// The files to send with the first plan when the edge serves `served`: none for another version.
    package func files(servedVersion served: Int) -> [String] { served == base ? files : [] }

    /// A manifest's binary plist whose top dictionary holds its `entries`: the file's own, or a
    /// signed manifest's inner one.
    struct Entries {
        var bytes: [UInt8]

        func view<R>(_ body: (BinaryPlistView) throws(PlistError) -> R) -> R? {
            try? BinaryPlistView.with(bytes) { (v: inout BinaryPlistView) throws(PlistError) in try body(v) }
        }
    }

    private static func entries(_ root: String, _ relative: String) -> Entries? {
        guard let bytes = try? FileIO.read(PublishedLayout.path(root, relative)), bytes.starts(with: Array("bplist00".utf8)) else { return nil }
        let inner = Entries(bytes: bytes).view { (v: BinaryPlistView) throws(PlistError) -> [UInt8]? in
            var v = v
            guard try v.kind(v.top) == .dictionary else { return nil }
            if try v.value(v.top, forASCIIKey: "entries") != nil { return bytes }
            guard let signed = try v.value(v.top, forASCIIKey: "manifest"), case .data(let data) = try v.decode(signed) else { return nil }
            return Array(data)
        }
        return (inner ?? nil).map(Entries.init)
    }

    /// The elements of the `entries` array in the top dictionary of `v`.
    private static func elements(_ v: BinaryPlistView) throws(PlistError) -> [Int] {
        guard let array = try v.value(v.top, forASCIIKey: "entries"), try v.kind(array) == .array else {
            throw PlistError(.badMarker, "the manifest has no entries array")
        }
        return try v.elements(array)
    }

    /// Each entry's `sha256`.
    private static func digests(_ v: BinaryPlistView) throws(PlistError) -> [String] {
        var out: [String] = []
        for element in try elements(v) {
            guard try v.kind(element) == .dictionary, let sha = try v.value(element, forASCIIKey: "sha256") else { continue }
            out.append(try v.string(sha))
        }
        return out
    }

    /// The entries whose `sha256` is not in `had`, decoded.
    private static func added(_ v: BinaryPlistView, excluding had: Set<String>) throws(PlistError) -> [Manifest.Entry] {
        var view = v
        var out: [Manifest.Entry] = []
        for element in try elements(v) {
            guard try v.kind(element) == .dictionary, let sha = try v.value(element, forASCIIKey: "sha256"), !had.contains(try v.string(sha)) else {
                continue
            }
            guard let entry = try? Manifest.Entry(plist: try view.decode(element), at: "entry") else { continue }
            out.append(entry)
        }
        return out
    }
}
