/// The `Content-Type`, `Cache-Control` and `Content-Encoding` a file of a published directory is
/// served with: what `folio-edge` sends for it, and what an upload to object storage stores
/// with it, so a cache tier in front of either sees the same.
package enum PublishedHeaders {
    /// Compiled plists, manifests, heads, deltas, key lists.
    package static let plistType = Manifest.plistContentType
    /// `manifest.json`.
    package static let jsonType = "application/json; charset=utf-8"
    /// An object no manifest names a type for.
    package static let unknownType = "application/octet-stream"

    /// What a file is, for its headers.
    package enum Kind: Equatable, Sendable {
        /// `manifest.plist`, its mirrors, the key list and the head: the manifest's lifetime.
        case mutable
        /// `manifests/` and `deltas/`: the objects' (immutable) lifetime.
        case immutable
        /// `objects/`: immutable, typed by the entries that name them.
        case object
    }

    /// The kind of a path relative to the published root (`channels/<name>/…` as its channel's
    /// own); nil for a file that is not part of a published directory.
    package static func kind(of relative: String) -> Kind? {
        var path = Substring(relative)
        if path.utf8.starts(with: Prefix.objects) { return .object }
        if path.utf8.starts(with: Prefix.channels) {
            let parts = path.utf8.split(separator: UInt8(ascii: "/"), maxSplits: 2).map { Substring($0) }
            guard parts.count == 3 else { return nil }
            path = parts[2]
        }
        if path.utf8.starts(with: Prefix.deltas) || path.utf8.starts(with: Prefix.manifests) { return .immutable }
        let name = String(path)
        return mutableNames.contains(name) || stripEncoding(name).encoding != nil && mutableNames.contains(stripEncoding(name).base) ? .mutable : nil
    }

    /// The directories' prefixes, as bytes: ``kind(of:)`` runs for each file of a deploy.
    private enum Prefix {
        static let objects = Array((PublishedLayout.objects + "/").utf8)
        static let channels = Array((PublishedLayout.channels + "/").utf8)
        static let deltas = Array((PublishedLayout.deltas + "/").utf8)
        static let manifests = Array((PublishedLayout.manifests + "/").utf8)
    }

    /// The mutable files' names, in a channel's directory.
    private static let mutableNames: Set<String> = [
        PublishedLayout.manifest, PublishedLayout.manifestGzip, PublishedLayout.manifestBrotli, PublishedLayout.manifestJSON,
        PublishedLayout.keyList, PublishedLayout.head,
    ]

    /// `x.plist.gz` → (`x.plist`, `gzip`), `x.plist.br` → (`x.plist`, `br`), else (`x`, nil).
    package static func stripEncoding(_ name: String) -> (base: String, encoding: String?) {
        if name.hasSuffix(".gz") { return (String(name.dropLast(3)), "gzip") }
        if name.hasSuffix(".br") { return (String(name.dropLast(3)), "br") }
        return (name, nil)
    }

    /// The content type of a non-object file (by its name without `.gz`/`.br`).
    package static func contentType(ofFile base: String) -> String {
        base.hasSuffix(".json") ? jsonType : plistType
    }

    /// The Cache-Control of a kind under `manifest`'s hints (objects and immutable files: its
    /// `object` hint; mutable files: its `manifest` hint).
    package static func cacheControl(_ kind: Kind, manifest: Manifest) -> String {
        manifest.cacheHint(kind == .mutable ? "manifest" : "object").cacheControl
    }
}
