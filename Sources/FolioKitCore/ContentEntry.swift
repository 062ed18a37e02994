import FolioPublished

/// One published logical path: what compiled it, how big it is, and how it may be cached.
public struct ContentEntry: Sendable, Hashable {
    /// A per-path cache policy set by the project file (the edge's `Cache-Control` for the path).
    public struct CachePolicy: Sendable, Hashable {
        /// Seconds a response stays fresh.
        public var maxAge: Int
        /// Seconds a stale response may be served while it is revalidated.
        public var staleWhileRevalidate: Int
        /// Seconds a stale response may be served when the origin fails.
        public var staleIfError: Int
        /// Whether the response never changes while fresh.
        public var immutable: Bool

        /// The `Cache-Control` header value for this policy.
        public var cacheControl: String {
            Manifest.CacheHint(
                maxAge: maxAge, staleWhileRevalidate: staleWhileRevalidate, staleIfError: staleIfError, immutable: immutable
            ).cacheControl
        }

        init(_ hint: Manifest.CacheHint) {
            maxAge = hint.maxAge
            staleWhileRevalidate = hint.staleWhileRevalidate
            staleIfError = hint.staleIfError
            immutable = hint.immutable
        }
    }

    /// The logical path (`articles/intro.plist`, `images/hero.png`).
    public var path: String
    /// The content kind that compiled it (`data`, `document`, `asset`, `sonnet`, `catalog`,
    /// `index`); nil for versions published before content kinds.
    public var kind: String?
    /// The size of its bytes.
    public var size: Int
    /// The size of its gzip variant, when the edge serves one.
    public var gzipSize: Int?
    /// Its MIME type (`application/x-plist` for structured entries, `image/png`, …).
    public var contentType: String
    /// The locale it is for (catalogs), if any.
    public var locale: String?
    /// The lowercase hex SHA-256 of its bytes.
    public var sha256: String
    /// The project's cache policy for this path; nil when the project sets none.
    public var cachePolicy: CachePolicy?
    /// The oldest app version that may read it (the project file's `minimumAppVersion`); an
    /// older app's reads of it throw ``FolioError/Code-swift.struct/updateRequired``.
    public var minimumAppVersion: String?

    /// Whether the entry is a property list (read it with `plist(at:)` or `decode(_:at:)`);
    /// otherwise it is an asset, read with `data(at:)`.
    public var isPropertyList: Bool { contentType == Manifest.plistContentType }

    package init(_ entry: Manifest.Entry) {
        path = entry.path
        kind = entry.kind
        size = entry.size
        gzipSize = entry.gzipSize
        contentType = entry.contentType
        locale = entry.locale
        sha256 = entry.sha256
        cachePolicy = entry.cache.map(CachePolicy.init)
        minimumAppVersion = entry.minimumAppVersion
    }

    /// Whether `path` lies under `prefix`, matched by whole path segments: `articles` and
    /// `articles/` both match `articles/intro.plist` but not `articles-old/x.plist`; an empty
    /// prefix matches everything, and a full path matches itself.
    package static func path(_ path: String, isUnder prefix: String) -> Bool {
        var p = Substring(prefix)
        while p.hasSuffix("/") { p = p.dropLast() }
        while p.hasPrefix("/") { p = p.dropFirst() }
        if p.isEmpty { return true }
        return path == p || path.hasPrefix(p + "/")
    }
}

extension ContentView {
    /// The manifest entry of a logical path; throws `entryNotFound` when there is none.
    package func entry(_ path: String) throws(FolioError) -> Manifest.Entry {
        guard let entry = manifest.entry(path) else {
            throw FolioError(
                .entryNotFound, "no entry \(path) in version \(manifest.version) (\(origin.rawValue)); `folio ls` lists what exists",
                path: path, hasContent: true)
        }
        return entry
    }

    /// The entry of a logical path that holds a property list; throws `invalidContent` for an
    /// asset, naming its content type and pointing at `data(at:)`.
    package func plistEntry(_ path: String) throws(FolioError) -> Manifest.Entry {
        let entry = try self.entry(path)
        guard entry.isPlist else {
            throw FolioError(
                .invalidContent,
                "\(path) is an asset (\(entry.contentType)), not a property list; use data(at:) for its bytes",
                path: path, hasContent: true)
        }
        return entry
    }
}
