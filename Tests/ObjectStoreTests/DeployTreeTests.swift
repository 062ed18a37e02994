import FolioObjectStore
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

@Suite("deploy tree: what a deploy to an edge describes")
struct DeployTreeTests {
    @Test("each channel's manifest by digest; every file but objects and dot files; mutable ones hashed")
    func describes() throws {
        let fixture = ChannelRootFixture()
        defer { fixture.cleanup() }
        let a = try fixture.object("notes/a.txt", "alpha alpha alpha alpha alpha alpha", gzip: true)
        try fixture.publish(ChannelRootFixture.manifest(3, entries: [a]))
        try fixture.publish(ChannelRootFixture.manifest(5, channel: "beta", entries: [a]), channel: "beta")
        let delta = PublishedLayout.delta(from: String(repeating: "a", count: 64), to: String(repeating: "b", count: 64))
        try FileIO.makeDirectory(fixture.root + "/deltas")
        try FileIO.writeAtomically([1, 2, 3], to: fixture.root + "/" + delta)
        try FileIO.writeAtomically([1], to: fixture.root + "/.folio-build.lock")

        let tree = try DeployTree(root: fixture.root)
        let manifest = try FileIO.read(fixture.root + "/manifest.plist")
        #expect(tree.version == 3)
        let production = try #require(tree.channels["production"])
        #expect(production.version == 3 && production.sha256 == ContentHash.sha256Hex(manifest) && production.size == manifest.count)
        #expect(tree.channels["beta"]?.version == 5)
        let paths = Set(tree.files.map(\.path))
        #expect(paths.contains(delta) && paths.contains("manifest.plist") && paths.contains("channels/beta/manifest.plist"), "\(paths)")
        #expect(!paths.contains { $0.hasPrefix("objects/") || $0.contains("/.") || $0.hasPrefix(".") }, "\(paths)")
        let listed = try #require(tree.files.first { $0.path == delta })
        #expect(listed.size == 3 && listed.sha256 == nil)  // immutable: by size
        #expect(tree.files.first { $0.path == "manifest.plist" }?.sha256 == ContentHash.sha256Hex(manifest))
        // The mirrors an edge makes from the manifest itself are listed by size alone; a head by digest.
        try FileIO.writeAtomically([7], to: fixture.root + "/manifest.json")
        try FileIO.writeAtomically([8], to: fixture.root + "/manifest.plist.gz")
        try FileIO.writeAtomically([9], to: fixture.root + "/head.plist")
        let mirrored = try DeployTree(root: fixture.root)
        for name in ["manifest.json", "manifest.plist.gz"] {
            let file = try #require(mirrored.files.first { $0.path == name })
            #expect(file.size == 1 && file.sha256 == nil, "\(name)")
        }
        #expect(mirrored.files.first { $0.path == "head.plist" }?.sha256 == ContentHash.sha256Hex([9]))
        #expect(tree.objectFiles() == 2)  // a and its gzip variant
    }

    @Test("a channel's version is its head's when the head describes the manifest, else the manifest's")
    func versionFromHead() throws {
        let fixture = ChannelRootFixture()
        defer { fixture.cleanup() }
        let a = try fixture.object("notes/a.txt", "alpha")
        try fixture.publish(ChannelRootFixture.manifest(3, entries: [a]))
        try fixture.publish(ChannelRootFixture.manifest(5, channel: "beta", entries: [a]), channel: "beta")
        // A head left by another publish (another digest) is not believed.
        let stale = DeltaHead(
            version: 9, sha256: String(repeating: "e", count: 64), size: 1, gzipSize: nil, deltaHistory: 0, deltasFrom: [], waypoint: nil)
        try FileIO.writeAtomically(stale.bytes, to: fixture.root + "/channels/beta/head.plist")
        unlink(fixture.root + "/head.plist")
        let tree = try DeployTree(root: fixture.root)
        #expect(tree.version == 3 && tree.channels["beta"]?.version == 5)
        // Nor a manifest that does not parse, head or no head.
        try FileIO.writeAtomically([0x62, 0x70], to: fixture.root + "/channels/beta/manifest.plist")
        #expect(throws: ObjectStoreError.self) { try DeployTree(root: fixture.root) }
    }

    @Test("only a published directory's files may be asked for: no dot files, no way out of the root")
    func askable() {
        let sha = String(repeating: "c", count: 64)
        for ok in ["objects/\(sha).plist.br", "manifest.plist", "deltas/\(sha)-\(sha).plist", "channels/beta/head.plist"] {
            #expect(DeployTree.isPublishedPath(ok), "\(ok)")
        }
        for bad in ["../etc/passwd", "objects/../../etc/passwd", ".folio-build-cache.plist", "/etc/passwd", "objects//x.plist", "notes.txt", ""] {
            #expect(!DeployTree.isPublishedPath(bad), "\(bad)")
        }
    }

