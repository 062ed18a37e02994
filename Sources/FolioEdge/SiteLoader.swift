import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation
import NIOCore

/// Reads a published directory into a `Site`: every channel's manifest and files, and every
/// object any of them names, verified.
///
/// The production channel must load, or the whole load is refused (the edge keeps serving the
/// previous version). Another channel that does not load is left out of this load alone: its
/// previous version, if it had one, is served in its place, and the refusal is reported in
/// `Site.channelFailures`.
struct SiteLoader {
    var root: String
    var memoryBudget: Int
    var manifestHintOverride = CacheHintOverride()
    /// Root keys every channel's manifest must verify under (`--trust`); nil serves unsigned ones too.
    var trust: Trust?
    /// Keep each manifest's decoded value for a deploy's delta (an edge that takes deploys).
    var keepValues = false
    /// Object files a deploy's commit staged and checked just now (``ObjectSet``).
    var checked: Set<String> = []

    static let plistType = PublishedHeaders.plistType
    static let jsonType = PublishedHeaders.jsonType

    /// The version each channel's `manifest.plist` names, made from `previous` by what changed
    /// (``SiteUpdate``) where it can be, else loaded whole (``load(previous:parsed:)``).
    func update(previous: Site, parsed: [String: ParsedManifest] = [:]) throws -> Site {
        try SiteUpdate.load(self, previous: previous, parsed: parsed) ?? load(previous: previous, parsed: parsed)
    }

    /// Loads the version each channel's `manifest.plist` names, reusing what `previous` already
    /// verified, and the manifests `parsed` already (a deploy's) where the bytes are the same.
    func load(previous: Site?, parsed: [String: ParsedManifest] = [:]) throws -> Site {
        let production = try ChannelManifest.read(
            root: root, channel: Channel.production, trust: trust, parsed: parsed[Channel.production], keepValue: keepValues)
        var objects = ObjectSet(root: root, budget: memoryBudget, previous: previous?.objects ?? [:], checked: checked)
        try objects.load(production.manifest.allEntries, lastModified: production.created)
        var channels = [Channel.production: try channelRoutes(production, previous: previous?.channels[Channel.production])]
        let failures = loadOtherChannels(into: &channels, objects: &objects, previous: previous, parsed: parsed)
        // Objects of the version being replaced stay servable, so a client that fetched a
        // previous manifest a moment ago can still complete its sync.
        for old in previous?.channels.values.map(\.manifest) ?? [] { objects.keep(old.allEntries) }
        return assemble(production, channels: channels, objects: objects, failures: failures, previous: previous)
    }

    /// Loads every channel but production; one that fails is left at its previous version (or
    /// out), with nothing it loaded kept.
    private func loadOtherChannels(
        into channels: inout [String: LoadedChannel], objects: inout ObjectSet, previous: Site?, parsed: [String: ParsedManifest]
    ) -> [ChannelFailure] {
        var failures: [ChannelFailure] = []
        for name in PublishedLayout.publishedChannels(root) where name != Channel.production {
            let before = objects
            let old = previous?.channels[name]
            do { channels[name] = try loadChannel(name, objects: &objects, previous: old, parsed: parsed[name]) } catch {
                objects = before
                if let old {
                    channels[name] = old
                    objects.keep(old.manifest.allEntries)
                }
                failures.append(ChannelFailure(channel: name, error: "\(error)", servingVersion: old?.manifest.version))
            }
        }
        return failures
    }

    /// One channel other than production: its manifest, its objects, its routes.
    private func loadChannel(_ name: String, objects: inout ObjectSet, previous: LoadedChannel?, parsed: ParsedManifest?) throws -> LoadedChannel {
        let channel = try ChannelManifest.read(root: root, channel: name, trust: trust, parsed: parsed, keepValue: keepValues)
        try objects.load(channel.manifest.allEntries, lastModified: channel.created)
        return try channelRoutes(channel, previous: previous)
    }

    /// The channel's routes with its own cache hints (and the command line's manifest override).
    func channelRoutes(_ channel: ChannelManifest, previous: LoadedChannel?) throws -> LoadedChannel {
        let manifestCC = manifestHintOverride.applied(to: channel.manifest.cacheHint("manifest")).cacheControl
        let immutableCC = PublishedHeaders.cacheControl(.immutable, manifest: channel.manifest)
        return try ChannelRoutes(channel: channel, previous: previous, manifestCC: manifestCC, immutableCC: immutableCC).load()
    }

