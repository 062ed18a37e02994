import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import NIOCore

/// One encoding of a resource, with its response heads prepared at load time.
final class Representation: Sendable {
    let coding: ContentCoding
    /// The bytes, when held in memory.
    let body: ByteBuffer?
    /// The file to stream from, when the memory budget is spent.
    let filePath: String?
    let length: Int
    let etag: String
    /// The status line and header lines (each ending CRLF) of a full 200, including
    /// Content-Length; the Date line and the blank line follow per response.
    let head200: ByteBuffer
    /// The same for 206, without Content-Length and Content-Range (added per response).
    let headPartial: ByteBuffer
    /// The status line and header lines of a 304: ETag, Last-Modified, Cache-Control, Vary (and
    /// Content-Language).
    let head304: ByteBuffer
    /// The fields of the 200 and 206 (without Content-Length) and of the 304 for HTTP/2, with
    /// lower-case names; `:status`, the length, the Date and the listener's own fields are
    /// added per response.
    let fields: [(String, String)]
    let fields304: [(String, String)]

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
        // Each field with its HTTP/1.1 and its HTTP/2 name, both literals (immortal strings:
        // nothing allocated for names per representation).
        typealias Field = (h1: String, h2: String, value: String)
        let language: [Field] = contentLanguage.map { [("Content-Language", "content-language", $0)] } ?? []
        let validators: [Field] = [
            ("ETag", "etag", etag), ("Last-Modified", "last-modified", lastModified), ("Cache-Control", "cache-control", cacheControl),
            ("Vary", "vary", vary),
        ]
        let encoding: [Field] =
            switch coding {
            case .identity: []
            case .gzip: [("Content-Encoding", "content-encoding", "gzip")]
            case .brotli: [("Content-Encoding", "content-encoding", "br")]
            }
        let common: [Field] = [("Content-Type", "content-type", contentType)] + language + validators + [("Accept-Ranges", "accept-ranges", "bytes")] + encoding
        let notModified = validators + language
        func lines(_ fields: [Field]) -> String { fields.map { "\($0.h1): \($0.value)\r\n" }.joined() }
        head200 = ByteBuffer(string: "HTTP/1.1 200 OK\r\n" + lines(common) + "Content-Length: \(length)\r\n")
        headPartial = ByteBuffer(string: lines(common))
        head304 = ByteBuffer(string: "HTTP/1.1 304 Not Modified\r\n" + lines(notModified))
        fields = common.map { ($0.h2, $0.value) }
        fields304 = notModified.map { ($0.h2, $0.value) }
    }
}

