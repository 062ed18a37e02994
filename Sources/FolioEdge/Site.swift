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
        let language = contentLanguage.map { "Content-Language: \($0)\r\n" } ?? ""
        var common = "Content-Type: \(contentType)\r\n\(language)ETag: \(etag)\r\nLast-Modified: \(lastModified)\r\n"
        common += "Cache-Control: \(cacheControl)\r\nVary: \(vary)\r\nAccept-Ranges: bytes\r\n"
        if coding == .gzip { common += "Content-Encoding: gzip\r\n" }
        head200 = ByteBuffer(string: "HTTP/1.1 200 OK\r\n" + common + "Content-Length: \(length)\r\n")
        headPartial = ByteBuffer(string: common)
        head304 = ByteBuffer(string: "HTTP/1.1 304 Not Modified\r\nETag: \(etag)\r\nLast-Modified: \(lastModified)\r\nCache-Control: \(cacheControl)\r\nVary: \(vary)\r\n\(language)")
    }
}

/// The strong ETags of one content hash: identity, and gzip (with the gzip bytes' own hash,
/// so two different gzip encodings of the same content never share a strong validator).
enum ETags {
    static func identity(_ sha256: String) -> String { "\"\(sha256)\"" }
    static func gzip(_ sha256: String, gzipBytes: [UInt8]) -> String {
        "\"\(sha256)-gz\(ContentHash.sha256Hex(gzipBytes).prefix(16))\""
    }
}

/// Something the edge serves at one URL path: an identity and maybe a gzip representation.
final class Resource: Sendable {
    let identity: Representation
    let gzip: Representation?
    /// Seconds since 1970, for If-Modified-Since and friends.
    let lastModified: Int64
    /// The `Vary` value of its responses (also on 406 and 416).
    let vary: String

    static let varyEncoding = "Accept-Encoding"
    static let varyLanguageAndEncoding = "Accept-Language, Accept-Encoding"

    init(identity: Representation, gzip: Representation?, lastModified: Int64, vary: String = Resource.varyEncoding) {
        self.identity = identity
        self.gzip = gzip
        self.lastModified = lastModified
        self.vary = vary
    }

    func representation(_ coding: ContentCoding) -> Representation {
        coding == .gzip ? (gzip ?? identity) : identity
    }
}

/// The bytes of one verified object, shared by `/objects/…` and `/content/…`.
struct LoadedObject: Sendable {
    var identity: ByteBuffer?
    var gzip: ByteBuffer?
    var identityPath: String
    var gzipPath: String?
    var size: Int
    var gzipSize: Int?
    var sha256: String
    var gzipETag: String?
    var lastModified: Int64
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
            if let old = previous?.objects[entry.sha256], old.size == entry.size, old.gzipSize == entry.gzipSize {
                objects[entry.sha256] = old
                inMemory += (old.identity?.readableBytes ?? 0) + (old.gzip?.readableBytes ?? 0)
                budget -= (old.identity?.readableBytes ?? 0) + (old.gzip?.readableBytes ?? 0)
                continue
            }
            let obj = try loadObject(entry, lastModified: created, budget: &budget)
            inMemory += (obj.identity?.readableBytes ?? 0) + (obj.gzip?.readableBytes ?? 0)
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

        func resource(_ bytes: ByteBuffer, type: String, cacheControl: String, lastModified: Int64) throws -> Resource {
            let raw = Array(bytes.readableBytesView)
            let sha = ContentHash.sha256Hex(raw)
            let gz = try Gzip.compress(raw, level: 9)
            let date = HTTPDate.format(lastModified)
            let identity = Representation(
                coding: .identity, body: bytes, filePath: nil, length: raw.count, etag: ETags.identity(sha),
                contentType: type, cacheControl: cacheControl, lastModified: date)
            var gzip: Representation?
            if gz.count < raw.count {
                gzip = Representation(
                    coding: .gzip, body: ByteBuffer(bytes: gz), filePath: nil, length: gz.count,
                    etag: ETags.gzip(sha, gzipBytes: gz),
                    contentType: type, cacheControl: cacheControl, lastModified: date)
            }
            return Resource(identity: identity, gzip: gzip, lastModified: lastModified)
        }

