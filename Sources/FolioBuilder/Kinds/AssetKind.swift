import FolioPublished
import FolioSupport

/// Every other file (images, audio, PDF, fonts, data files served as they are): published as
/// it is, content-addressed, with its content type from ``MediaTypes`` and a gzip variant only
/// for compressible types. The others are hashed and copied a chunk at a time, so a build's
/// memory does not grow with its images and videos.
package struct AssetKind: PerFileKind {
    package static let kindName = "asset"
    package var name: String { Self.kindName }

    package init() {}

    package func claims(_ file: SourceFile) -> Bool { true }

    package func compile(_ file: SourceFile, _ project: BuildProject, into diags: inout Diagnostics) throws -> CompiledItem? {
        guard Manifest.isValidPath(file.relativePath) else {
            diags.error(file.fullPath, 1, 1, "the name cannot be a published path (control characters or a backslash); rename the file")
            return nil
        }
        let type = MediaTypes.type(forPath: file.relativePath)
        guard type.compressible else {
            let (sha256, size) = try ContentHash.sha256Hex(file: file.fullPath)
            return CompiledItem(path: file.relativePath, file: file.fullPath, size: size, sha256: sha256, contentType: type.name, kind: name)
        }
        return CompiledItem(
            path: file.relativePath, bytes: try file.read(), contentType: type.name, compressible: true, kind: name,
            sources: [file.fullPath])
    }
}

/// Content types by file extension, after nginx's `mime.types`, and whether gzip helps them.
package enum MediaTypes {
    package struct MediaType: Sendable, Equatable {
        package var name: String
        package var compressible: Bool
    }

    /// The type of an extensionless or unknown file.
    package static let fallback = MediaType(name: "application/octet-stream", compressible: false)

    /// The type for a path's extension (case-insensitive).
    package static func type(forPath path: String) -> MediaType {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return fallback }
        return table[name[name.index(after: dot)...].lowercased()] ?? fallback
    }

    private static func entries(_ type: String, compressible: Bool, _ exts: String) -> [(String, MediaType)] {
        exts.split(separator: " ").map { (String($0), MediaType(name: type, compressible: compressible)) }
    }

    private static let text: [(String, String)] = [
        ("text/html; charset=utf-8", "html htm shtml"), ("text/css; charset=utf-8", "css"), ("text/xml; charset=utf-8", "xml"),
        ("text/plain; charset=utf-8", "txt text log"), ("text/csv; charset=utf-8", "csv"), ("text/tab-separated-values; charset=utf-8", "tsv"),
        ("text/markdown; charset=utf-8", "mdown mkd"), ("text/vtt; charset=utf-8", "vtt"), ("text/calendar; charset=utf-8", "ics"),
        ("text/javascript; charset=utf-8", "js mjs"), ("application/json", "map geojson webmanifest"), ("application/ld+json", "jsonld"),
        ("image/svg+xml", "svg svgz"), ("application/xhtml+xml", "xhtml"), ("application/rss+xml", "rss"), ("application/atom+xml", "atom"),
        ("application/wasm", "wasm"), ("application/x-font-ttf", "ttf"), ("application/vnd.ms-fontobject", "eot"),
        ("font/otf", "otf"), ("application/x-ndjson", "ndjson jsonl"), ("application/sql", "sql"), ("application/x-yaml", "lock"),
        ("image/bmp", "bmp"), ("image/x-icon", "ico cur"), ("image/tiff", "tif tiff"), ("image/vnd.adobe.photoshop", "psd"),
        ("application/x-tar", "tar"), ("audio/wav", "wav"), ("application/rtf", "rtf"), ("text/x-c; charset=utf-8", "c h"),
        ("application/x-sh", "sh"), ("application/octet-stream", "bin dat"),
    ]

    private static let packed: [(String, String)] = [
        ("image/png", "png"), ("image/jpeg", "jpg jpeg jfif"), ("image/gif", "gif"), ("image/webp", "webp"), ("image/avif", "avif"),
        ("image/heic", "heic"), ("image/heif", "heif"), ("image/jxl", "jxl"), ("audio/mpeg", "mp3"), ("audio/mp4", "m4a"),
        ("audio/aac", "aac"), ("audio/ogg", "ogg oga opus"), ("audio/flac", "flac"), ("video/mp4", "mp4 m4v"),
        ("video/quicktime", "mov"), ("video/webm", "webm"), ("application/pdf", "pdf"), ("font/woff", "woff"), ("font/woff2", "woff2"),
        ("application/zip", "zip"), ("application/gzip", "gz tgz"), ("application/x-bzip2", "bz2"), ("application/x-xz", "xz"),
        ("application/zstd", "zst"), ("application/x-7z-compressed", "7z"), ("application/epub+zip", "epub"),
        ("application/vnd.apple.pkpass", "pkpass"), ("model/vnd.usdz+zip", "usdz"), ("application/x-sqlite3", "sqlite db"),
        ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "docx"),
        ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
        ("application/vnd.openxmlformats-officedocument.presentationml.presentation", "pptx"),
        ("application/x-apple-diskimage", "dmg"), ("application/java-archive", "jar"),
    ]

    private static let table: [String: MediaType] = {
        var t: [String: MediaType] = [:]
        for (type, exts) in text { for (k, v) in entries(type, compressible: type != "application/octet-stream", exts) { t[k] = v } }
        for (type, exts) in packed { for (k, v) in entries(type, compressible: false, exts) { t[k] = v } }
        return t
    }()
}
