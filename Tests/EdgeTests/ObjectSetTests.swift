import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

@testable import FolioEdge

/// A load's objects: each read and verified, variants decoded against the object, except the
/// files a deploy's commit staged and checked just now.
@Suite("Object set")
struct ObjectSetTests {
    /// A root with one object whose gzip variant, of the manifest's size, decodes to other bytes.
    static func corruptVariant() throws -> (ChannelRootFixture, Manifest.Entry, gz: String) {
        let fixture = ChannelRootFixture()
        var entry = try fixture.object("a.txt", "alpha alpha alpha alpha alpha alpha alpha", gzip: true)
        let gz = try #require(entry.gzipObjectPath)
        let other = try Gzip.compress(Array("omega omega omega omega omega omega omega".utf8))
        try FileIO.writeAtomically(other, to: fixture.root + "/" + gz, sync: false)
        entry.gzipSize = other.count
        return (fixture, entry, gz)
    }

    @Test("a variant that decodes to other bytes is refused; one the deploy checked is read as it is")
    func checkedVariants() throws {
        let (fixture, entry, gz) = try Self.corruptVariant()
        defer { fixture.cleanup() }
        var strict = ObjectSet(root: fixture.root, budget: 1 << 20, previous: [:])
        #expect(throws: SiteLoadError.self) { try strict.load([entry], lastModified: 0) }

        var trusting = ObjectSet(root: fixture.root, budget: 1 << 20, previous: [:], checked: [gz])
        try trusting.load([entry], lastModified: 0)
        let bytes = try FileIO.read(fixture.root + "/" + gz)
        #expect(trusting.objects[entry.sha256]?.gzip?.etag == ETags.gzip(entry.sha256, gzipBytes: bytes))
        #expect(trusting.objects[entry.sha256]?.gzip?.size == bytes.count)
    }

    @Test("a checked file of another size than the manifest's is still refused")
    func checkedSizes() throws {
        let (fixture, entry, gz) = try Self.corruptVariant()
        defer { fixture.cleanup() }
        var wrong = entry
        wrong.gzipSize = (entry.gzipSize ?? 0) + 1
        var set = ObjectSet(root: fixture.root, budget: 1 << 20, previous: [:], checked: [gz, entry.objectPath])
        #expect(throws: SiteLoadError.self) { try set.load([wrong], lastModified: 0) }
        var plain = entry
        plain.size += 1
        var other = ObjectSet(root: fixture.root, budget: 1 << 20, previous: [:], checked: [gz, entry.objectPath])
        #expect(throws: SiteLoadError.self) { try other.load([plain], lastModified: 0) }
    }
}

/// What an edge that takes deploys keeps of each manifest it loads: the value its bytes decode
/// to, which the first deploy's delta applies to without decoding the served manifest again.
@Suite("Site loads: kept manifest values")
struct KeptManifestValueTests {
    @Test("kept with deploys on, whole load and update alike; not kept otherwise")
    func keptValues() throws {
        let fixture = ChannelRootFixture()
        defer { fixture.cleanup() }
        let a = try fixture.object("a.txt", "alpha")
        let first = try fixture.publish(ChannelRootFixture.manifest(1, entries: [a]))
        var loader = SiteLoader(root: fixture.root, memoryBudget: 1 << 20)
        #expect(try loader.load(previous: nil).channels[Channel.production]?.value == nil)
        loader.keepValues = true
        let site = try loader.load(previous: nil)
        #expect(site.channels[Channel.production]?.value == (try PlistValue.decode(first)))
        let second = try fixture.publish(ChannelRootFixture.manifest(2, entries: [a, try fixture.object("b.txt", "beta")]))
        let updated = try loader.update(previous: site)
        #expect(updated.manifest.version == 2)
        #expect(updated.channels[Channel.production]?.value == (try PlistValue.decode(second)))
    }
}
