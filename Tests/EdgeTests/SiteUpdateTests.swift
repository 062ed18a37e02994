import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import NIOCore
import Testing

@testable import FolioEdge

/// A new version made from the served one by what changed (``SiteUpdate``) answers as the same
/// version loaded whole: a random walk of publishes into two channels, each step loaded both
/// ways and compared route by route (bytes, validators, heads), object by object.
@Suite("Site updates")
struct SiteUpdateTests {
    typealias Fixture = ChannelRootFixture

    /// The walk's state: production's and beta's entries, and beta's release.
    struct Walk {
        let fixture = Fixture()
        var rng: UInt64
        var production: [Manifest.Entry] = []
        var beta: [Manifest.Entry] = []
        var release: [Manifest.Entry]? = nil
        var version = 1
        var texts = 0
        /// Whether each text given other variants than at first has a gzip variant.
        var gzipped: [String: Bool] = [:]
        /// An entry given other variants of its bytes in this publish.
        var revariant: Manifest.Entry?

        init(seed: UInt64) { rng = seed }

        mutating func next(_ n: Int) -> Int {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            return Int((rng >> 33) % UInt64(n))
        }

        /// A new object at `path`: new text, or (one time in eight) text published before
        /// (with the variants it has now: at first, gzip for even lengths).
        mutating func object(_ path: String) throws -> Manifest.Entry {
            texts += 1
            let text = texts > 4 && next(8) == 0 ? "text \(next(texts))\n" : "text \(texts)\n"
            return try fixture.object(path, text, gzip: gzipped[text] ?? (text.utf8.count % 2 == 0))
        }

        /// One change to `entries`: an edit, an addition, a removal, another content type, or
        /// the same bytes with other variants.
        mutating func change(_ entries: inout [Manifest.Entry], prefix: String) throws {
            // Not the catalog (a catalog changed loads the version whole).
            let i = entries.isEmpty ? 0 : next(entries.count)
            switch entries[safe: i]?.path.hasPrefix("catalogs/") == true ? 0 : next(entries.count < 3 ? 2 : 12) {
            case 0, 1: entries.append(try object("\(prefix)/n\(next(1000)).txt"))
            case 2: entries.insert(try object("\(prefix)/m\(texts).txt"), at: i)
            case 3...7: entries[i] = try object(entries[i].path)
            case 8, 9: entries.remove(at: i)
            case 10: entries[i].contentType = entries[i].contentType == "text/plain" ? "text/markdown" : "text/plain"
            default:
                // Every entry of these bytes gets the new variants, as a build gives them.
                let text = try String(contentsOfFile: fixture.root + "/" + entries[i].objectPath, encoding: .utf8)
                gzipped[text] = entries[i].gzipSize == nil
                entries[i] = try fixture.object(entries[i].path, text, gzip: gzipped[text]!)
                revariant = entries[i]
            }
            // One path, one entry: the builder never publishes two at a path.
            var seen = Set<String>()
            entries = entries.filter { seen.insert($0.path).inserted }.sorted { $0.path < $1.path }
        }

        /// One publish: production, beta or both change; beta's release comes and goes.
        mutating func publish() throws {
            version += 1
            let which = next(4)
            var (production, beta) = (self.production, self.beta)
            if which != 1 { try change(&production, prefix: "notes") }
            if which != 0 { try change(&beta, prefix: "beta") }
            (self.production, self.beta) = (production, beta)
            if let v = revariant {
                for k in self.production.indices where self.production[k].sha256 == v.sha256 { self.production[k].gzipSize = v.gzipSize }
                for k in self.beta.indices where self.beta[k].sha256 == v.sha256 { self.beta[k].gzipSize = v.gzipSize }
                if let r = release, r[0].sha256 == v.sha256 { release![0].gzipSize = v.gzipSize }
                revariant = nil
            }
            if which != 0 {
                if next(4) == 0 { release = release == nil ? [try object("beta/n1.txt")] : nil }
            }
            if next(15) == 0 { production.append(try object("catalogs/en/Main.plist")) }
            if which != 1 { try fixture.publish(Fixture.manifest(version, entries: production)) }
            if which != 0 {
                let releases = release.map { [Release(id: 1, rolloutBasisPoints: 5000, entries: $0)] } ?? []
                try fixture.publish(Fixture.manifest(version, channel: "beta", entries: beta, releases: releases), channel: "beta")
            }
        }
    }

