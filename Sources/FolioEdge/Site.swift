import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import NIOCore
import Synchronization

/// One encoding of a resource, with its response heads prepared on first use (most of a large
/// site's representations are never asked for between two loads: at 100,000 objects the heads
/// made at load were most of the edge's memory).
final class Representation: Sendable {
    let coding: ContentCoding
    /// The bytes, when held in memory.
    let body: ByteBuffer?
    /// The file to stream from, when the memory budget is spent.
    let filePath: String?
    let length: Int
    let etag: String
    /// What the heads are made of.
    let contentType: String
    private let cacheControl: String
    private let lastModified: String
    private let contentLanguage: String?
    private let vary: String
    private let prepared = AtomicLazyReference<Heads>()

    /// The status line and header lines (each ending CRLF) of a full 200, including
    /// Content-Length; the Date line and the blank line follow per response.
    var head200: ByteBuffer { heads.head200 }
    /// The same for 206, without Content-Length and Content-Range (added per response).
    var headPartial: ByteBuffer { heads.headPartial }
    /// The status line and header lines of a 304: ETag, Last-Modified, Cache-Control, Vary (and
    /// Content-Language).
    var head304: ByteBuffer { heads.head304 }
    /// The fields of the 200 and 206 (without Content-Length) and of the 304 for HTTP/2, with
    /// lower-case names; `:status`, the length, the Date and the listener's own fields are
    /// added per response.
    var fields: [(String, String)] { heads.fields }
    var fields304: [(String, String)] { heads.fields304 }

    /// `contentLanguage` (a canonical BCP 47 tag) adds `Content-Language` to the 200, 206 and
    /// 304 heads; `vary` is the `Vary` value of all three.
    init(coding: ContentCoding, body: ByteBuffer?, filePath: String?, length: Int, etag: String,
         contentType: String, cacheControl: String, lastModified: String,
         contentLanguage: String? = nil, vary: String = Resource.varyEncoding) {
        self.coding = coding
        self.body = body
        self.filePath = filePath
        self.length = length
        self.etag = etag
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.lastModified = lastModified
        self.contentLanguage = contentLanguage
        self.vary = vary
    }

    /// The same bytes under another Cache-Control.
    func with(cacheControl: String) -> Representation {
        Representation(
            coding: coding, body: body, filePath: filePath, length: length, etag: etag, contentType: contentType, cacheControl: cacheControl,
            lastModified: lastModified, contentLanguage: contentLanguage, vary: vary)
    }

    /// The heads, made by the first request that needs them (two racing requests may both
    /// make them; one is kept).
    private var heads: Heads {
        if let heads = prepared.load() { return heads }
        return prepared.storeIfNil(Heads(self))
    }

    /// The prepared heads and fields of one representation.
    private final class Heads: Sendable {
        let head200: ByteBuffer
        let headPartial: ByteBuffer
        let head304: ByteBuffer
        let fields: [(String, String)]
        let fields304: [(String, String)]

        init(_ r: Representation) {
            // Each field with its HTTP/1.1 and its HTTP/2 name, both literals (immortal strings:
            // nothing allocated for names per representation).
            typealias Field = (h1: String, h2: String, value: String)
            let language: [Field] = r.contentLanguage.map { [("Content-Language", "content-language", $0)] } ?? []
            let validators: [Field] = [
                ("ETag", "etag", r.etag), ("Last-Modified", "last-modified", r.lastModified),
                ("Cache-Control", "cache-control", r.cacheControl), ("Vary", "vary", r.vary),
            ]
            let encoding: [Field] =
                switch r.coding {
                case .identity: []
                case .gzip: [("Content-Encoding", "content-encoding", "gzip")]
                case .brotli: [("Content-Encoding", "content-encoding", "br")]
                }
            let common: [Field] =
                [("Content-Type", "content-type", r.contentType)] + language + validators + [("Accept-Ranges", "accept-ranges", "bytes")] + encoding
            let notModified = validators + language
            func lines(_ fields: [Field]) -> String { fields.map { "\($0.h1): \($0.value)\r\n" }.joined() }
            // The 206 block is the 200's without its first and last lines: one buffer, sliced.
            let status = "HTTP/1.1 200 OK\r\n", block = lines(common)
            head200 = ByteBuffer(string: status + block + "Content-Length: \(r.length)\r\n")
            headPartial = head200.getSlice(at: head200.readerIndex + status.utf8.count, length: block.utf8.count)!
            head304 = ByteBuffer(string: "HTTP/1.1 304 Not Modified\r\n" + lines(notModified))
            fields = common.map { ($0.h2, $0.value) }
            fields304 = notModified.map { ($0.h2, $0.value) }
        }
    }
}

/// The strong ETags of one content hash: identity, gzip and brotli (with the encoded bytes' own
/// hash, so two different encodings of the same content never share a strong validator).
enum ETags {
    static func identity(_ sha256: String) -> String { "\"\(sha256)\"" }
    /// The SHA-256 an identity ETag names.
    static func sha256(ofIdentity etag: String) -> String { String(etag.dropFirst().dropLast()) }
    static func gzip(_ sha256: String, gzipBytes: [UInt8]) -> String {
        "\"\(sha256)-gz\(ContentHash.sha256Hex(gzipBytes).prefix(16))\""
    }
    static func brotli(_ sha256: String, brotliBytes: [UInt8]) -> String {
        "\"\(sha256)-br\(ContentHash.sha256Hex(brotliBytes).prefix(16))\""
    }
}

