import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// ``Manifest/binaryPlist`` (written from the fields) against the general writer on the
/// manifest's ``Manifest/plist``: the same bytes, on generated histories with every optional
/// field, strings shared between entries and keys, and reference widths of 1, 2 and 4 bytes.
@Suite("Manifests written from their fields")
struct ManifestBinaryTests {
    static func general(_ m: Manifest) -> [UInt8] { BinaryPlist.encode(m.plist) }

    /// An entry with any of the optional fields, values often shared with others and with keys.
    static func entry(_ path: String, _ rng: inout SplitMix64) -> Manifest.Entry {
        var e = ManifestEditTests.entry(path, &rng)
        if rng.chance(0.3) { e.brSize = rng.int(0...9_000) }
        if rng.chance(0.1) { e.minimumAppVersion = rng.pick(["1.2", "2.0.1", "1.2"]) }
        if rng.chance(0.05) { e.locale = rng.pick(["path", "size", "kind", "application/x-plist"]) }
        if rng.chance(0.05) { e.kind = rng.pick(["sha256", "minimumAppVersion", "h1"]) }
        if rng.chance(0.05) { e.size = rng.pick([0, 1, 255, 256, 65_535, 65_536, Int(Int32.max), Int(Int64.max)]) }
        if rng.chance(0.02) { e.gzipSize = e.size }
        return e
    }

    static func evolve(_ m: Manifest, _ rng: inout SplitMix64) -> Manifest {
        var next = ManifestEditTests.evolve(m, &rng)
        next.entries = next.entries.map { e in rng.chance(0.02) ? entry(e.path, &rng) : e }
        if rng.chance(0.2) { next.channel = rng.pick([nil, "beta", "path"]) }
        if rng.chance(0.2) { next.critical.toggle() }
        if rng.chance(0.2) { next.minimumAppVersion = rng.pick([nil, "1.2", "3"]) }
        if rng.chance(0.2) { next.maintenanceUntil = rng.chance(0.5) ? nil : ManifestEditTests.created.addingTimeInterval(3600) }
        if rng.chance(0.2) { next.sourceRevision = rng.pick([nil, "abc123", "h1"]) }
        if rng.chance(0.2) { next.history = rng.pick([nil, "h1", "sha256"]) }
        if rng.chance(0.2), !next.entries.isEmpty {
            next.releases = [Release(id: next.version, rolloutBasisPoints: rng.int(1...10_000), entries: Array(next.entries.prefix(3)))]
        }
        return next
    }

    @Test("generated histories: the same bytes as the general writer")
    func histories() throws {
        var rng = SplitMix64(seed: 0x39B)
        for round in 0..<6 {
            var m = Manifest(
                version: 1, createdAt: ManifestEditTests.created, history: "h\(round)",
                expiresAt: round % 3 == 2 ? ManifestEditTests.created.addingTimeInterval(86_400) : nil,
                entries: (0..<rng.int(0...400)).map { i in Self.entry("p/\(i)\(rng.chance(0.1) ? ".png" : ".plist")", &rng) })
            for step in 0..<12 {
                #expect(m.binaryPlist == Self.general(m), "round \(round) step \(step)")
                #expect(try Manifest(bytes: m.binaryPlist) == m, "round \(round) step \(step): reads back")
                m = Self.evolve(m, &rng)
            }
        }
    }

    @Test("no entries, one, and enough objects for two- and four-byte references")
    func sizes() throws {
        var rng = SplitMix64(seed: 0x39C)
        for count in [0, 1, 14, 15, 60, 3_000, 14_000] {
            let m = Manifest(
                version: 7, createdAt: ManifestEditTests.created, sourceRevision: "r",
                entries: (0..<count).map { i in Self.entry("d/\(i)-ü.plist", &rng) })
            #expect(m.binaryPlist == Self.general(m), "\(count) entries")
        }
    }

    @Test("the entry keys are listed in the order the writer sorts them, and are the keys an entry writes")
    func keyOrder() {
        var e = Manifest.Entry(
            path: "a", sha256: String(repeating: "0", count: 64), size: 1, gzipSize: 1, contentType: "t", locale: "fr", kind: "data",
            cache: Manifest.CacheHint(maxAge: 1), brSize: 1)
        e.minimumAppVersion = "1.0"
        guard case .dict(let d) = e.plist else { Issue.record("an entry's plist is a dictionary"); return }
        #expect(Manifest.entryKeys == d.keys.sorted())
    }
}
