import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

@testable import FolioEdge

/// Release channels in the origin's loader: every channel's files under its prefix, every
/// release's objects, a broken channel refused alone, and the reloader's stamp.
@Suite("Site channels")
struct ChannelSiteTests {
    typealias Fixture = ChannelRootFixture

    /// Production (one entry), beta (its own entry and a release with an entry of its own).
    struct Published {
        let fixture = Fixture()
        let shared: Manifest.Entry
        let betaOnly: Manifest.Entry
        let releaseOnly: Manifest.Entry
        let production: [UInt8]
        let beta: [UInt8]

        init() throws {
            shared = try fixture.object("notes/shared.txt", "shared by every channel\n")
            betaOnly = try fixture.object("notes/beta.txt", "only in beta's defaults\n", gzip: true)
            releaseOnly = try fixture.object("notes/shared.txt", "only in beta's 10% release\n")
            production = try fixture.publish(Fixture.manifest(1, entries: [shared]))
            let release = Release(id: 1, rolloutBasisPoints: 1000, entries: [releaseOnly])
            beta = try fixture.publish(Fixture.manifest(1, channel: "beta", entries: [shared, betaOnly], releases: [release]), channel: "beta")
        }
    }

    /// The origin's loader for `root`, with a budget every fixture fits in.
    static func loader(_ root: String) -> SiteLoader { SiteLoader(root: root, memoryBudget: 1 << 20) }

    /// A resource's identity bytes, when in memory.
    static func body(_ resource: Resource?) -> [UInt8]? {
        resource?.identity.body.map { Array($0.readableBytesView) }
    }

    @Test("beta's manifest, mirrors, head and versioned manifest are under /channels/beta/, with production's cache rules")
    func channelRoutes() throws {
        let p = try Published()
        defer { p.fixture.cleanup() }
        let site = try Self.loader(p.fixture.root).load(previous: nil)
        #expect(site.channels.keys.sorted() == ["beta", "production"])
        #expect(site.channelFailures.isEmpty)
        let manifest = try #require(site.routes["/channels/beta/manifest.plist"])
        #expect(Self.body(manifest) == p.beta)
        let manifestCC = Manifest.defaultCacheHints["manifest"]!.cacheControl
        #expect(manifest.identity.head200.getString(at: 0, length: manifest.identity.head200.readableBytes)?.contains("Cache-Control: \(manifestCC)\r\n") == true)
        #expect(site.routes["/channels/beta/manifest.json"] != nil)
        #expect(site.routes["/channels/beta/head.plist"] != nil)
        let versioned = try #require(site.routes["/channels/beta/manifests/1.plist"])
        #expect(Self.body(versioned) == p.beta)
        #expect(versioned.identity.fields.contains { $0 == ("cache-control", Manifest.defaultCacheHints["object"]!.cacheControl) })
        // Production's stay at the root, with its own bytes.
        #expect(Self.body(site.routes["/manifest.plist"]) == p.production)
        #expect(site.routes["/channels/production/manifest.plist"] == nil)
        #expect(site.manifest.version == 1 && site.manifest.channel == nil)
    }

    @Test("every object of every channel and release is at /objects/; /content/ has production's defaults only")
    func objects() throws {
        let p = try Published()
        defer { p.fixture.cleanup() }
        let site = try Self.loader(p.fixture.root).load(previous: nil)
        for entry in [p.shared, p.betaOnly, p.releaseOnly] {
            let route = try #require(site.routes["/" + entry.objectPath], "\(entry.objectPath)")
            #expect(Self.body(route) == (try FileIO.read(p.fixture.root + "/" + entry.objectPath)))
            #expect(route.identity.etag == "\"\(entry.sha256)\"")
        }
        #expect(site.routes["/" + p.betaOnly.objectPath]?.gzip != nil)
        #expect(Self.body(site.routes["/content/notes/shared.txt"]) == Array("shared by every channel\n".utf8))
        #expect(site.routes["/content/notes/beta.txt"] == nil)
    }

