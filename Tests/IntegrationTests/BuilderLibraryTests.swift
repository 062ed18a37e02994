import FolioTestSupport
import FolioBuilder
import FolioPublished
import FolioSupport
import Foundation
import Testing

/// The builder's pipeline called in-process (no folio-build process): versions, publish
/// histories, reproducibility, and objects that match their entries.
@Suite("FolioBuilder pipeline", .serialized)
struct BuilderLibraryTests {
    /// Runs the standard pipeline quietly; returns whether it published (or was up to date).
    private func build(_ content: String, _ output: String, epoch: String? = "1700000000") -> Bool {
        var env = ["FOLIO_SOURCE_REVISION": "library-tests"]
        if let epoch { env["SOURCE_DATE_EPOCH"] = epoch }
        let config = BuildConfiguration(contentDir: content, outputDir: output, environment: env, quiet: true)
        return Pipeline.make(config).run(config)
    }

    private func manifest(_ root: String) throws -> Manifest {
        try Manifest(bytes: try FileIO.read(PublishedLayout.path(root, PublishedLayout.manifest)))
    }

    @Test("publish, no-op, edit: versions 1, 1, 2 in one history; every object matches its entry")
    func versionsAndHistory() throws {
        let dir = Harness.tempDir("lib-build")
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        let root = dir + "/public"
        #expect(build(content, root))
        let first = try manifest(root)
        #expect(first.version == 1)
        let history = try #require(first.history)
        #expect(history.count == 32 && history.allSatisfy(\.isHexDigit))
        for entry in first.entries {
            #expect(entry.matches(try FileIO.read(PublishedLayout.path(root, entry.objectPath))), "\(entry.path)")
        }
        let before = Harness.snapshot(root)
        #expect(build(content, root))
        #expect(Harness.snapshot(root) == before, "an unchanged build changed files")

        let sonnet = content + "/sonnets/018.txt"
        let text = String(decoding: try FileIO.read(sonnet), as: UTF8.self)
        try FileIO.writeAtomically(Array(text.replacingOccurrences(of: "summer’s day", with: "winter’s night").utf8), to: sonnet)
        #expect(build(content, root, epoch: "1700000100"))
        let second = try manifest(root)
        #expect(second.version == 2)
        #expect(second.history == history)
        #expect(FileIO.exists(PublishedLayout.path(root, PublishedLayout.versionedManifest(1))))
        let changed = Set(second.entries.map(\.sha256)).subtracting(first.entries.map(\.sha256))
        #expect(changed.count == 3)  // the sonnet, the index, the whole collection
    }

    @Test("with SOURCE_DATE_EPOCH two first publishes are byte-identical; without, histories differ")
    func reproducibleHistories() throws {
        let dir = Harness.tempDir("lib-repro")
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        #expect(build(content, dir + "/a"))
        #expect(build(content, dir + "/b"))
        #expect(Harness.snapshot(dir + "/a") == Harness.snapshot(dir + "/b"))
        #expect(build(content, dir + "/c", epoch: nil))
        #expect(build(content, dir + "/d", epoch: nil))
        let (c, d) = (try manifest(dir + "/c"), try manifest(dir + "/d"))
        #expect(c.history != nil && c.history != d.history)
        #expect(c.sameContent(as: d))
    }

    @Test("bad content publishes nothing and leaves the published directory as it was")
    func failedBuildKeepsOutput() throws {
        let dir = Harness.tempDir("lib-bad")
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        let root = dir + "/public"
        #expect(build(content, root))
        let before = Harness.snapshot(root)
        try FileIO.writeAtomically(Array("\"broken = \"x\";\n".utf8), to: content + "/catalogs/fr/Localizable.strings")
        #expect(!build(content, root))
        #expect(Harness.snapshot(root) == before)
    }
}
