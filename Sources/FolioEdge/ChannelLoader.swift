import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation
import NIOCore

/// One channel's `manifest.plist` as published, read and checked.
struct ChannelManifest: Sendable {
    /// The channel's name (`production` for the root).
    let name: String
    /// The channel's directory: the root for production, `root/channels/<name>` otherwise.
    let dir: String
    /// The prefix of its URL paths: `/` for production, `/channels/<name>/` otherwise.
    let prefix: String
    /// The manifest's bytes as served.
    let bytes: [UInt8]
    /// The manifest they hold.
    let manifest: Manifest
    /// The mirrors a deploy made of it already (`manifest.plist.gz`, `.br`, `manifest.json`), by name.
    var derived: [String: [UInt8]] = [:]
    /// The chunks of the `manifest.plist.gz` a deploy made, when it made one.
    var manifestGzip: GzipChunks? = nil
    /// The value the bytes decode to, when a deploy's delta made it.
    var value: PlistValue? = nil
    /// The variants a deploy is making, when it made the JSON mirror.
    var variants: Pending<MirrorVariants>? = nil
    /// `createdAt` in whole seconds: the Last-Modified of what this manifest publishes.
    var created: Int64 { Int64(manifest.createdAt.timeIntervalSince1970.rounded(.down)) }

    /// Reads `channel`'s manifest under `root`: parsed (or taken from `parsed` when it has the
    /// same bytes), verified under `trust` when set, and naming the channel it is published in.
    /// With `keepValue` (an edge that takes deploys) the value its bytes decode to is kept, up to
    /// ``LoadedChannel/keptValueBytes``, for the first deploy's delta to apply to, as a deploy
    /// keeps the one its delta made for the next.
    static func read(root: String, channel: String, trust: Trust?, parsed: ParsedManifest? = nil, keepValue: Bool = false) throws -> ChannelManifest {
        let dir = PublishedLayout.channelRoot(root, channel)
        let bytes: [UInt8]
        do { bytes = try FileIO.read(PublishedLayout.path(dir, PublishedLayout.manifest)) } catch { throw SiteLoadError("\(error)") }
        if let parsed, parsed.bytes == bytes {
            var read = try checked(bytes, parsed.manifest, root: root, channel: channel, trust: trust)
            read.derived = parsed.derived
            read.manifestGzip = parsed.manifestGzip
            read.value = parsed.value
            read.variants = parsed.variants
            return read
        }
        let value: PlistValue
        do { value = try PlistValue.decode(bytes) } catch {
            throw SiteLoadError("\(dir)/manifest.plist: \(ManifestError("not a property list: \(error)"))")
        }
        let manifest: Manifest
        do { manifest = try Manifest(decoded: value) } catch { throw SiteLoadError("\(dir)/manifest.plist: \(error)") }
        var read = try checked(bytes, manifest, root: root, channel: channel, trust: trust)
        read.value = keepValue && bytes.count <= LoadedChannel.keptValueBytes ? value : nil
        return read
    }

    /// `channel`'s manifest `bytes` under `root`, already parsed as `manifest`: verified under
    /// `trust` when set, and naming the channel it is published in.
    static func checked(_ bytes: [UInt8], _ manifest: Manifest, root: String, channel: String, trust: Trust?) throws -> ChannelManifest {
        let dir = PublishedLayout.channelRoot(root, channel)
        if let trust {
            do { _ = try trust.verify(bytes, parsed: manifest) } catch {
                throw SiteLoadError("\(dir)/manifest.plist does not verify under --trust: \(error)")
            }
        }
        guard manifest.channelName == channel else {
            throw SiteLoadError("\(dir)/manifest.plist is channel \(manifest.channelName)'s manifest, published as \(channel)'s")
        }
        let prefix = "/" + PublishedLayout.channelPrefix(channel)
        return ChannelManifest(name: channel, dir: dir, prefix: prefix, bytes: bytes, manifest: manifest)
    }
}