    @Test("forty publishes into two channels, eight ways: each update answers as the version loaded whole", arguments: Array(1...8) as [UInt64])
    func updatesMatchWholeLoads(seed: UInt64) throws {
        var walk = Walk(seed: seed)
        defer { walk.fixture.cleanup() }
        for i in 0..<12 { walk.production.append(try walk.object("notes/n\(i).txt")) }
        for i in 0..<6 { walk.beta.append(try walk.object("beta/n\(i).txt")) }
        try walk.fixture.publish(Fixture.manifest(1, entries: walk.production))
        try walk.fixture.publish(Fixture.manifest(1, channel: "beta", entries: walk.beta), channel: "beta")
        let loader = SiteLoader(root: walk.fixture.root, memoryBudget: 600)  // some objects streamed from their files
        var whole = try loader.load(previous: nil)
        var updated = whole
        var updates = 0
        for step in 1...40 {
            try walk.publish()
            let next = try loader.load(previous: whole)
            if let made = SiteUpdate.load(loader, previous: updated, parsed: [:]) {
                updates += 1
                updated = made
            } else {
                updated = try loader.load(previous: updated)
            }
            try Self.expectSame(next, updated, step: step)
            whole = next
        }
        #expect(updates >= 15, "only \(updates) of 40 publishes were updates")
    }

    @Test("a site whose objects were pruned, and a forced reload, load whole")
    func loadsWhole() throws {
        var walk = Walk(seed: 9)
        defer { walk.fixture.cleanup() }
        walk.production = [try walk.object("notes/a.txt"), try walk.object("notes/b.txt")]
        try walk.fixture.publish(Fixture.manifest(1, entries: walk.production))
        let loader = SiteLoader(root: walk.fixture.root, memoryBudget: 1 << 20)
        let first = try loader.load(previous: nil)
        walk.production[0] = try walk.object("notes/a.txt")
        try walk.fixture.publish(Fixture.manifest(2, entries: walk.production))
        #expect(SiteUpdate.load(loader, previous: first, parsed: [:]) != nil)
        #expect(SiteUpdate.load(loader, previous: first.without([]), parsed: [:]) == nil)
        #expect(SiteUpdate.load(loader, previous: Site.awaitingDeploy(), parsed: [:]) == nil)
    }

    /// Requires both sites to serve the same routes with the same bytes and heads, and to hold
    /// the same objects.
    static func expectSame(_ whole: Site, _ updated: Site, step: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (a, b) = (Set(whole.routes.paths), Set(updated.routes.paths))
        #expect(a == b, "step \(step): whole alone \(a.subtracting(b)), update alone \(b.subtracting(a))", sourceLocation: sourceLocation)
        for path in a.intersection(b) {
            let (x, y) = (whole.routes[path]!, updated.routes[path]!)
            #expect(x.lastModified == y.lastModified && x.vary == y.vary, "step \(step): \(path)", sourceLocation: sourceLocation)
            for coding in [ContentCoding.identity, .gzip, .brotli] {
                let (r, s) = (x.representation(coding), y.representation(coding))
                #expect(r.etag == s.etag && r.length == s.length && r.head200 == s.head200, "step \(step): \(path) \(coding)", sourceLocation: sourceLocation)
                #expect(try bytes(r) == bytes(s), "step \(step): \(path) \(coding)", sourceLocation: sourceLocation)
            }
        }
        #expect(Set(whole.objects.keys) == Set(updated.objects.keys), "step \(step)", sourceLocation: sourceLocation)
        #expect(whole.manifest == updated.manifest, sourceLocation: sourceLocation)
        #expect(whole.channels.mapValues(\.manifest) == updated.channels.mapValues(\.manifest), sourceLocation: sourceLocation)
    }

    static func bytes(_ r: Representation) throws -> [UInt8] {
        if let body = r.body { return Array(body.readableBytesView) }
        return try FileIO.read(r.filePath!)
    }
}

extension Array {
    fileprivate subscript(safe i: Int) -> Element? { indices.contains(i) ? self[i] : nil }
}