    @Test("a directory without manifest.plist is refused, naming it")
    func notPublished() throws {
        let dir = Harness.tempDir("deploy-tree-empty")
        defer { Harness.cleanup(dir) }
        #expect(throws: ObjectStoreError.self) { try DeployTree(root: dir) }
    }
}

@Suite("deploy prediction: the objects an edit's deploy will send")
struct DeployPredictionTests {
    @Test("the brotli variants of the objects new since the version before, for an edge that serves it")
    func predicts() throws {
        let fixture = ChannelRootFixture()
        defer { fixture.cleanup() }
        var a = try fixture.object("a.txt", "alpha")
        a.brSize = 10
        var b = try fixture.object("b.txt", "beta")
        b.brSize = 11
        var b2 = try fixture.object("b.txt", "beta, edited")
        b2.brSize = 12
        let plain = try fixture.object("c.txt", "gamma")  // no brotli variant: the edge makes it from the delta
        var large = try fixture.object("d.txt", "delta")
        (large.size, large.brSize) = (PublishedCompression.largeObject + 1, 13)  // its brotli variant the edge makes
        var copy = b2
        copy.path = "e.txt"  // the same object twice: named once
        try fixture.publish(ChannelRootFixture.manifest(1, entries: [a, b]))
        try fixture.publish(ChannelRootFixture.manifest(2, entries: [a, b2, plain, large, copy]))

        let prediction = try #require(DeployPrediction(try DeployTree(root: fixture.root)))
        let edited = try #require(b2.brotliObjectPath)
        #expect(prediction.base == 1 && prediction.files == [edited])
        #expect(prediction.files(servedVersion: 1) == prediction.files)
        #expect(prediction.files(servedVersion: 0).isEmpty && prediction.files(servedVersion: 2).isEmpty)

        // Without the version before: none.
        unlink(fixture.root + "/" + PublishedLayout.versionedManifest(1))
        #expect(try DeployPrediction(DeployTree(root: fixture.root)) == nil)
    }

    @Test("a signed manifest's entries are those of the manifest inside it")
    func signed() throws {
        let fixture = ChannelRootFixture()
        defer { fixture.cleanup() }
        let root = SecretKey.generate(), signer = SecretKey.generate()
        let created = Date(timeIntervalSince1970: 1_700_000_000)
        let list = KeyList(
            version: 1, createdAt: created, expiresAt: created.addingTimeInterval(86_400 * 365), threshold: 1,
            root: root.publicKey, keys: [signer.publicKey], revoked: [])
        let keys = SignedKeyList(signing: list, with: root)
        var a = try fixture.object("a.txt", "alpha")
        a.brSize = 3
        var b = try fixture.object("b.txt", "beta")
        b.brSize = 4
        for (version, entries) in [(1, [a]), (2, [a, b])] {
            let m = Manifest(version: version, createdAt: created, expiresAt: created.addingTimeInterval(86_400), entries: entries)
            let bytes = SignedManifest(signing: BinaryPlist.encode(m.plist), manifest: m, keys: [signer], keyList: keys).bytes
            try FileIO.makeDirectory(fixture.root + "/manifests")
            try FileIO.writeAtomically(bytes, to: fixture.root + "/" + PublishedLayout.versionedManifest(version), sync: false)
            try FileIO.writeAtomically(bytes, to: fixture.root + "/manifest.plist", sync: false)
        }
        let prediction = try #require(try DeployPrediction(DeployTree(root: fixture.root)))
        let added = try #require(b.brotliObjectPath)
        #expect(prediction.base == 1 && prediction.files == [added])
    }

    @Test("none for a first version; among 3,000 entries, the one edited")
    func large() throws {
        let fixture = ChannelRootFixture()
        defer { fixture.cleanup() }
        try fixture.publish(ChannelRootFixture.manifest(1, entries: [try fixture.object("a.txt", "alpha")]))
        #expect(try DeployPrediction(DeployTree(root: fixture.root)) == nil)
        var many = (0..<3000).map { i in
            var entry = Manifest.Entry(path: "items/\(i).txt", sha256: ContentHash.sha256Hex(Array("\(i)".utf8)), size: 1, gzipSize: nil, contentType: "text/plain")
            entry.brSize = 1
            return entry
        }
        let bytes = try fixture.publish(ChannelRootFixture.manifest(2, entries: many))
        #expect(bytes.count > 128 << 10)
        many[1234].sha256 = ContentHash.sha256Hex(Array("edited".utf8))
        try fixture.publish(ChannelRootFixture.manifest(3, entries: many))
        let prediction = try #require(try DeployPrediction(DeployTree(root: fixture.root)))
        let edited = try #require(many[1234].brotliObjectPath)
        #expect(prediction.base == 2 && prediction.files == [edited])
    }
}