/// The strong ETags of one content hash: identity, gzip and brotli (with the encoded bytes' own
/// hash, so two different encodings of the same content never share a strong validator).
enum ETags {
    static func identity(_ sha256: String) -> String { "\"\(sha256)\"" }
    static func gzip(_ sha256: String, gzipBytes: [UInt8]) -> String {
        "\"\(sha256)-gz\(ContentHash.sha256Hex(gzipBytes).prefix(16))\""
    }
    static func brotli(_ sha256: String, brotliBytes: [UInt8]) -> String {
        "\"\(sha256)-br\(ContentHash.sha256Hex(brotliBytes).prefix(16))\""
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

/// One published version, loaded and verified, with every URL it answers. Immutable:
/// a request reads one `Site` from start to finish, so it is answered from one version.
final class Site: Sendable {
    let manifest: Manifest
    let routes: RouteTable
    /// Objects by hash, kept so the next version can reuse them (and keep serving them).
    let objects: [String: LoadedObject]
    /// Versioned manifests by number (immutable, reused across reloads).
    let versionedManifests: [Int: ByteBuffer]
    /// Deltas by URL path (immutable, reused across reloads).
    let deltas: [String: Resource]
    let bytesInMemory: Int
    /// Localized catalogs: negotiated tables and non-canonical locale spellings.
    let catalogs: CatalogRoutes

    init(manifest: Manifest, routes: RouteTable, objects: [String: LoadedObject],
         versionedManifests: [Int: ByteBuffer], deltas: [String: Resource] = [:], bytesInMemory: Int,
         catalogs: CatalogRoutes = CatalogRoutes()) {
        self.deltas = deltas
        self.manifest = manifest
        self.routes = routes
        self.catalogs = catalogs
        self.objects = objects
        self.versionedManifests = versionedManifests
        self.bytesInMemory = bytesInMemory
    }
}

/// URL paths to resources, looked up by the request target's bytes (no String is made).
///
/// Open addressing over a power-of-two slot table at most half full; the keys sit in one byte
/// array and are fixed when a version loads (a client can only look up, never add).
struct RouteTable: Sendable {
    private struct Entry: Sendable {
        var hash: Int
        var offset: Int
        var length: Int
    }

    private var entries: [Entry] = []
    private var values: [Resource] = []
    private var keyBytes: [UInt8] = []
    /// Index into `entries` plus one; 0 is an empty slot.
    private var slots: [Int32]
    private var mask: Int
    private let seed = UInt64.random(in: 1...UInt64.max)

    init(_ routes: [String: Resource] = [:]) {
        var size = 8
        while size < routes.count * 2 { size *= 2 }
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
        entries.reserveCapacity(routes.count)
        values.reserveCapacity(routes.count)
        for (path, resource) in routes {
            var path = path
            path.withUTF8 { key in
                let raw = UnsafeRawBufferPointer(key)
                let h = hash(raw)
                var i = h & mask
                while slots[i] != 0 { i = (i + 1) & mask }
                slots[i] = Int32(entries.count + 1)
                entries.append(Entry(hash: h, offset: keyBytes.count, length: raw.count))
                keyBytes.append(contentsOf: raw)
                values.append(resource)
            }
        }
    }

    var count: Int { entries.count }

    subscript(path: UnsafeRawBufferPointer) -> Resource? {
        let h = hash(path)
        var i = h & mask
        return keyBytes.withUnsafeBytes { keys in
            entries.withUnsafeBufferPointer { entries in
                slots.withUnsafeBufferPointer { slots in
                    while true {
                        let s = Int(slots[i])
                        if s == 0 { return nil }
                        let e = entries[s - 1]
                        if e.hash == h, e.length == path.count,
                            e.length == 0 || memcmp(keys.baseAddress! + e.offset, path.baseAddress!, e.length) == 0
                        {
                            return values[s - 1]
                        }
                        i = (i + 1) & mask
                    }
                }
            }
        }
    }

    subscript(path: String) -> Resource? {
        var path = path
        return path.withUTF8 { self[UnsafeRawBufferPointer($0)] }
    }

    /// The shared word-at-a-time hash, seeded per table.
    @inline(__always)
    private func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        Int(truncatingIfNeeded: WordHash.hash(bytes, seed: seed))
    }
}

/// A publish the edge refuses to serve, and why.
struct SiteLoadError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Reads a published directory into a `Site`, verifying every object it names.
struct SiteLoader {
    var root: String
    var memoryBudget: Int
    var manifestHintOverride = CacheHintOverride()
    /// Root keys the manifest must verify under (`--trust`); nil serves unsigned ones too.
    var trust: Trust?

    static let plistType = "application/x-plist"
    static let jsonType = "application/json; charset=utf-8"