/// One channel as served: its manifest and every route under its prefix.
struct LoadedChannel: Sendable {
    /// The channel's name.
    let name: String
    /// The manifest it serves.
    let manifest: Manifest
    /// Its manifest and mirrors, key list, head, deltas and versioned manifests, by URL path.
    let routes: [String: Resource]
    /// Versioned manifests by number (immutable, reused across reloads).
    let versioned: [Int: ByteBuffer]
    /// Deltas by URL path (immutable, reused across reloads).
    let deltas: [String: Resource]
    /// The gzip variants of its manifest and JSON mirror by chunk, when known and of at most
    /// ``keptChunksBytes``: the next version's are made from them (a chunk whose bytes did not
    /// change is not compressed again).
    var gzip = MirrorGzip()
    /// The value its manifest's bytes decode to, when a deploy's delta made it and the manifest
    /// is at most ``keptValueBytes``: the next deploy's delta applies to it without decoding.
    var value: PlistValue? = nil

    /// The largest manifest whose value is kept (a 10,000-entry manifest is 1.3 MB, its value
    /// a few MB in memory).
    static let keptValueBytes = 4 << 20
    /// The largest mirror whose gzip chunks are kept (they hold a copy of the mirror: at
    /// 100,000 entries the JSON mirror is about 24 MB).
    static let keptChunksBytes = 8 << 20

    /// The SHA-256 (hex) of the `manifest.plist` it serves: its strong ETag, unquoted.
    var manifestSHA256: String? {
        routes["/" + PublishedLayout.channelPrefix(name) + PublishedLayout.manifest].map { ETags.sha256(ofIdentity: $0.identity.etag) }
    }

    /// The bytes of its deltas (held in memory).
    var deltaBytes: Int { deltas.values.reduce(0) { $0 + $1.identity.length } }
}

/// Variants the edge makes itself of a channel's manifest, as ``SiteLoader/resource`` would: the
/// JSON mirror's gzip (at the builder's level, from the served mirror's chunks) and brotli, and
/// the manifest's brotli when the version has none (at ``SiteLoader/brotliQuality``, 1 past
/// 256 KiB). A deploy makes them on a thread of their own while it goes on to its commit.
struct MirrorVariants: Sendable {
    var json: [UInt8]
    var jsonGzip: GzipChunks?
    var jsonBrotli: [UInt8]?
    var manifestBrotli: [UInt8]?
    /// The JSON mirror's digest and its variants' ETags.
    var jsonDigests: MadeDigests

    init(json: [UInt8], reusing previous: GzipChunks?, manifest: [UInt8]? = nil) {
        self.json = json
        jsonGzip = try? Gzip.compress(json, level: PublishedCompression.gzipLevel(json.count), reusing: previous)
        jsonBrotli = Self.brotli(json)
        manifestBrotli = manifest.flatMap(Self.brotli)
        jsonDigests = MadeDigests(json, gzip: jsonGzip?.member, brotli: jsonBrotli)
    }

    private static func brotli(_ bytes: [UInt8]) -> [UInt8]? {
        try? Brotli.compress(bytes, quality: PublishedCompression.manifestBrotliQuality(SiteLoader.brotliQuality, size: bytes.count))
    }
}

/// A channel's `manifest.plist.gz` and the gzip variant of its `manifest.json`, by chunk.
struct MirrorGzip: Sendable {
    var manifest: GzipChunks?
    var json: GzipChunks?
}

/// A channel the edge refused at one load, and why.
struct ChannelFailure: Sendable {
    /// The channel's name.
    let channel: String
    /// Why it was refused.
    let error: String
    /// The version still served in its place; nil when the channel is not served.
    let servingVersion: Int?
}

/// Makes the routes under one channel's prefix, reusing what the channel's previous load made.
struct ChannelRoutes {
    /// The channel's manifest, as read.
    let channel: ChannelManifest
    /// The channel as the version being replaced served it.
    let previous: LoadedChannel?
    /// The Cache-Control of the mutable files: the manifest and its mirrors, the key list, the head.
    let manifestCC: String
    /// The Cache-Control of the immutable files: versioned manifests and deltas.
    let immutableCC: String