    /// The site: every channel's routes, the objects' and production's content and catalogs.
    private func assemble(
        _ production: ChannelManifest, channels: [String: LoadedChannel], objects: ObjectSet, failures: [ChannelFailure], previous: Site?
    ) -> Site {
        var routes: [String: Resource] = [:]
        for channel in channels.values { routes.merge(channel.routes) { a, _ in a } }
        let dates = LastModifiedText(created: production.created)
        let objectCC = PublishedHeaders.cacheControl(.object, manifest: production.manifest)
        for (path, obj, type) in objectRoutes(channels, previous: previous, objects: objects.objects) {
            routes[path] = Self.objectResource(obj, cacheControl: objectCC, lastModified: dates.text(obj.lastModified), contentType: type)
        }
        let manifestCC = manifestHintOverride.applied(to: production.manifest.cacheHint("manifest")).cacheControl
        let content = ContentRoutes(
            manifest: production.manifest, objects: objects.objects, manifestCC: manifestCC, dates: dates, previous: previous?.catalogs)
        let catalogs = content.add(to: &routes)
        let deltaBytes = channels.values.reduce(0) { $0 + $1.deltaBytes }
        let retired = previous?.channels.mapValues(\.manifest) ?? [:]
        return Site(
            manifest: production.manifest, routes: RouteTable(routes), objects: objects.objects, channels: channels,
            channelFailures: failures, bytesInMemory: objects.bytesInMemory + deltaBytes, catalogs: catalogs,
            retired: retired, refs: ObjectRefs(channels.values.map(\.manifest) + retired.values))
    }

    /// `/objects/…` for every object any release of any channel names, and those of the
    /// version being replaced: one per path, its type from production's entry first, then the
    /// other channels' (by name), then the previous version's.
    private func objectRoutes(
        _ channels: [String: LoadedChannel], previous: Site?, objects: [String: LoadedObject]
    ) -> [(path: String, object: LoadedObject, type: String)] {
        let others = channels.values.filter { $0.name != Channel.production }.sorted { $0.name < $1.name }
        let current = [channels[Channel.production]].compactMap { $0 } + others
        let old = previous?.channels.values.sorted { $0.name < $1.name } ?? []
        var seen = Set<String>()
        var result: [(path: String, object: LoadedObject, type: String)] = []
        for entry in (current + old).lazy.flatMap(\.manifest.allEntries) {
            let path = "/" + entry.objectPath
            guard let obj = objects[entry.sha256], seen.insert(path).inserted else { continue }
            result.append((path, obj, entry.contentType))
        }
        return result
    }

    /// The brotli quality of what the edge compresses itself when the builder wrote no `.br`
    /// (the manifest's JSON mirror): fast, still smaller than gzip; past 256 KiB 1, as the
    /// builder's manifest (a 10,000-entry JSON mirror in about 5 ms instead of 60).
    static let brotliQuality: Int32 = 5

    /// The bytes of the variant file at `path` when `decode` gives back `raw`; nil otherwise.
    private static func builderVariant(_ path: String?, of raw: [UInt8], decode: ([UInt8]) throws -> [UInt8]) -> [UInt8]? {
        guard let path, let encoded = try? FileIO.read(path), (try? decode(encoded)) == raw else { return nil }
        return encoded
    }

    /// A resource made from bytes the edge holds (manifests, the head, deltas), with a gzip
    /// variant and a brotli one (`made`'s, which the edge made of the bytes itself; else the
    /// builder's `gzipFile` and `brotliFile` when they decode to the bytes; else made at the
    /// builder's levels), each only when smaller.
    /// `digests`, when given, are those of the bytes and of `made`'s variants, computed where
    /// they were made (a deploy makes the JSON mirror's on a thread of its own).
    static func resource(
        _ bytes: ByteBuffer, type: String, cacheControl: String, lastModified: Int64, gzipFile: String? = nil, brotliFile: String? = nil,
        made: (gzip: [UInt8]?, brotli: [UInt8]?) = (nil, nil), digests: MadeDigests? = nil, brotli wantsBrotli: Bool = true
    ) throws -> Resource {
        let raw = Array(bytes.readableBytesView)
        let sha = digests?.sha256 ?? ContentHash.sha256Hex(raw)
        let date = HTTPDate.format(lastModified)
        func representation(_ coding: ContentCoding, _ encoded: [UInt8], etag: String) -> Representation {
            Representation(
                coding: coding, body: coding == .identity ? bytes : ByteBuffer(bytes: encoded), filePath: nil, length: encoded.count,
                etag: etag, contentType: type, cacheControl: cacheControl, lastModified: date)
        }
        let builtGzip = made.gzip ?? builderVariant(gzipFile, of: raw) { try Gzip.decompress($0, maxSize: raw.count) }
        let gz = try builtGzip ?? Gzip.compress(raw, level: PublishedCompression.gzipLevel(raw.count))
        let gzipETag = made.gzip != nil ? digests?.gzipETag : nil
        let gzip = gz.count < raw.count ? representation(.gzip, gz, etag: gzipETag ?? ETags.gzip(sha, gzipBytes: gz)) : nil
        let built = made.brotli ?? builderVariant(brotliFile, of: raw) { try Brotli.decompress($0, maxSize: raw.count) }
        var brotli: Representation?
        let quality = PublishedCompression.manifestBrotliQuality(brotliQuality, size: raw.count)
        if wantsBrotli, let br = built ?? (try? Brotli.compress(raw, quality: quality)), br.count < min(raw.count, gz.count) {
            let brotliETag = made.brotli != nil ? digests?.brotliETag : nil
            brotli = representation(.brotli, br, etag: brotliETag ?? ETags.brotli(sha, brotliBytes: br))
        }
        return Resource(identity: representation(.identity, raw, etag: ETags.identity(sha)), gzip: gzip, brotli: brotli, lastModified: lastModified)
    }

