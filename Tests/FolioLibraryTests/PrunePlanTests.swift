import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Testing

/// The prune rule on a listing: channels, releases, deltas, unknown names, order, and refusals.
@Suite("prune plan")
struct PrunePlanTests {
    static func entry(_ path: String, _ text: String) -> Manifest.Entry {
        let bytes = Array(text.utf8)
        return Manifest.Entry(path: path, sha256: ContentHash.sha256Hex(bytes), size: bytes.count, gzipSize: 3, contentType: Manifest.plistContentType)
    }

    static func manifest(_ version: Int, _ entries: [Manifest.Entry], channel: String? = nil, releases: [Release] = []) -> [UInt8] {
        var m = Manifest(version: version, createdAt: Date(timeIntervalSince1970: 1_700_000_000), history: "h", entries: entries)
        m.channel = channel
        m.releases = releases
        return BinaryPlist.encode(m.plist)
    }

    /// Production at versions 1-3 (3 with a staged release), beta at 1-2, their objects with
    /// variants, deltas, and files that are not Folio's.
    struct Site {
        var files: [String: Int] = [:]
        var contents: [String: [UInt8]] = [:]
        var prod: [[UInt8]] = []

        init() {
            let e = (1...3).map { PrunePlanTests.entry("a.plist", "a\($0)") }
            let release = Release(id: 3, rolloutBasisPoints: 1000, entries: [PrunePlanTests.entry("r.plist", "rollout")])
            prod = [manifest(1, [e[0]]), manifest(2, [e[1]]), manifest(3, [e[2]], releases: [release])]
            let beta = [manifest(1, [e[0]], channel: "beta"), manifest(2, [PrunePlanTests.entry("b.plist", "beta")], channel: "beta")]
            for (i, bytes) in prod.enumerated() { add("manifests/\(i + 1).plist", bytes) }
            for (i, bytes) in beta.enumerated() { add("channels/beta/manifests/\(i + 1).plist", bytes) }
            add("manifest.plist", prod[2])
            add("channels/beta/manifest.plist", beta[1])
            for m in prod + beta {
                for entry in try! Manifest(bytes: m).allEntries {
                    for path in [entry.objectPath, entry.objectPath + ".gz", entry.objectPath + ".br"] { add(path, [1, 2]) }
                }
            }
            add(PublishedLayout.delta(from: sha(prod[0]), to: sha(prod[1])) + ".gz", [1])
            add(PublishedLayout.delta(from: sha(prod[1]), to: sha(prod[2])), [1])
            for other in ["objects/README", "deltas/notes.txt", "objects/.tmp-1", "channels/Bad/manifests/1.plist", "keylist.plist"] { add(other, [0]) }
        }

        func sha(_ bytes: [UInt8]) -> String { ContentHash.sha256Hex(bytes) }

        mutating func add(_ path: String, _ bytes: [UInt8]) {
            files[path] = bytes.count
            contents[path] = bytes
        }

        func plan(keep: Int) throws -> PrunePlan {
            let wanted = Dictionary(uniqueKeysWithValues: PrunePlan.filesToRead(files, keep: keep).compactMap { p in contents[p].map { (p, $0) } })
            return try PrunePlan(files: files, contents: wanted, keep: keep, location: "site")
        }
    }

    @Test("--keep 1: the current versions, the release's objects and beta's stay; the rest of manifests, deltas, objects goes")
    func keepOne() throws {
        let site = Site()
        let plan = try site.plan(keep: 1)
        let removed = plan.removed.map(\.path)
        #expect(removed.prefix(3) == ["channels/beta/manifests/1.plist", "manifests/1.plist", "manifests/2.plist"])
        #expect(removed[3] == PublishedLayout.delta(from: site.sha(site.prod[0]), to: site.sha(site.prod[1])) + ".gz")
        let a1 = Self.entry("a.plist", "a1").objectPath, a2 = Self.entry("a.plist", "a2").objectPath
        let objects: Set<String> = [a1, a1 + ".gz", a1 + ".br", a2, a2 + ".gz", a2 + ".br"]
        #expect(Set(removed.dropFirst(4)) == objects)
        let kept = Set(plan.kept.map(\.path))
        #expect(kept.contains(Self.entry("r.plist", "rollout").objectPath + ".br"))  // the staged release's
        #expect(kept.contains(Self.entry("b.plist", "beta").objectPath))
        #expect(kept.contains(PublishedLayout.delta(from: site.sha(site.prod[1]), to: site.sha(site.prod[2]))))
        #expect(plan.unknown.sorted() == ["deltas/notes.txt", "objects/README"])
        #expect(plan.versionsKept == ["production": [3], "beta": [2]])
        #expect(plan.removedBytes == plan.removed.reduce(0) { $0 + $1.size })
    }

    @Test("--keep 3 keeps every version of both channels: nothing to remove")
    func keepAll() throws {
        let plan = try Site().plan(keep: 3)
        #expect(plan.removed.isEmpty, "\(plan.removed)")
        #expect(plan.versionsKept["production"] == [1, 2, 3])
    }

    @Test("a kept manifest missing or unreadable: a refusal, nothing planned")
    func refusals() throws {
        var site = Site()
        site.contents["manifests/3.plist"] = nil
        #expect(throws: PruneError.self) { try site.plan(keep: 1) }
        site.contents["manifests/3.plist"] = [0x62, 0x61, 0x64]
        let error = #expect(throws: PruneError.self) { try site.plan(keep: 1) }
        #expect(error?.description.contains("site/manifests/3.plist is not a manifest folio-build can read") == true)
        #expect(throws: PruneError.self) { try PrunePlan(files: ["objects/x": 1], contents: [:], keep: 1, location: "empty") }
    }
}
