import Foundation
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Testing

/// ``ManifestPrints``: an entry's print is equal to another's exactly when the two are written
/// the same; prints kept between builds are taken back only whole, undamaged and for the same
/// manifest file; prints that do not fit the files are not used.
@Suite("Manifest prints")
struct ManifestPrintsTests {
    static func manifest(_ count: Int, seed: UInt64, version: Int = 1) -> Manifest {
        var rng = SplitMix64(seed: seed)
        return Manifest(
            version: version, createdAt: ManifestEditTests.created, history: "h",
            entries: (0..<count).map { i in ManifestEditTests.entry("p/\(i).plist", &rng) })
    }

    @Test("equal prints for entries written the same, and only for those")
    func printsFollowSame() throws {
        let a = Self.manifest(60, seed: 1)
        var b = a
        b.version = 2
        b.entries[7].size += 1
        b.entries[30].cache = Manifest.CacheHint(maxAge: 9)
        let (x, y) = (BinaryPlist.encode(a.plist), BinaryPlist.encode(b.plist))
        let (p, q) = (try #require(ManifestPrints(manifest: x)), try #require(ManifestPrints(manifest: y)))
        #expect(p.count == 60 && q.count == 60)
        var pairs: [(prints: Bool, same: Bool)] = []
        try BinaryPlistView.with(x) { (s: inout BinaryPlistView) throws(PlistError) in
            try BinaryPlistView.with(y) { (t: inout BinaryPlistView) throws(PlistError) in
                let (ex, ey) = (try s.elements(p.arrayRef), try t.elements(q.arrayRef))
                for i in 0..<60 {
                    for j in [i, (i + 1) % 60] { pairs.append((p.same(i, as: j, of: q), try s.same(ex[i], as: ey[j], in: t))) }
                }
            }
        }
        #expect(pairs.count == 120 && pairs.allSatisfy { $0.prints == $0.same })
        #expect(pairs.count { $0.same } == 58)
        #expect(!p.same(7, as: 7, of: q) && !p.same(30, as: 30, of: q) && p.same(8, as: 8, of: q))
    }

    @Test("an entry past the comparison's limit has no print")
    func pastTheLimit() throws {
        let bytes = BinaryPlist.encode(.array([.dict(["path": .string("a"), "n": .array((0..<9).map { .int($0) })])]))
        let results = try BinaryPlistView.with(bytes) { (v: inout BinaryPlistView) throws(PlistError) -> [Bool] in
            let element = try v.elements(v.top)[0]
            var (whole, cut): ([UInt8], [UInt8]) = ([], [])
            return [
                try v.written(element, into: &whole), try v.written(element, into: &cut, limit: 5), try v.same(element, as: element, in: v, limit: 5),
            ]
        }
        #expect(results == [true, false, false])
        let prints = try #require(ManifestPrints(manifest: BinaryPlist.encode(.dict(["entries": .array([.dict(["path": .string("a")])])]))))
        #expect(prints.same(0, as: 0, of: prints))
    }

    @Test("stored prints come back only whole, undamaged and for their manifest")
    func stored() throws {
        let bytes = BinaryPlist.encode(Self.manifest(40, seed: 2).plist)
        let other = ContentHash.sha256Hex(BinaryPlist.encode(Self.manifest(40, seed: 3).plist))
        let sha = ContentHash.sha256Hex(bytes)
        let prints = try #require(ManifestPrints(manifest: bytes))
        let kept = prints.stored(manifestSHA256: sha)
        #expect(ManifestPrints(stored: kept, manifestSHA256: sha) == prints)
        #expect(ManifestPrints(stored: kept, manifestSHA256: other) == nil, "stale: the prints of another manifest")
        for offset in stride(from: 0, to: kept.count, by: 97) {
            var damaged = kept
            damaged[offset] ^= 0x20
            #expect(ManifestPrints(stored: damaged, manifestSHA256: sha) == nil, "damaged at \(offset)")
        }
        for cut in [0, 10, 60, kept.count - 1] {
            #expect(ManifestPrints(stored: Array(kept.prefix(cut)), manifestSHA256: sha) == nil, "cut to \(cut)")
        }
        #expect(ManifestPrints(stored: kept + [0], manifestSHA256: sha) == nil)
    }

    @Test("prints that do not fit the files are not used")
    func misfits() throws {
        let (a, b) = (Self.manifest(30, seed: 4), Self.manifest(31, seed: 4, version: 2))
        let (x, y) = (BinaryPlist.encode(a.plist), BinaryPlist.encode(b.plist))
        let plain = try #require(ManifestEdit.make(from: x, to: y))
        let wrong = try #require(ManifestPrints(manifest: BinaryPlist.encode(Self.manifest(12, seed: 5).plist)))
        let target = try #require(ManifestPrints(manifest: y))
        let printed = try #require(ManifestEdit.make(from: x, to: y, prints: (wrong, target)))
        #expect(BinaryPlist.encode(printed.edit) == BinaryPlist.encode(plain.edit))
        #expect(printed.changes.map(\.target) == plain.changes.map(\.target) && printed.held == plain.held)
        // Prints that fit are believed (so the builder keeps them by their manifest's SHA-256):
        // the target's own prints in place of the source's make every entry look unchanged.
        let (c, d) = (Self.manifest(30, seed: 6), Self.manifest(30, seed: 6, version: 2))
        var edited = d
        edited.entries[try #require(edited.entries.firstIndex { $0.path == "p/3.plist" })].size += 1
        let (u, w) = (BinaryPlist.encode(c.plist), BinaryPlist.encode(edited.plist))
        let believed = try #require(ManifestPrints(manifest: w))
        #expect(try #require(ManifestEdit.make(from: u, to: w)).changes.map(\.target.path) == ["p/3.plist"])
        #expect(try #require(ManifestEdit.make(from: u, to: w, prints: (believed, believed))).changes.isEmpty)
    }

    @Test("files that are not manifests have no prints")
    func notManifests() {
        #expect(ManifestPrints(manifest: Array("bplist00 broken".utf8)) == nil)
        #expect(ManifestPrints(manifest: BinaryPlist.encode(.dict(["entries": .array([.string("x")])]))) == nil)
        #expect(ManifestPrints(manifest: BinaryPlist.encode(.dict(["entries": .array([.dict(["size": .int(1)])])]))) == nil)
        #expect(ManifestPrints(manifest: BinaryPlist.encode(.dict(["entries": .array([])]))) != nil)
    }

    @Test("prints taken from the previous version's for the entries it shares: the prints made from the file")
    func reusedPrints() throws {
        var rng = SplitMix64(seed: 0x39E1)
        for round in 0..<5 {
            var m = Manifest(
                version: 1, createdAt: ManifestEditTests.created, history: "h\(round)",
                entries: (0..<rng.int(0...300)).map { i in ManifestBinaryTests.entry("p/\(i).plist", &rng) })
            for step in 0..<8 {
                let next = ManifestBinaryTests.evolve(m, &rng)
                let (old, new) = (m.binaryPlist, next.binaryPlist)
                let oldPrints = try #require(ManifestPrints(manifest: old))
                let made = try #require(ManifestPrints(manifest: new))
                let reused = try #require(ManifestPrints(manifest: new, entries: next.entries, reusing: oldPrints, of: m.entries))
                #expect(reused == made, "round \(round) step \(step)")
                m = next
            }
        }
    }

    @Test("prints are not taken from prints that do not fit: other counts, other entries, old entries out of order")
    func reusedPrintsRefused() throws {
        let a = Self.manifest(40, seed: 3)
        var b = a
        b.version = 2
        b.entries[5].size += 1
        let (x, y) = (a.binaryPlist, b.binaryPlist)
        let p = try #require(ManifestPrints(manifest: x))
        #expect(ManifestPrints(manifest: y, entries: b.entries, reusing: p, of: Array(a.entries.dropLast())) == nil)
        let made = try #require(ManifestPrints(manifest: y))
        // Old entries out of path order: fewer are paired, and the prints are still those of the file.
        #expect(ManifestPrints(manifest: y, entries: b.entries, reusing: p, of: a.entries.reversed()) == made)
        #expect(ManifestPrints(manifest: y, entries: Array(b.entries.dropLast()), reusing: p, of: a.entries) == nil)
        // Old entries that are not those of the prints (another SHA-256): made from the file, the same.
        var other = a.entries
        other[9].sha256 = String(repeating: "f", count: 64)
        #expect(ManifestPrints(manifest: y, entries: b.entries, reusing: p, of: other) == made)
    }
}
