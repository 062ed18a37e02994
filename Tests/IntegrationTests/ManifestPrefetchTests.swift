import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

@testable import FolioBuilder

/// What a build reads ahead while it parses (``ManifestPrefetch``): the current manifest, the
/// versioned manifests its deltas start from and its gzip mirror's chunks, each used only while
/// its file's stamp is the one read.
@Suite("Builder: the current manifest, its versions and its gzip mirror read ahead")
struct ManifestPrefetchTests {
    /// A manifest of `count` entries at `version` (past one gzip chunk for 3,000).
    static func manifest(_ version: Int, count: Int = 3000) -> [UInt8] {
        let entries = (0..<count).map { i in
            Manifest.Entry(
                path: "posts/post-\(i).plist", sha256: ContentHash.sha256Hex(Array("\(version) \(i)".utf8)), size: 100 + i, gzipSize: 80 + i,
                contentType: Manifest.plistContentType)
        }
        return Manifest(version: version, createdAt: Date(timeIntervalSince1970: 1_700_000_000), entries: entries).binaryPlist
    }

    /// A channel with versions 1...`newest` under `manifests/`, `manifest.plist` a link to the newest.
    static func channel(newest: Int) throws -> (dir: String, versions: [Int: [UInt8]]) {
        let dir = Harness.tempDir()
        try FileIO.makeDirectory(PublishedLayout.path(dir, PublishedLayout.manifests))
        var versions: [Int: [UInt8]] = [:]
        for v in 1...newest {
            versions[v] = manifest(v)
            try FileIO.writeAtomically(versions[v]!, to: PublishedLayout.path(dir, PublishedLayout.versionedManifest(v)), sync: false)
        }
        #expect(link(PublishedLayout.path(dir, PublishedLayout.versionedManifest(newest)), PublishedLayout.path(dir, PublishedLayout.manifest)) == 0)
        return (dir, versions)
    }

    @Test("the last versions of the delta history, the newest from manifest.plist's own bytes")
    func versions() throws {
        let (dir, versions) = try Self.channel(newest: 5)
        defer { Harness.cleanup(dir) }
        let prefetch = ManifestPrefetch(channelDir: dir, history: 3)
        let read = prefetch.recentVersions()
        #expect(read.keys.sorted() == [3, 4, 5])
        for (v, source) in read { #expect(source.bytes == versions[v]) }
        // No history: none read.
        #expect(ManifestPrefetch(channelDir: dir).recentVersions().isEmpty)
    }

    @Test("the deltas take a version read ahead only while its file is the one read")
    func staleVersion() throws {
        let (dir, versions) = try Self.channel(newest: 3)
        defer { Harness.cleanup(dir) }
        let read = ManifestPrefetch(channelDir: dir, history: 3).recentVersions()
        // Version 2 is written again after it was read ahead (another build, say).
        let rewritten = Self.manifest(2, count: 2999)
        try FileIO.writeAtomically(rewritten, to: PublishedLayout.path(dir, PublishedLayout.versionedManifest(2)), sync: false)
        // Version 1 read ahead is marked, to see which bytes the writer takes.
        var marked = read
        marked[1]?.bytes = Array("read ahead".utf8)
        let writer = DeltaWriter(root: dir, history: 3, version: 4, prefetched: marked)
        let byVersion = Dictionary(uniqueKeysWithValues: writer.recent.map { ($0.version, $0.bytes) })
        #expect(byVersion[1] == Array("read ahead".utf8))
        #expect(byVersion[2] == rewritten)
        #expect(byVersion[3] == versions[3])
    }

    @Test("the gzip mirror's chunks: found for the current manifest, none once the mirror changes")
    func gzipMirror() throws {
        let (dir, versions) = try Self.channel(newest: 2)
        defer { Harness.cleanup(dir) }
        let mirror = PublishedLayout.path(dir, PublishedLayout.manifestGzip)
        let level = Steps.gzipLevel(versions[2]!.count)
        try #require(versions[2]!.count > Gzip.chunkSize)
        #expect(ManifestPrefetch(channelDir: dir).gzipMirror(path: mirror) == nil)
        try FileIO.writeAtomically(try Gzip.compress(versions[2]!, level: level), to: mirror, sync: false)
        let prefetch = ManifestPrefetch(channelDir: dir)
        let chunks = try #require(prefetch.gzipMirror(path: mirror))
        #expect(chunks.input == versions[2] && chunks.level == level)
        // A mirror of another manifest is not the current one's: no chunks.
        try FileIO.writeAtomically(try Gzip.compress(versions[1]!, level: level), to: mirror, sync: false)
        #expect(prefetch.gzipMirror(path: mirror) == nil)
        #expect(ManifestPrefetch(channelDir: dir).gzipMirror(path: mirror) == nil)
    }
}

@Suite("Builder: logical paths")
struct LogicalPathsTests {
    static func items(_ paths: [String]) -> [CompiledItem] {
        paths.enumerated().map { i, path in CompiledItem(path: path, plist: .int(Int64(i)), kind: "data", sources: ["src/\(i).json"]) }
    }

    @Test("a duplicate is reported against the first item with its exact path, a case clash against the first of its folded path")
    func collisions() {
        var diags = Diagnostics()
        LogicalPaths.check(Self.items(["X.plist", "x.plist", "x.plist", "X.plist", "y.plist", "a/.hidden"]), into: &diags)
        let messages = diags.all.map { "\($0.path): \($0.message)" }
        #expect(messages.count == 4, "\(messages)")
        #expect(messages[0].hasPrefix("src/1.json: x.plist and X.plist (from src/0.json) differ only in case"))
        #expect(messages[1].hasPrefix("src/2.json: src/2.json and src/1.json both publish x.plist"))
        #expect(messages[2].hasPrefix("src/3.json: src/3.json and src/0.json both publish X.plist"))
        #expect(messages[3].hasPrefix("src/5.json: a/.hidden cannot be a published path"))
    }

    @Test("distinct paths pass")
    func distinct() {
        var diags = Diagnostics()
        LogicalPaths.check(Self.items((0..<500).map { "posts/post-\($0).plist" } + ["Posts/Other.plist"]), into: &diags)
        #expect(diags.all.isEmpty)
    }
}