    @Test("a beta that does not verify at start is left out and reported; production serves")
    func brokenChannelAtStart() throws {
        let p = try Published()
        defer { p.fixture.cleanup() }
        try FileManager.default.removeItem(atPath: p.fixture.root + "/" + p.releaseOnly.objectPath)
        let site = try Self.loader(p.fixture.root).load(previous: nil)
        #expect(site.channels.keys.sorted() == ["production"])
        #expect(site.channelFailures.map(\.channel) == ["beta"])
        #expect(site.channelFailures.first?.servingVersion == nil)
        #expect(site.channelFailures.first?.error.contains("notes/shared.txt") == true)
        #expect(site.routes["/channels/beta/manifest.plist"] == nil)
        #expect(site.routes["/" + p.betaOnly.objectPath] == nil, "nothing of a refused channel is kept")
        #expect(Self.body(site.routes["/manifest.plist"]) == p.production)
    }

    @Test("a broken beta publish keeps beta's previous version, its objects and its routes")
    func brokenChannelOnReload() throws {
        let p = try Published()
        defer { p.fixture.cleanup() }
        let loader = Self.loader(p.fixture.root)
        let first = try loader.load(previous: nil)
        let missing = try p.fixture.object("notes/gone.txt", "never on disk\n")
        try FileManager.default.removeItem(atPath: p.fixture.root + "/" + missing.objectPath)
        try p.fixture.publish(Fixture.manifest(2, channel: "beta", entries: [missing]), channel: "beta")
        let site = try loader.load(previous: first)
        #expect(site.channelFailures.map(\.channel) == ["beta"])
        #expect(site.channelFailures.first?.servingVersion == 1)
        #expect(site.channels["beta"]?.manifest.version == 1)
        #expect(Self.body(site.routes["/channels/beta/manifest.plist"]) == p.beta)
        #expect(site.routes["/" + p.releaseOnly.objectPath] != nil)
        #expect(site.sameManifests(as: first))
    }

    @Test("a new beta version: the previous version's objects stay servable, its head follows")
    func newChannelVersion() throws {
        let p = try Published()
        defer { p.fixture.cleanup() }
        let loader = Self.loader(p.fixture.root)
        let first = try loader.load(previous: nil)
        let next = try p.fixture.object("notes/beta.txt", "beta, version 2\n")
        let v2 = try p.fixture.publish(Fixture.manifest(2, channel: "beta", entries: [p.shared, next]), channel: "beta")
        let site = try loader.load(previous: first)
        #expect(site.channelFailures.isEmpty)
        #expect(!site.sameManifests(as: first))
        #expect(Self.body(site.routes["/channels/beta/manifest.plist"]) == v2)
        #expect(site.routes["/" + next.objectPath] != nil)
        #expect(site.routes["/" + p.releaseOnly.objectPath] != nil, "version 1's release object stays for one more version")
        #expect(site.routes["/" + p.betaOnly.objectPath] != nil)
        #expect(site.routes["/channels/beta/manifests/1.plist"] != nil && site.routes["/channels/beta/manifests/2.plist"] != nil)
        #expect(site.objects[p.shared.sha256].map { $0.identity != nil } == true)
        let third = try loader.load(previous: site)
        #expect(third.routes["/" + p.releaseOnly.objectPath] == nil, "two versions on, it is gone")
    }

    @Test("a manifest in another channel's directory is refused: beta alone, production entirely")
    func wrongChannel() throws {
        let p = try Published()
        defer { p.fixture.cleanup() }
        try p.fixture.publish(Fixture.manifest(2, channel: "qa", entries: [p.shared]), channel: "beta")
        let site = try Self.loader(p.fixture.root).load(previous: nil)
        #expect(site.channelFailures.first?.error.contains("channel qa's manifest, published as beta's") == true)
        try p.fixture.publish(Fixture.manifest(2, channel: "beta", entries: [p.shared]))
        #expect(throws: SiteLoadError.self) { try Self.loader(p.fixture.root).load(previous: site) }
    }

    @Test("no production manifest: refused as before, even with channels")
    func productionRequired() throws {
        let p = try Published()
        defer { p.fixture.cleanup() }
        try FileManager.default.removeItem(atPath: p.fixture.root + "/manifest.plist")
        #expect(throws: SiteLoadError.self) { try Self.loader(p.fixture.root).load(previous: nil) }
    }

