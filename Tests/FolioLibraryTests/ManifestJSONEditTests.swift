import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// ``ManifestJSONEdit`` against the mirror encoded whole, on generated version histories (entries
/// in path order as the builder writes them, and in any order), releases, empty lists, and
/// mirrors that are not laid out as expected.
@Suite("Manifest JSON mirrors made from the previous one")
struct ManifestJSONEditTests {
    static func whole(_ m: Manifest) throws -> [UInt8] { try JSONPlist.encode(Manifest.jsonMirror(m, signed: nil)) }

    @Test("generated histories, sorted and not: every version from the one before and the third before", arguments: [true, false])
    func histories(sorted: Bool) throws {
        var rng = SplitMix64(seed: sorted ? 0x150 : 0x151)
        for round in 0..<5 {
            var m = Manifest(
                version: 1, createdAt: ManifestEditTests.created, history: "h\(round)",
                entries: (0..<rng.int(0...300)).map { i in ManifestEditTests.entry("p/\(i)\(rng.chance(0.1) ? ".png" : ".plist")", &rng) })
            var versions = [m]
            for step in 0..<10 {
                m = ManifestEditTests.evolve(m, &rng)
                if sorted { m.entries.sort { $0.path < $1.path } }
                if step % 4 == 3 { m.releases = [Release(id: step, rolloutBasisPoints: 100, entries: Array(m.entries.prefix(2)))] }
                for old in [versions.last!, versions[max(0, versions.count - 3)]] {
                    let made = try #require(ManifestJSONEdit.mirror(of: m, signed: nil, from: try Self.whole(old), of: old))
                    #expect(made == (try Self.whole(m)), "round \(round) step \(step): from version \(old.version)")
                }
                versions.append(m)
            }
        }
    }

    @Test("to and from no entries; a mirror of another manifest or damaged is not used")
    func edges() throws {
        var rng = SplitMix64(seed: 7)
        let empty = Manifest(version: 1, createdAt: ManifestEditTests.created, entries: [])
        var full = empty
        full.version = 2
        full.entries = (0..<3).map { ManifestEditTests.entry("e/\($0).plist", &rng) }
        #expect(ManifestJSONEdit.mirror(of: full, signed: nil, from: try Self.whole(empty), of: empty) == (try Self.whole(full)))
        #expect(ManifestJSONEdit.mirror(of: empty, signed: nil, from: try Self.whole(full), of: full) == (try Self.whole(empty)))
        // The mirror given is not the one of the manifest said: refused, not spliced.
        #expect(ManifestJSONEdit.mirror(of: full, signed: nil, from: try Self.whole(empty), of: full) == nil)
        // Cut inside the entries array: its elements are not all there.
        let mirror = try Self.whole(full)
        #expect(ManifestJSONEdit.mirror(of: full, signed: nil, from: Array(mirror.prefix(mirror.count / 2)), of: full) == nil)
        #expect(ManifestJSONEdit.mirror(of: full, signed: nil, from: mirror, of: full) == mirror)
        #expect(ManifestJSONEdit.mirror(of: full, signed: nil, from: Array("{}".utf8), of: full) == nil)
    }
}
