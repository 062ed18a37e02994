import FolioObjectStore
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

@Suite("upload plan: commit order and headers")
struct UploadPlanTests {
    @Test("objects and deltas, versioned manifests, heads, mirrors, channel manifests, then manifest.plist alone and last")
    func order() throws {
        let fixture = ChannelRootFixture()
        defer { fixture.cleanup() }
        let a = try fixture.object("notes/a.txt", "alpha alpha alpha alpha alpha alpha", gzip: true)
        let b = try fixture.object("notes/b.txt", "beta")
        try fixture.publish(ChannelRootFixture.manifest(3, entries: [a]))
        try fixture.publish(ChannelRootFixture.manifest(5, channel: "beta", entries: [a, b]), channel: "beta")
        try FileIO.makeDirectory(fixture.root + "/deltas")
        try FileIO.writeAtomically([1], to: fixture.root + "/" + PublishedLayout.delta(from: String(repeating: "a", count: 64), to: String(repeating: "b", count: 64)))
        try FileIO.writeAtomically([1], to: fixture.root + "/manifest.json")
        try FileIO.writeAtomically([1], to: fixture.root + "/manifest.plist.gz")
        try FileIO.writeAtomically([1], to: fixture.root + "/.folio-build.lock")

        let plan = try UploadPlan(root: fixture.root)
        #expect(plan.version == 3 && plan.channelVersions == ["production": 3, "beta": 5])
        let phases = plan.phases.map { $0.items.map(\.relative) }
        #expect(Set(phases[0]) == [a.objectPath, a.gzipObjectPath!, b.objectPath, PublishedLayout.delta(from: String(repeating: "a", count: 64), to: String(repeating: "b", count: 64))])
        #expect(phases[1] == ["channels/beta/manifests/5.plist", "manifests/3.plist"])
        #expect(phases[2] == ["channels/beta/head.plist", "head.plist"])
        #expect(phases[3] == ["manifest.json", "manifest.plist.gz"])
        #expect(phases[4] == ["channels/beta/manifest.plist"])
        #expect(phases[5] == ["manifest.plist"])

        let items = Dictionary(uniqueKeysWithValues: plan.phases.flatMap(\.items).map { ($0.relative, $0) })
        let gz = try #require(items[a.gzipObjectPath!])
        #expect(gz.contentType == "text/plain" && gz.contentEncoding == "gzip" && gz.immutable)
        #expect(gz.cacheControl == "public, max-age=31536000, immutable")
        #expect(items["manifest.json"]?.contentType == "application/json; charset=utf-8")
        #expect(items["manifest.plist.gz"]?.contentType == "application/x-plist" && items["manifest.plist.gz"]?.contentEncoding == "gzip")
        #expect(items["manifest.plist"]?.immutable == false)
        #expect(items["manifest.plist"]?.cacheControl == "public, max-age=60, stale-while-revalidate=300, stale-if-error=86400")
    }

    @Test("a directory that is not a published one is refused in words")
    func notPublished() {
        let dir = Harness.tempDir("not-published")
        defer { Harness.cleanup(dir) }
        #expect { try UploadPlan(root: dir) } throws: { "\($0)".contains("is not a published directory") }
    }
}