    /// Every route of the channel.
    func load() throws -> LoadedChannel {
        let (mirrors, gzip) = try manifestRoutes()
        var routes = mirrors
        let versioned = versionedManifests()
        routes.merge(try versionedRoutes(versioned, current: routes[channel.prefix + PublishedLayout.manifest])) { a, _ in a }
        let sha256 = routes[channel.prefix + PublishedLayout.manifest].map { ETags.sha256(ofIdentity: $0.identity.etag) }
        if let head = try headRoute(manifestSHA256: sha256) { routes[channel.prefix + PublishedLayout.head] = head }
        let deltas = try deltaRoutes()
        routes.merge(deltas) { a, _ in a }
        let value = channel.bytes.count <= LoadedChannel.keptValueBytes ? channel.value : nil
        let kept = MirrorGzip(
            manifest: gzip.manifest.flatMap { $0.input.count <= LoadedChannel.keptChunksBytes ? $0 : nil },
            json: gzip.json.flatMap { $0.input.count <= LoadedChannel.keptChunksBytes ? $0 : nil })
        return LoadedChannel(name: channel.name, manifest: channel.manifest, routes: routes, versioned: versioned, deltas: deltas, gzip: kept, value: value)
    }

    /// `manifest.plist` (with the builder's brotli), `manifest.json` and, for a signed manifest,
    /// `keylist.plist`.
    private func manifestRoutes() throws -> ([String: Resource], MirrorGzip) {
        let (prefix, created) = (channel.prefix, channel.created)
        var routes: [String: Resource] = [:]
        let gzipFile = PublishedLayout.path(channel.dir, PublishedLayout.manifestGzip)
        var gzip = MirrorGzip()
        gzip.manifest = channel.manifestGzip ?? (try? FileIO.read(gzipFile)).flatMap {
            GzipChunks(recovering: $0, of: channel.bytes, level: PublishedCompression.gzipLevel(channel.bytes.count))
        }
        let json: [UInt8]
        do { json = try channel.derived[PublishedLayout.manifestJSON] ?? JSONPlist.encode(Manifest.jsonMirror(channel.bytes, parsed: channel.manifest)) } catch {
            throw SiteLoadError("manifest has no JSON form: \(error)")
        }
        let made = channel.variants.map(\.value).flatMap { $0.json == json ? $0 : nil }
        let variants = made ?? MirrorVariants(json: json, reusing: previous?.gzip.json)
        routes[prefix + PublishedLayout.manifest] = try SiteLoader.resource(
            ByteBuffer(bytes: channel.bytes), type: SiteLoader.plistType, cacheControl: manifestCC, lastModified: created,
            gzipFile: gzipFile, brotliFile: PublishedLayout.path(channel.dir, PublishedLayout.manifestBrotli),
            made: (gzip.manifest?.member, channel.derived[PublishedLayout.manifestBrotli] ?? variants.manifestBrotli))
        gzip.json = variants.jsonGzip
        routes[prefix + PublishedLayout.manifestJSON] = try SiteLoader.resource(
            ByteBuffer(bytes: json), type: SiteLoader.jsonType, cacheControl: manifestCC, lastModified: created,
            made: (variants.jsonGzip?.member, variants.jsonBrotli), digests: variants.jsonDigests)
        // The key list a signed manifest carries, also on its own for people and tools.
        if channel.manifest.expiresAt != nil, let signed = try? SignedManifest.decode(channel.bytes) {
            routes[prefix + PublishedLayout.keyList] = try SiteLoader.resource(
                ByteBuffer(bytes: signed.keyList.bytes), type: SiteLoader.plistType, cacheControl: manifestCC, lastModified: created)
        }
        return (routes, gzip)
    }

