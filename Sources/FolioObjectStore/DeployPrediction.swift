import FolioPublished
import FolioSupport

/// The object files an edge will ask for after the begin of an edit's deploy, predicted by the
/// client: the brotli variants of the objects production's new manifest names that the
/// previous version did not (the edge rebuilds the objects and their gzip variants from the
/// delta, but not brotli's quality 11 at the builder's bytes). Sent with the first plan, they let
/// it commit at once (``EdgeDeployClient/finish(_:with:)``), so that an edit deploys in two
/// requests. Made from the two manifests while the begin is under way; used only when the edge
/// serves that previous version, and a wrong guess costs bytes, never the deploy. Not made for
/// a manifest past ``maxManifestBytes``: reading two would outlast the begin (about 20 ms a MB).
package struct DeployPrediction: Sendable {
    package static let maxManifestBytes = 128 << 10

    /// The version the prediction is from: the edge must serve it.
    package let base: Int
    /// The files, relative to the published root, in the new manifest's order.
    package let files: [String]

    /// The prediction for `tree`'s production channel from the version before it; nil when
    /// its manifests cannot be read (no prediction: the plan names what the edge lacks).
    package init?(_ tree: DeployTree) {
        let version = tree.version
        guard version > 1, let size = tree.channels[Channel.production]?.size, size <= Self.maxManifestBytes, let new = Self.manifest(tree.root, PublishedLayout.manifest), new.version == version,
            let previous = Self.manifest(tree.root, PublishedLayout.versionedManifest(version - 1))
        else { return nil }
        base = version - 1
        let had = Set(previous.allEntries.map(\.sha256))
        var seen = Set<String>()
        files = new.allEntries.compactMap { entry in
            guard !had.contains(entry.sha256), seen.insert(entry.sha256).inserted, entry.size <= PublishedCompression.largeObject else { return nil }
            return entry.brotliObjectPath
        }
    }

    /// The files to send with the first plan when the edge serves `served`: none for another version.
    package func files(servedVersion served: Int) -> [String] { served == base ? files : [] }

    private static func manifest(_ root: String, _ relative: String) -> Manifest? {
        try? Manifest(bytes: FileIO.read(PublishedLayout.path(root, relative)))
    }
}