    /// Loads the version `manifest.plist` names, reusing what `previous` already verified.
    func load(previous: Site?) throws -> Site {
        let manifestBytes: [UInt8]
        do { manifestBytes = try FileIO.read(PublishedLayout.path(root, PublishedLayout.manifest)) } catch {
            throw SiteLoadError("\(error)")
        }
        let manifest: Manifest
        do { manifest = try Manifest(bytes: manifestBytes) } catch {
            throw SiteLoadError("\(root)/manifest.plist: \(error)")
        }
        if let trust {
            do { _ = try trust.verify(manifestBytes, parsed: manifest) } catch {
                throw SiteLoadError("\(root)/manifest.plist does not verify under --trust: \(error)")
            }
        }
        let created = Int64(manifest.createdAt.timeIntervalSince1970.rounded(.down))
        var budget = memoryBudget
        var inMemory = 0
        var objects: [String: LoadedObject] = [:]
        for entry in manifest.entries where objects[entry.sha256] == nil {
            if let old = previous?.objects[entry.sha256], old.fits(entry) {
                objects[entry.sha256] = old
                inMemory += old.bytesInMemory
                budget -= old.bytesInMemory
                continue
            }
            let obj = try loadObject(entry, lastModified: created, budget: &budget)
            inMemory += obj.bytesInMemory
            objects[entry.sha256] = obj
        }
        // Objects of the version being replaced stay servable, so a client that fetched the
        // previous manifest a moment ago can still complete its sync.
        if let previous {
            for sha in Set(previous.manifest.entries.map(\.sha256)) where objects[sha] == nil {
                if let old = previous.objects[sha] { objects[sha] = old }
            }
        }

        let manifestHint = manifestHintOverride.applied(to: manifest.cacheHint("manifest"))
        let objectHint = manifest.cacheHint("object")
        let manifestCC = manifestHint.cacheControl
        let objectCC = objectHint.cacheControl
        let lastModified = HTTPDate.format(created)
        var routes: [String: Resource] = [:]

        routes["/" + PublishedLayout.manifest] = try Self.resource(
            ByteBuffer(bytes: manifestBytes), type: Self.plistType, cacheControl: manifestCC, lastModified: created,
            brotliFile: PublishedLayout.path(root, PublishedLayout.manifestBrotli))
        let json: [UInt8]
        do { json = try JSONPlist.encode(try Manifest.jsonMirror(manifestBytes)) } catch { throw SiteLoadError("manifest has no JSON form: \(error)") }
        routes["/" + PublishedLayout.manifestJSON] = try Self.resource(ByteBuffer(bytes: json), type: Self.jsonType, cacheControl: manifestCC, lastModified: created)
        // The key list a signed manifest carries, also on its own for people and tools.
        if let signed = try? SignedManifest.decode(manifestBytes) {
            routes["/" + PublishedLayout.keyList] = try Self.resource(ByteBuffer(bytes: signed.keyList.bytes), type: Self.plistType, cacheControl: manifestCC, lastModified: created)
        }

        // Every manifest ever published, immutable.
        var versioned = previous?.versionedManifests ?? [:]
        versioned[manifest.version] = ByteBuffer(bytes: manifestBytes)
        for name in (try? FileIO.list(PublishedLayout.path(root, PublishedLayout.manifests))) ?? [] {
            guard let v = PublishedLayout.version(ofManifestFile: name), v > 0, versioned[v] == nil else { continue }
            if let bytes = try? FileIO.read(PublishedLayout.path(root, PublishedLayout.versionedManifest(v))), (try? Manifest(bytes: bytes))?.version == v {
                versioned[v] = ByteBuffer(bytes: bytes)
            }
        }
        let immutableCC = objectCC
        for (v, bytes) in versioned {
            let m = try? Manifest(bytes: Array(bytes.readableBytesView))
            let date = m.map { Int64($0.createdAt.timeIntervalSince1970.rounded(.down)) } ?? created
            // No brotli: old versions are rarely asked for, and every reload would compress them all again.
            routes["/" + PublishedLayout.versionedManifest(v)] = try Self.resource(
                bytes, type: Self.plistType, cacheControl: immutableCC, lastModified: date, brotli: false)
        }

        // The head, when it describes this manifest (a build writes it just before the manifest),
        // and the deltas beside it: immutable, like objects.
        let manifestSHA = ContentHash.sha256Hex(manifestBytes)
        if let bytes = try? FileIO.read(PublishedLayout.path(root, PublishedLayout.head)),
            let head = try? DeltaHead(bytes: bytes), head.sha256 == manifestSHA, head.version == manifest.version
        {
            routes["/" + PublishedLayout.head] = try Self.resource(ByteBuffer(bytes: bytes), type: Self.plistType, cacheControl: manifestCC, lastModified: created)
        }
        var deltas: [String: Resource] = [:]
        for name in (try? FileIO.list(PublishedLayout.path(root, PublishedLayout.deltas))) ?? [] where PublishedLayout.deltaPair(ofFile: name) != nil {
            let path = "/" + PublishedLayout.deltas + "/" + name
            if let old = previous?.deltas[path] {
                deltas[path] = old
            } else if let bytes = try? FileIO.read(PublishedLayout.path(root, PublishedLayout.deltas + "/" + name)) {
                inMemory += bytes.count
                deltas[path] = try Self.resource(
                    ByteBuffer(bytes: bytes), type: Self.plistType, cacheControl: immutableCC, lastModified: created,
                    brotliFile: PublishedLayout.path(root, PublishedLayout.deltas + "/" + name + ".br"))
            }
        }
        routes.merge(deltas) { a, _ in a }

        // Objects by content address, with their own extension and type (the previous version's too).
        for entry in (previous?.manifest.entries ?? []) + manifest.entries {
            guard let obj = objects[entry.sha256] else { continue }
            routes["/" + entry.objectPath] = objectResource(
                obj, cacheControl: objectCC, lastModified: lastModifiedText(obj.lastModified, created, lastModified), contentType: entry.contentType)
        }
        // Localized catalogs (`catalogs/<locale>/<Table>.plist`), by table; the entry's locale
        // field names the locale (the path segment when it has none), canonicalised.
        var catalogLocales: [String: LocaleTag] = [:]
        var tables: [String: [(LocaleTag, Manifest.Entry)]] = [:]
        for entry in manifest.entries {
            guard let parts = CatalogRoutes.split(entry.path), let tag = LocaleTag(entry.locale ?? parts.locale) else { continue }
            if tables[parts.file]?.contains(where: { $0.0 == tag }) == true { continue }  // first by path wins
            catalogLocales[entry.path] = tag
            tables[parts.file, default: []].append((tag, entry))
        }
        var catalogs = CatalogRoutes()
        for entry in manifest.entries {
            let obj = objects[entry.sha256]!
            let language = catalogLocales[entry.path]?.description  // Content-Language: catalogs only
            // The project file's cache policy for the path, else the manifest's.
            let pathCC = entry.cache?.cacheControl ?? manifestCC
            let resource = objectResource(obj, cacheControl: pathCC, lastModified: lastModifiedText(obj.lastModified, created, lastModified), contentType: entry.contentType, contentLanguage: language)
            routes["/content/" + entry.path] = resource
            if let tag = catalogLocales[entry.path], let parts = CatalogRoutes.split(entry.path) {
                catalogs.addExplicit(tag, file: parts.file, resource)
            }
        }
        if !tables.isEmpty {
            let developmentLanguage = self.developmentLanguage(manifest, objects)
            var choosers: [[LocaleTag]: LocaleChooser] = [:]
            for (file, variants) in tables {
                let path = CatalogRoutes.prefix + file
                guard routes[path] == nil else { continue }  // a published entry at that path wins
                let tags = variants.map(\.0).sorted { $0.description < $1.description }
                let chooser = choosers[tags] ?? LocaleChooser(locales: tags, developmentLanguage: developmentLanguage)
                choosers[tags] = chooser
                let resources = chooser.locales.map { tag in
                    let entry = variants.first { $0.0 == tag }!.1
                    let obj = objects[entry.sha256]!
                    return objectResource(
                        obj, cacheControl: manifestCC, lastModified: lastModifiedText(obj.lastModified, created, lastModified),
                        contentType: entry.contentType, contentLanguage: tag.description, vary: Resource.varyLanguageAndEncoding)
                }
                catalogs.tables[path] = CatalogTable(chooser: chooser, variants: resources)
            }
        }
        return Site(
            manifest: manifest, routes: RouteTable(routes), objects: objects, versionedManifests: versioned, deltas: deltas,
            bytesInMemory: inMemory, catalogs: catalogs)
    }

