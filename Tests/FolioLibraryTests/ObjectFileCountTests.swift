import FolioTestSupport
import Foundation
import Testing

@testable import FolioPublished

/// `Manifest.objectFiles`: the object files a deploy's summary counts, against the paths
/// themselves gathered in a set.
@Suite("manifest: object files named")
struct ObjectFileCountTests {
    /// The files the manifests name, by path: what the count must equal.
    static func paths(_ manifests: [Manifest]) -> Int {
        Set(manifests.flatMap(\.allEntries).flatMap { [$0.objectPath, $0.gzipObjectPath, $0.brotliObjectPath].compactMap { $0 } }).count
    }

    /// Manifests whose entries often share objects (within one, across releases and across
    /// manifests), under other extensions or with other variants.
    static func manifests(seed: UInt64) -> [Manifest] {
        var rng = SplitMix64(seed: seed)
        // Few digests, so many entries share one; a shared prefix on some makes the sort's ties.
        let digests = (0..<40).map { i in (i % 3 == 0 ? "00000000" : String(format: "%08x", rng.int(0...0xFFFF_FFF))) + String(repeating: "\(i % 10)", count: 56) }
        func entry(_ i: Int) -> Manifest.Entry {
            Manifest.Entry(
                path: "dir/\(i)." + rng.pick(["plist", "txt", "png", "JSON"]), sha256: rng.pick(digests), size: 10,
                gzipSize: rng.chance(0.5) ? 5 : nil, contentType: "application/octet-stream", brSize: rng.chance(0.3) ? 4 : nil)
        }
        return (0..<rng.int(1...3)).map { m in
            var manifest = Manifest(version: m + 1, createdAt: Date(timeIntervalSince1970: 0), entries: (0..<rng.int(0...60)).map(entry))
            manifest.releases = (0..<rng.int(0...2)).map { r in Release(id: r + 1, rolloutBasisPoints: 5000, entries: (100..<(100 + rng.int(0...10))).map(entry)) }
            return manifest
        }
    }

    @Test("the count equals the set of paths", arguments: 0..<40 as Range<UInt64>)
    func sameAsPaths(seed: UInt64) {
        let manifests = Self.manifests(seed: seed)
        #expect(Manifest.objectFiles(manifests) == Self.paths(manifests))
    }

    @Test("nothing named, nothing counted")
    func empty() {
        #expect(Manifest.objectFiles([]) == 0)
        #expect(Manifest.objectFiles([Manifest(version: 1, createdAt: Date(), entries: [])]) == 0)
    }
}