/// The SHA-256 of bytes the edge serves and the ETags of the variants made of them, computed
/// where the variants are made.
struct MadeDigests: Sendable {
    var sha256: String
    var gzipETag: String?
    var brotliETag: String?

    init(_ bytes: [UInt8], gzip: [UInt8]?, brotli: [UInt8]?) {
        sha256 = ContentHash.sha256Hex(bytes)
        gzipETag = gzip.map { [sha256] in ETags.gzip(sha256, gzipBytes: $0) }
        brotliETag = brotli.map { [sha256] in ETags.brotli(sha256, brotliBytes: $0) }
    }
}

/// Something the edge serves at one URL path: an identity and maybe gzip and brotli
/// representations.
final class Resource: Sendable {
    let identity: Representation
    let gzip: Representation?
    let brotli: Representation?
    /// Seconds since 1970, for If-Modified-Since and friends.
    let lastModified: Int64
    /// The `Vary` value of its responses (also on 406 and 416).
    let vary: String

    static let varyEncoding = "Accept-Encoding"
    static let varyLanguageAndEncoding = "Accept-Language, Accept-Encoding"

    init(
        identity: Representation, gzip: Representation?, brotli: Representation? = nil, lastModified: Int64,
        vary: String = Resource.varyEncoding
    ) {
        self.identity = identity
        self.gzip = gzip
        self.brotli = brotli
        self.lastModified = lastModified
        self.vary = vary
    }

    func representation(_ coding: ContentCoding) -> Representation {
        switch coding {
        case .identity: identity
        case .gzip: gzip ?? identity
        case .brotli: brotli ?? identity
        }
    }
}

/// One compressed variant of a verified object: in memory or streamed from its file.
struct LoadedVariant: Sendable {
    var body: ByteBuffer?
    var path: String
    var size: Int
    var etag: String
}

/// The bytes of one verified object, shared by `/objects/…` and `/content/…`.
struct LoadedObject: Sendable {
    var identity: ByteBuffer?
    var identityPath: String
    var size: Int
    var sha256: String
    var gzip: LoadedVariant?
    var brotli: LoadedVariant?
    var lastModified: Int64

    /// The bytes it holds in memory.
    var bytesInMemory: Int {
        (identity?.readableBytes ?? 0) + (gzip?.body?.readableBytes ?? 0) + (brotli?.body?.readableBytes ?? 0)
    }

    /// Whether it was loaded for an entry with these sizes (so a new version can reuse it).
    func fits(_ entry: Manifest.Entry) -> Bool {
        size == entry.size && gzip?.size == entry.gzipSize && brotli?.size == entry.brSize
    }
}

/// One published version of every channel, loaded and verified, with every URL it answers.
/// Immutable: a request reads one `Site` from start to finish, so it is answered from one version.
final class Site: Sendable {
    /// The production channel's manifest (its version is the edge's version).
    let manifest: Manifest
    let routes: RouteTable
    /// Objects by hash, kept so the next version can reuse them (and keep serving them).
    let objects: [String: LoadedObject]
    /// Every channel served, by name, production included.
    let channels: [String: LoadedChannel]
    /// The channels whose publish this load refused (each still served at its previous version, if it had one).
    let channelFailures: [ChannelFailure]
    let bytesInMemory: Int
    /// Localized catalogs: negotiated tables and non-canonical locale spellings.
    let catalogs: CatalogRoutes
    /// The manifests of the version it replaced, by channel: their objects stay servable.
    let retired: [String: Manifest]
    /// How many entries of its manifests and of `retired` name each object; nil when the next
    /// version must be loaded whole.
    let refs: ObjectRefs?
    /// Each channel's entries changed from `retired` to its manifest, when an update made it.
    let changes: [String: EntryDiff]

    init(manifest: Manifest, routes: RouteTable, objects: [String: LoadedObject], channels: [String: LoadedChannel],
         channelFailures: [ChannelFailure] = [], bytesInMemory: Int, catalogs: CatalogRoutes = CatalogRoutes(),
         retired: [String: Manifest] = [:], refs: ObjectRefs? = nil, changes: [String: EntryDiff] = [:]) {
        self.manifest = manifest
        self.routes = routes
        self.objects = objects
        self.channels = channels
        self.channelFailures = channelFailures
        self.bytesInMemory = bytesInMemory
        self.catalogs = catalogs
        self.retired = retired
        self.refs = refs
        self.changes = changes
    }

    /// Whether it serves `entry`'s object with the variants the entry names, verified (an
    /// object it has that a new build gave another variant is not served as that entry says).
    func serves(_ entry: Manifest.Entry) -> Bool { objects[entry.sha256]?.fits(entry) == true }

    /// Whether both serve the same manifest in every channel (a reload that changed nothing).
    func sameManifests(as other: Site) -> Bool {
        channels.count == other.channels.count && channels.allSatisfy { other.channels[$0.key]?.manifest == $0.value.manifest }
    }
}

/// A publish the edge refuses to serve, and why.
struct SiteLoadError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