    /// The brotli quality of what the edge compresses itself when the builder wrote no `.br`
    /// (the manifest's JSON mirror): fast, still smaller than gzip.
    static let brotliQuality: Int32 = 5

    /// A resource made from bytes the edge holds (manifests, the head, deltas), with a gzip
    /// variant and a brotli one (the builder's `brotliFile` when it decodes to the bytes),
    /// each only when smaller.
    static func resource(
        _ bytes: ByteBuffer, type: String, cacheControl: String, lastModified: Int64, brotliFile: String? = nil, brotli wantsBrotli: Bool = true
    ) throws -> Resource {
        let raw = Array(bytes.readableBytesView)
        let sha = ContentHash.sha256Hex(raw)
        let date = HTTPDate.format(lastModified)
        func representation(_ coding: ContentCoding, _ encoded: [UInt8], etag: String) -> Representation {
            Representation(
                coding: coding, body: coding == .identity ? bytes : ByteBuffer(bytes: encoded), filePath: nil, length: encoded.count,
                etag: etag, contentType: type, cacheControl: cacheControl, lastModified: date)
        }
        let gz = try Gzip.compress(raw, level: 9)
        let gzip = gz.count < raw.count ? representation(.gzip, gz, etag: ETags.gzip(sha, gzipBytes: gz)) : nil
        let built = brotliFile.flatMap { try? FileIO.read($0) }.flatMap { (try? Brotli.decompress($0, maxSize: raw.count)) == raw ? $0 : nil }
        var brotli: Representation?
        if wantsBrotli, let br = built ?? (try? Brotli.compress(raw, quality: brotliQuality)), br.count < min(raw.count, gz.count) {
            brotli = representation(.brotli, br, etag: ETags.brotli(sha, brotliBytes: br))
        }
        return Resource(identity: representation(.identity, raw, etag: ETags.identity(sha)), gzip: gzip, brotli: brotli, lastModified: lastModified)
    }