        routes["/" + PublishedLayout.manifest] = try resource(ByteBuffer(bytes: manifestBytes), type: Self.plistType, cacheControl: manifestCC, lastModified: created)
        let json: [UInt8]
        do { json = try JSONPlist.encode(try Manifest.jsonMirror(manifestBytes)) } catch { throw SiteLoadError("manifest has no JSON form: \(error)") }
        routes["/" + PublishedLayout.manifestJSON] = try resource(ByteBuffer(bytes: json), type: Self.jsonType, cacheControl: manifestCC, lastModified: created)
        // The key list a signed manifest carries, also on its own for people and tools.
        if let signed = try? SignedManifest.decode(manifestBytes) {
            routes["/" + PublishedLayout.keyList] = try resource(ByteBuffer(bytes: signed.keyList.bytes), type: Self.plistType, cacheControl: manifestCC, lastModified: created)
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
            routes["/" + PublishedLayout.versionedManifest(v)] = try resource(bytes, type: Self.plistType, cacheControl: immutableCC, lastModified: date)
        }

        // The head, when it describes this manifest (a build writes it just before the manifest),
        // and the deltas beside it: immutable, like objects.
        let manifestSHA = ContentHash.sha256Hex(manifestBytes)
        if let bytes = try? FileIO.read(PublishedLayout.path(root, PublishedLayout.head)),
            let head = try? DeltaHead(bytes: bytes), head.sha256 == manifestSHA, head.version == manifest.version
        {
            routes["/" + PublishedLayout.head] = try resource(ByteBuffer(bytes: bytes), type: Self.plistType, cacheControl: manifestCC, lastModified: created)
        }
        var deltas: [String: Resource] = [:]
        for name in (try? FileIO.list(PublishedLayout.path(root, PublishedLayout.deltas))) ?? [] where PublishedLayout.deltaPair(ofFile: name) != nil {
            let path = "/" + PublishedLayout.deltas + "/" + name
            if let old = previous?.deltas[path] {
                deltas[path] = old
            } else if let bytes = try? FileIO.read(PublishedLayout.path(root, PublishedLayout.deltas + "/" + name)) {
                inMemory += bytes.count
                deltas[path] = try resource(ByteBuffer(bytes: bytes), type: Self.plistType, cacheControl: immutableCC, lastModified: created)
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
        var gzip: Representation?
        if let gzipSize = obj.gzipSize, let etag = obj.gzipETag {
            gzip = Representation(
                coding: .gzip, body: obj.gzip, filePath: obj.gzip == nil ? obj.gzipPath : nil,
                length: gzipSize, etag: etag, contentType: contentType,
                cacheControl: cacheControl, lastModified: lastModified, contentLanguage: contentLanguage, vary: vary)
        }
        return Resource(identity: identity, gzip: gzip, lastModified: obj.lastModified, vary: vary)
    }

    /// Reads and verifies one object and its gzip variant; keeps them in memory while the budget lasts.
    private func loadObject(_ entry: Manifest.Entry, lastModified: Int64, budget: inout Int) throws -> LoadedObject {
        let path = root + "/" + entry.objectPath
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch { throw SiteLoadError("\(entry.path): \(error)") }
        switch entry.check(bytes) {
        case .matches: break
        case .wrongSize(let size): throw SiteLoadError("\(entry.path): \(path) is \(size) bytes, the manifest says \(entry.size)")
        case .wrongHash: throw SiteLoadError("\(entry.path): \(path) does not hash to \(entry.sha256)")
        }
        var obj = LoadedObject(
            identity: nil, gzip: nil, identityPath: path, gzipPath: nil, size: entry.size,
            gzipSize: nil, sha256: entry.sha256, gzipETag: nil, lastModified: lastModified)
        if bytes.count <= budget {
            obj.identity = ByteBuffer(bytes: bytes)
            budget -= bytes.count
        }
        if let gzPath = entry.gzipObjectPath, let gzipSize = entry.gzipSize {
            let full = root + "/" + gzPath
            let gz: [UInt8]
            do { gz = try FileIO.read(full) } catch { throw SiteLoadError("\(entry.path): \(error)") }
            guard gz.count == gzipSize else {
                throw SiteLoadError("\(entry.path): \(full) is \(gz.count) bytes, the manifest says \(gzipSize)")
            }
            let inflated: [UInt8]
            do { inflated = try Gzip.decompress(gz, maxSize: entry.size) } catch {
                throw SiteLoadError("\(entry.path): \(full): \(error)")
            }
            guard inflated == bytes else { throw SiteLoadError("\(entry.path): \(full) does not inflate to the object") }
            obj.gzipPath = full
            obj.gzipSize = gzipSize
            obj.gzipETag = ETags.gzip(entry.sha256, gzipBytes: gz)
            if gz.count <= budget {
                obj.gzip = ByteBuffer(bytes: gz)
                budget -= gz.count
            }
        }
        return obj
    }
}
