import FolioPlist
import FolioPlistXML
import FolioPublished

/// An entry in both versions that differs: its manifest fields (content type, kind, cache
/// policy, locale, and for assets size and SHA-256) and, for property lists, its values.
struct EntryChange {
    var path: String
    var kind: String?
    var contentType: String
    var oldSHA: String
    var newSHA: String
    var isAsset: Bool
    /// Changes of the manifest entry, at `size`, `cache`, `contentType`, ….
    var metadata: [PlistChange] = []
    /// Changes inside the property list (``PlistDiff``).
    var changes: [PlistChange] = []
    var truncated = false
    /// An array in it was too long to align exactly (``ArrayAlignment/cellLimit``).
    var approximate = false

    static let maxChanges = 200

    /// The differences of `o` (old) and `e` (new), nil when only the compressed sizes differ.
    static func compare(_ o: Manifest.Entry, _ e: Manifest.Entry, _ a: DiffSide, _ b: DiffSide) async throws -> EntryChange? {
        let structured = o.isPlist && e.isPlist
        var c = EntryChange(path: e.path, kind: e.kind, contentType: e.contentType, oldSHA: o.sha256, newSHA: e.sha256, isAsset: !structured)
        c.metadata = PlistDiff(metadataView(o, withBytes: !structured), metadataView(e, withBytes: !structured)).changes
        if structured, o.sha256 != e.sha256 {
            let (x, y) = (try await a.load(o), try await b.load(e))
            if let vx = try? PlistValue.decodeAnyFormat(x), let vy = try? PlistValue.decodeAnyFormat(y) {
                let d = PlistDiff(vx, vy, limit: maxChanges)
                (c.changes, c.truncated, c.approximate) = (d.changes, d.truncated, d.approximateArrays > 0)
            } else {
                c.metadata.append(PlistChange(.change, [.key("bytes")], old: .int(Int64(x.count)), new: .int(Int64(y.count))))
            }
        }
        return c.metadata.isEmpty && c.changes.isEmpty ? nil : c
    }

    /// The entry's manifest fields compared: the cache policy as its `Cache-Control`, without the
    /// compressed sizes (they follow the bytes); size and SHA-256 only where the bytes are not
    /// compared value by value.
    static func metadataView(_ e: Manifest.Entry, withBytes: Bool) -> PlistValue {
        guard case .dict(var d) = e.plist else { return e.plist }
        for key in ["path", "gzipSize", "brSize"] { d[key] = nil }
        if !withBytes { (d["sha256"], d["size"]) = (nil, nil) }
        if let cache = e.cache { d["cache"] = .string(cache.cacheControl) }
        return .dict(d)
    }
}