    /// A loaded object as a resource: in memory or from its file, with its variants.
    static func objectResource(
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
}

/// Last-Modified values, with production's creation date formatted once (most objects have it).
struct LastModifiedText {
    /// Production's `createdAt` in whole seconds.
    let created: Int64
    /// It as an HTTP date.
    let createdText: String

    /// Formats `created` once.
    init(created: Int64) {
        self.created = created
        createdText = HTTPDate.format(created)
    }

    /// `seconds` as an HTTP date.
    func text(_ seconds: Int64) -> String { seconds == created ? createdText : HTTPDate.format(seconds) }
}

/// `/content/<path>` for production's default entries, and the catalogs negotiated from them
/// (`catalogs/<locale>/<Table>.plist`, by table).
struct ContentRoutes {
    /// Production's manifest.
    let manifest: Manifest
    /// The loaded objects, by hash (every entry's is there).
    let objects: [String: LoadedObject]
    /// The manifest's Cache-Control: the default of logical paths, and the catalogs'.
    let manifestCC: String
    /// Last-Modified values.
    let dates: LastModifiedText
    /// The catalogs of the version being replaced: their choosers are reused for the same locales.
    var previous: CatalogRoutes?

    /// Adds the content routes; returns the catalogs.
    func add(to routes: inout [String: Resource]) -> CatalogRoutes {
        let (catalogLocales, tables) = catalogEntries()
        var catalogs = CatalogRoutes()
        for entry in manifest.entries {
            let obj = objects[entry.sha256]!
            let language = catalogLocales[entry.path]?.description  // Content-Language: catalogs only
            // The project file's cache policy for the path, else the manifest's.
            let pathCC = entry.cache?.cacheControl ?? manifestCC
            let resource = SiteLoader.objectResource(
                obj, cacheControl: pathCC, lastModified: dates.text(obj.lastModified), contentType: entry.contentType, contentLanguage: language)
            routes["/content/" + entry.path] = resource
            if let tag = catalogLocales[entry.path], let parts = CatalogRoutes.split(entry.path) {
                catalogs.addExplicit(tag, file: parts.file, resource)
            }
        }
        if !tables.isEmpty { addTables(tables, to: &catalogs, routes: routes) }
        return catalogs
    }

    /// The catalog entries: each one's locale (the entry's locale field, else the path segment,
    /// canonicalised), and the entries of each table (the first by path wins a locale).
    private func catalogEntries() -> (locales: [String: LocaleTag], tables: [String: [(LocaleTag, Manifest.Entry)]]) {
        var catalogLocales: [String: LocaleTag] = [:]
        var tables: [String: [(LocaleTag, Manifest.Entry)]] = [:]
        for entry in manifest.entries {
            guard let parts = CatalogRoutes.split(entry.path), let tag = LocaleTag(entry.locale ?? parts.locale) else { continue }
            if tables[parts.file]?.contains(where: { $0.0 == tag }) == true { continue }
            catalogLocales[entry.path] = tag
            tables[parts.file, default: []].append((tag, entry))
        }
        return (catalogLocales, tables)
    }

    /// A negotiated table per catalog file, unless a published entry has its path.
    private func addTables(_ tables: [String: [(LocaleTag, Manifest.Entry)]], to catalogs: inout CatalogRoutes, routes: [String: Resource]) {
        let developmentLanguage = self.developmentLanguage()
        var choosers: [[LocaleTag]: LocaleChooser] = [:]
        for table in (previous?.tables ?? [:]).values where table.chooser.developmentLanguage == developmentLanguage {
            choosers[table.chooser.locales] = table.chooser
        }
        for (file, variants) in tables {
            let path = CatalogRoutes.prefix + file
            guard routes[path] == nil else { continue }  // a published entry at that path wins
            let tags = variants.map(\.0).sorted { $0.description < $1.description }
            let chooser = choosers[tags] ?? LocaleChooser(locales: tags, developmentLanguage: developmentLanguage)
            choosers[tags] = chooser
            let resources = chooser.locales.map { tag in
                let entry = variants.first { $0.0 == tag }!.1
                let obj = objects[entry.sha256]!
                return SiteLoader.objectResource(
                    obj, cacheControl: manifestCC, lastModified: dates.text(obj.lastModified),
                    contentType: entry.contentType, contentLanguage: tag.description, vary: Resource.varyLanguageAndEncoding)
            }
            catalogs.tables[path] = CatalogTable(chooser: chooser, variants: resources)
        }
    }

    /// The `developmentLanguage` of `catalogs/index.plist`; nil when the index is missing or unreadable.
    private func developmentLanguage() -> LocaleTag? {
        guard let entry = manifest.entry("catalogs/index.plist"), let obj = objects[entry.sha256] else { return nil }
        let bytes = obj.identity.map { Array($0.readableBytesView) } ?? (try? FileIO.read(obj.identityPath))
        guard let bytes, let index = try? PlistValue.decode(bytes), let text = index["developmentLanguage"]?.stringValue else { return nil }
        return LocaleTag(text)
    }
}
