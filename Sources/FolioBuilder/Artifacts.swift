import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport

/// A compiled entry before it is written: its logical path, its object's bytes and variants.
package struct Artifact: Sendable {
    package var path: String
    /// The object's bytes; empty for an entry reused from the build cache (already on disk) and
    /// for one copied from its source file.
    package var bytes: [UInt8]
    /// The file the object is copied from, a chunk at a time, and its size (assets gzip would
    /// not shrink: they are not held in memory).
    package var sourceFile: (path: String, size: Int)?
    package var sha256: String
    package var gzip: [UInt8]?
    /// The brotli variant, when it is smaller than the gzip one.
    package var brotli: [UInt8]?
    package var contentType: String = Manifest.plistContentType
    package var locale: String?
    package var kind: String?
    package var cache: Manifest.CacheHint?
    /// The project file's minimum app version for it, if any.
    package var minimumAppVersion: String?
    /// Whether a gzip variant is worth trying (not for already-compressed images, audio, …).
    package var compressible = true
    /// The source files it was compiled from.
    package var sources: [String] = []
    /// Set for an entry reused from the build cache: its object and variants are on disk, with
    /// these sizes.
    package var reused: ReusedSizes?
    /// The gzip variant on disk is damaged and must be replaced.
    package var replaceGzip = false
    /// The brotli variant on disk is damaged and must be replaced.
    package var replaceBrotli = false
    /// For an object larger than one gzip chunk: its first chunks, already being compressed
    /// while the rest was encoded.
    package var gzipStream: GzipChunkStream?

    package init(
        path: String, bytes: [UInt8], sha256: String, contentType: String = Manifest.plistContentType, locale: String? = nil,
        gzipStream: GzipChunkStream? = nil
    ) {
        self.path = path
        self.bytes = bytes
        self.sha256 = sha256
        self.contentType = contentType
        self.locale = locale
        self.gzipStream = gzipStream
    }

    /// An entry reused from the build cache. (Not delegating to `init(path:…)`: that made
    /// each of a rebuild's 20,000 reused artifacts, then copied it.)
    package init(reusing entry: Manifest.Entry, source: String) {
        path = entry.path
        bytes = []
        sha256 = entry.sha256
        contentType = entry.contentType
        locale = entry.locale
        kind = entry.kind
        cache = entry.cache
        sources = [source]
        reused = ReusedSizes(size: entry.size, gzipSize: entry.gzipSize, brSize: entry.brSize)
    }

    /// What a reused entry's artifact keeps of it beyond its own fields: its object's sizes. A
    /// plain value: the 20,000 artifacts of a rebuild are looked at several times, and each look
    /// at a whole `Manifest.Entry` retained and released its six strings.
    package struct ReusedSizes: Sendable, Equatable {
        package var size: Int
        package var gzipSize: Int?
        package var brSize: Int?
    }

    /// The object's size.
    package var size: Int { reused?.size ?? sourceFile?.size ?? bytes.count }
    /// The gzip variant's size, when there is one.
    package var gzipSize: Int? { if let reused { reused.gzipSize } else { gzip?.count } }
    /// The brotli variant's size, when there is one.
    package var brSize: Int? { if let reused { reused.brSize } else { brotli?.count } }
    /// The object's file extension.
    package var objectExtension: String { PublishedLayout.objectExtension(forPath: path) }

    /// Its manifest entry.
    package var entry: Manifest.Entry {
        var e = Manifest.Entry(
            path: path, sha256: sha256, size: size, gzipSize: gzipSize, contentType: contentType, locale: locale, kind: kind,
            cache: cache, brSize: brSize)
        e.minimumAppVersion = minimumAppVersion
        return e
    }

    /// Whether the build cache may record it: compiled from one file that compiles alone.
    package var cacheable: Bool { kind == DataKind.kindName || kind == DocumentKind.kindName || kind == AssetKind.kindName }
}