    /// Every manifest the channel ever published (this one, those already loaded, and the new
    /// files of `manifests/` that hold the version they are named for).
    private func versionedManifests() -> [Int: ByteBuffer] {
        var versioned = previous?.versioned ?? [:]
        versioned[channel.manifest.version] = ByteBuffer(bytes: channel.bytes)
        for name in (try? FileIO.list(PublishedLayout.path(channel.dir, PublishedLayout.manifests))) ?? [] {
            guard let v = PublishedLayout.version(ofManifestFile: name), v > 0, versioned[v] == nil else { continue }
            if let bytes = try? FileIO.read(PublishedLayout.path(channel.dir, PublishedLayout.versionedManifest(v))),
                (try? Manifest(bytes: bytes))?.version == v
            {
                versioned[v] = ByteBuffer(bytes: bytes)
            }
        }
        return versioned
    }

    /// `manifests/<v>.plist` for each versioned manifest: immutable. This version's has the
    /// bytes and gzip variant of `current`, the channel's `manifest.plist`.
    private func versionedRoutes(_ versioned: [Int: ByteBuffer], current: Resource?) throws -> [String: Resource] {
        var routes: [String: Resource] = [:]
        for (v, bytes) in versioned {
            let path = channel.prefix + PublishedLayout.versionedManifest(v)
            // Immutable: what the previous load made stays (a reload compresses only new ones).
            if let old = previous?.routes[path], previous?.versioned[v] != nil {
                routes[path] = old
                continue
            }
            if v == channel.manifest.version, let current {
                routes[path] = Resource(
                    identity: current.identity.with(cacheControl: immutableCC), gzip: current.gzip?.with(cacheControl: immutableCC),
                    lastModified: current.lastModified)
                continue
            }
            let m = try? Manifest(bytes: Array(bytes.readableBytesView))
            let date = m.map { Int64($0.createdAt.timeIntervalSince1970.rounded(.down)) } ?? channel.created
            // No brotli: old versions are rarely asked for, and every reload would compress them all again.
            routes[path] = try SiteLoader.resource(bytes, type: SiteLoader.plistType, cacheControl: immutableCC, lastModified: date, brotli: false)
        }
        return routes
    }

    /// The head, when it describes this manifest (a build writes it just before the manifest).
    private func headRoute(manifestSHA256: String?) throws -> Resource? {
        guard let bytes = try? FileIO.read(PublishedLayout.path(channel.dir, PublishedLayout.head)),
            let head = try? DeltaHead(bytes: bytes), head.sha256 == manifestSHA256 ?? ContentHash.sha256Hex(channel.bytes),
            head.version == channel.manifest.version
        else { return nil }
        return try SiteLoader.resource(
            ByteBuffer(bytes: bytes), type: SiteLoader.plistType, cacheControl: manifestCC, lastModified: channel.created)
    }

    /// A delta's file name: `FROM-TO.plist`, two SHA-256s.
    private static let deltaNameLength = 64 * 2 + 1 + ".plist".utf8.count

    /// The deltas beside the head, by URL path: immutable, like objects.
    private func deltaRoutes() throws -> [String: Resource] {
        var deltas: [String: Resource] = [:]
        // Names of another length (the .gz and .br variants) are skipped unparsed, and the deltas
        // served already kept as they were: a directory holds every version's deltas until a prune.
        for name in (try? FileIO.list(PublishedLayout.path(channel.dir, PublishedLayout.deltas))) ?? [] where name.utf8.count == Self.deltaNameLength {
            let path = channel.prefix + PublishedLayout.deltas + "/" + name
            if let old = previous?.deltas[path] {
                deltas[path] = old
                continue
            }
            guard PublishedLayout.deltaPair(ofFile: name) != nil else { continue }
            let file = PublishedLayout.path(channel.dir, PublishedLayout.deltas + "/" + name)
            if let bytes = try? FileIO.read(file) {
                deltas[path] = try SiteLoader.resource(
                    ByteBuffer(bytes: bytes), type: SiteLoader.plistType, cacheControl: immutableCC, lastModified: channel.created,
                    brotliFile: file + ".br")
            }
        }
        return deltas
    }
}