    @Test("the reloader's stamp moves with a publish into any channel, a new channel and a removed one")
    func stamp() throws {
        let p = try Published()
        defer { p.fixture.cleanup() }
        let root = p.fixture.root
        let first = PublishedStamp.read(root)
        #expect(first.manifests.keys.sorted() == ["beta", "production"])
        #expect(PublishedStamp.read(root) == first)
        try p.fixture.publish(Fixture.manifest(2, channel: "beta", entries: [p.shared]), channel: "beta")
        let second = PublishedStamp.read(root)
        #expect(second != first && second.manifests["production"] == first.manifests["production"])
        try p.fixture.publish(Fixture.manifest(1, channel: "qa", entries: [p.shared]), channel: "qa")
        #expect(PublishedStamp.read(root).manifests.keys.sorted() == ["beta", "production", "qa"])
        try FileManager.default.removeItem(atPath: root + "/channels/qa")
        #expect(PublishedStamp.read(root) == second)
    }
}

/// Reading a manifest fetch's channel from a request target's bytes, and the bounded table
/// of per-channel counters.
@Suite("Manifest fetch metrics")
struct ManifestFetchTests {
    /// The channel `target` fetches the manifest or head of, as text ("" for none).
    static func channel(_ target: String, plain: Bool = false) -> String {
        var target = target
        return target.withUTF8 { raw in
            let bytes = UnsafeRawBufferPointer(raw)
            switch ManifestFetch.of(bytes, plainPath: plain) {
            case nil: return ""
            case .production: return "production"
            case .channel(let r): return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[r]), as: UTF8.self)
            }
        }
    }

    @Test("paths of manifests and heads, by channel; anything else is none")
    func paths() {
        let cases: [(String, String)] = [
            ("/manifest.plist", "production"), ("/head.plist", "production"), ("/manifest.plist?x=1", "production"),
            ("/channels/beta/manifest.plist", "beta"), ("/channels/qa-2/head.plist", "qa-2"),
            ("/channels/beta/manifest.plist#top", "beta"), ("http://edge.example/channels/beta/head.plist", "beta"),
            ("https://edge.example/manifest.plist?v=3", "production"),
            ("/manifest.json", ""), ("/manifest.plist.gz", ""), ("/keylist.plist", ""), ("/objects/ab.plist", ""),
            ("/channels/manifest.plist", ""), ("/channels//manifest.plist", ""), ("/channels/Beta/manifest.plist", ""),
            ("/channels/-x/manifest.plist", ""), ("/channels/a/b/manifest.plist", ""), ("/channels/production/manifest.plist", ""),
            ("/channels/\(String(repeating: "a", count: 33))/manifest.plist", ""), ("/x/manifest.plist", ""),
            ("/content/manifest.plist", ""), ("manifest.plist", ""), ("", ""), ("/", ""), ("/channels/beta/manifests/1.plist", ""),
            ("/channels/beta/manifest.plist?q", "beta"), ("/channels/beta/manifest.plistx", ""), ("http://h", ""),
        ]
        for (target, expected) in cases {
            #expect(Self.channel(target) == expected, "\(target)")
        }
        // A plain path is read as it stands (the origin's plain targets have no query).
        #expect(Self.channel("/channels/beta/head.plist", plain: true) == "beta")
        #expect(Self.channel("/manifest.plist?x", plain: true) == "")
    }

    @Test("a channel name on bytes is Channel.isValidName, production aside")
    func names() {
        for name in ["beta", "qa-2", "a", "0", "production", "Beta", "-a", "", "a_b", "a.b", "é", String(repeating: "z", count: 32), String(repeating: "z", count: 33)] {
            var n = name
            let onBytes = n.withUTF8 { ManifestFetch.isChannelName(UnsafeRawBufferPointer($0)) }
            #expect(onBytes == (Channel.isValidName(name) && name != Channel.production), "\(name)")
        }
    }

    @Test("the table holds at most its limit of names; a known name is found again")
    func bounded() {
        var table = BoundedNames<Int>(limit: 3)
        var made = 0
        func value(_ name: String) -> Int? {
            var name = name
            return name.withUTF8 { table.value(for: UnsafeRawBufferPointer($0)) { _ in made += 1; return made } }
        }
        #expect(value("beta") == 1 && value("qa") == 2 && value("beta") == 1)
        #expect(value("c") == 3)
        #expect(value("d") == nil && value("e") == nil)
        #expect(value("qa") == 2 && table.count == 3 && made == 3)
    }
}