    /// The `developmentLanguage` of `catalogs/index.plist`; nil when the index is missing or unreadable.
    private func developmentLanguage(_ manifest: Manifest, _ objects: [String: LoadedObject]) -> LocaleTag? {
        guard let entry = manifest.entry("catalogs/index.plist"), let obj = objects[entry.sha256] else { return nil }
        let bytes = obj.identity.map { Array($0.readableBytesView) } ?? (try? FileIO.read(obj.identityPath))
        guard let bytes, let index = try? PlistValue.decode(bytes), let text = index["developmentLanguage"]?.stringValue else { return nil }
        return LocaleTag(text)
    }

    private func lastModifiedText(_ seconds: Int64, _ created: Int64, _ createdText: String) -> String {
        seconds == created ? createdText : HTTPDate.format(seconds)
    }

    private func objectResource(
        _ obj: LoadedObject, cacheControl: String, lastModified: String, contentType: String = SiteLoader.plistType,
        contentLanguage: String? = nil, vary: String = Resource.varyEncoding
    ) -> Resource {
        let identity = Representation(
            coding: .identity, body: obj.identity, filePath: obj.identity == nil ? obj.identityPath : nil,
            length: obj.size, etag: ETags.identity(obj.sha256), contentType: contentType,
            cacheControl: cacheControl, lastModified: lastModified, contentLanguage: contentLanguage, vary: vary)
        func variant(_ v: LoadedVariant?, _ coding: ContentCoding) -> Representation? {
            v.map { v in
                Representation(
                    coding: coding, body: v.body, filePath: v.body == nil ? v.path : nil, length: v.size, etag: v.etag,
                    contentType: contentType, cacheControl: cacheControl, lastModified: lastModified,
                    contentLanguage: contentLanguage, vary: vary)
            }
        }
        return Resource(
            identity: identity, gzip: variant(obj.gzip, .gzip), brotli: variant(obj.brotli, .brotli), lastModified: obj.lastModified,
            vary: vary)
    }

    /// Reads and verifies one object and its variants; keeps them in memory while the budget lasts.
    private func loadObject(_ entry: Manifest.Entry, lastModified: Int64, budget: inout Int) throws -> LoadedObject {
        let path = root + "/" + entry.objectPath
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch { throw SiteLoadError("\(entry.path): \(error)") }
        switch entry.check(bytes) {
        case .matches: break
        case .wrongSize(let size): throw SiteLoadError("\(entry.path): \(path) is \(size) bytes, the manifest says \(entry.size)")
        case .wrongHash: throw SiteLoadError("\(entry.path): \(path) does not hash to \(entry.sha256)")
        }
        var obj = LoadedObject(identity: nil, identityPath: path, size: entry.size, sha256: entry.sha256, lastModified: lastModified)
        if bytes.count <= budget {
            obj.identity = ByteBuffer(bytes: bytes)
            budget -= bytes.count
        }
        if let gzPath = entry.gzipObjectPath, let size = entry.gzipSize {
            obj.gzip = try loadVariant(.gzip, entry, root + "/" + gzPath, size: size, object: bytes, budget: &budget)
        }
        if let brPath = entry.brotliObjectPath, let size = entry.brSize {
            obj.brotli = try loadVariant(.brotli, entry, root + "/" + brPath, size: size, object: bytes, budget: &budget)
        }
        return obj
    }

    /// Reads one compressed variant and checks that it has the manifest's size and decodes to
    /// the object.
    private func loadVariant(
        _ coding: ContentCoding, _ entry: Manifest.Entry, _ full: String, size: Int, object: [UInt8], budget: inout Int
    ) throws -> LoadedVariant {
        let encoded: [UInt8]
        do { encoded = try FileIO.read(full) } catch { throw SiteLoadError("\(entry.path): \(error)") }
        guard encoded.count == size else {
            throw SiteLoadError("\(entry.path): \(full) is \(encoded.count) bytes, the manifest says \(size)")
        }
        let decoded: [UInt8]
        let etag: String
        do {
            switch coding {
            case .identity: (decoded, etag) = (encoded, ETags.identity(entry.sha256))
            case .gzip: (decoded, etag) = (try Gzip.decompress(encoded, maxSize: entry.size), ETags.gzip(entry.sha256, gzipBytes: encoded))
            case .brotli: (decoded, etag) = (try Brotli.decompress(encoded, maxSize: entry.size), ETags.brotli(entry.sha256, brotliBytes: encoded))
            }
        } catch { throw SiteLoadError("\(entry.path): \(full): \(error)") }
        guard decoded == object else { throw SiteLoadError("\(entry.path): \(full) does not decode to the object") }
        var variant = LoadedVariant(body: nil, path: full, size: size, etag: etag)
        if encoded.count <= budget {
            variant.body = ByteBuffer(bytes: encoded)
            budget -= encoded.count
        }
        return variant
    }
}