/// A deploy's parsed manifests handed to the load after its commit.
@Suite("Site load: a deploy's parsed manifests")
struct ParsedManifestLoadTests {
    typealias Fixture = ChannelRootFixture

    @Test("a parsed manifest with the file's bytes is taken, its mirrors served; other bytes are not")
    func takenOnlyForTheSameBytes() throws {
        let fixture = Fixture()
        defer { fixture.cleanup() }
        // Enough entries for a manifest that gzip makes smaller.
        let entries = try (0..<30).map { try fixture.object("notes/\($0).txt", "note \($0)\n") }
        let bytes = try fixture.publish(Fixture.manifest(1, entries: entries))
        let manifest = try Manifest(bytes: bytes)
        // Mirrors the loader would never make itself (a JSON mirror of another shape, a gzip
        // variant at level 12, which no publish uses): served only when taken.
        let marked = Array(#"{"taken":true}"#.utf8)
        let gzip = try Gzip.compress(bytes, level: 12, reusing: nil)
        #expect(gzip.member != (try Gzip.compress(bytes, level: PublishedCompression.gzipLevel(bytes.count))))
        let loader = ChannelSiteTests.loader(fixture.root)
        func parsed(_ bytes: [UInt8], _ manifest: Manifest) -> [String: ParsedManifest] {
            [Channel.production: ParsedManifest(bytes: bytes, manifest: manifest, derived: [PublishedLayout.manifestJSON: marked], manifestGzip: gzip)]
        }
        let taken = try loader.load(previous: nil, parsed: parsed(bytes, manifest))
        #expect(ChannelSiteTests.body(taken.routes["/manifest.json"]) == marked)
        #expect(taken.routes["/manifest.plist"]?.gzip?.body.map { Array($0.readableBytesView) } == gzip.member)
        #expect(taken.manifest.version == 1)
        let otherBytes = BinaryPlist.encode(Fixture.manifest(2, entries: entries).plist)
        let other = try Manifest(bytes: otherBytes)
        let ignored = try loader.load(previous: nil, parsed: parsed(otherBytes, other))
        #expect(ChannelSiteTests.body(ignored.routes["/manifest.json"]) != marked)
        #expect(ignored.routes["/manifest.plist"]?.gzip?.body.map { Array($0.readableBytesView) } != gzip.member)
        #expect(ignored.manifest.version == 1, "the file's own manifest, not the parsed one")
    }
}

/// Catalog tables across reloads: a table's locale chooser is kept while its locales are the same.
@Suite("Site load: catalog choosers across reloads")
struct CatalogReloadTests {
    typealias Fixture = ChannelRootFixture
    static let table = "/content/catalogs/Main.plist"

    @Test("the same locales keep the chooser and take the new objects; another locale makes a new one")
    func choosersReused() throws {
        let fixture = Fixture()
        defer { fixture.cleanup() }
        let en = try fixture.object("catalogs/en/Main.plist", "en 1\n")
        let loader = ChannelSiteTests.loader(fixture.root)
        try fixture.publish(Fixture.manifest(1, entries: [en, try fixture.object("catalogs/fr/Main.plist", "fr 1\n")]))
        let firstSite = try loader.load(previous: nil)
        let first = try #require(firstSite.catalogs.tables[Self.table])
        let fr2 = try fixture.object("catalogs/fr/Main.plist", "fr 2\n")
        try fixture.publish(Fixture.manifest(2, entries: [en, fr2]))
        let secondSite = try loader.load(previous: firstSite)
        let second = try #require(secondSite.catalogs.tables[Self.table])
        #expect(second.chooser === first.chooser)
        let french = second.variants[try #require(second.chooser.names.firstIndex(of: "fr"))]
        #expect(ChannelSiteTests.body(french) == Array("fr 2\n".utf8))
        try fixture.publish(Fixture.manifest(3, entries: [en, fr2, try fixture.object("catalogs/de/Main.plist", "de 1\n")]))
        let third = try #require(try loader.load(previous: secondSite).catalogs.tables[Self.table])
        #expect(third.chooser !== second.chooser)
        #expect(third.chooser.names == ["de", "en", "fr"])
    }
}
