import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// ``Manifest/quicklyDecoded(_:)`` against ``Manifest/init(bytes:)``: the same manifest on
/// generated histories, and on damaged files either the same manifest or nil (never one the
/// general reader refuses, never a different one).
@Suite("Manifests read in place")
struct ManifestQuickDecodeTests {
    @Test("generated histories: the same manifest as the general reader")
    func histories() throws {
        var rng = SplitMix64(seed: 0x39D)
        for round in 0..<6 {
            var m = Manifest(
                version: 1, createdAt: ManifestEditTests.created, history: "h\(round)",
                entries: (0..<rng.int(0...300)).map { i in ManifestBinaryTests.entry("p/\(i)\(rng.chance(0.1) ? ".png" : ".plist")", &rng) })
            for step in 0..<10 {
                let bytes = m.binaryPlist
                let quick = try #require(Manifest.quicklyDecoded(bytes), "round \(round) step \(step)")
                #expect(quick == (try Manifest(bytes: bytes)), "round \(round) step \(step)")
                #expect(quick == m, "round \(round) step \(step)")
                m = ManifestBinaryTests.evolve(m, &rng)
            }
        }
    }

    @Test("what it leaves to the general reader: other formats, signed manifests, unknown and repeated keys, bad fields")
    func declined() throws {
        var rng = SplitMix64(seed: 0x39E)
        let m = Manifest(version: 3, createdAt: ManifestEditTests.created, entries: (0..<5).map { ManifestEditTests.entry("a/\($0).plist", &rng) })
        #expect(Manifest.quicklyDecoded(try XMLPlist.encode(m.plist)) == nil)
        func edited(_ change: (inout [PlistValue]) -> Void) -> [UInt8] {
            guard case .dict(var root) = m.plist, case .array(var entries) = root["entries"] else { return [] }
            change(&entries)
            root["entries"] = .array(entries)
            return BinaryPlist.encode(.dict(root))
        }
        func set(_ key: String, _ value: PlistValue) -> [UInt8] {
            edited { entries in
                guard case .dict(var d) = entries[1] else { return }
                d[key] = value
                entries[1] = .dict(d)
            }
        }
        // An unknown key: the general reader ignores it, this one declines.
        let unknown = set("extra", .string("x"))
        #expect(Manifest.quicklyDecoded(unknown) == nil)
        #expect((try? Manifest(bytes: unknown)) != nil)
        // Bad fields: declined here, an error there.
        for bad in [set("sha256", .string("xyz")), set("path", .string("../up")), set("size", .int(-1)), set("size", .string("1"))] {
            #expect(Manifest.quicklyDecoded(bad) == nil)
            #expect((try? Manifest(bytes: bad)) == nil)
        }
        // A field of another type that the general reader drops (gzipSize as a string): the same.
        let dropped = set("gzipSize", .string("12"))
        #expect(Manifest.quicklyDecoded(dropped) == (try Manifest(bytes: dropped)))
        // Two entries with one path.
        let twice = edited { $0.append($0[0]) }
        #expect(Manifest.quicklyDecoded(twice) == nil)
        #expect((try? Manifest(bytes: twice)) == nil)
    }

    @Test("damaged files: the general reader's manifest, or nil")
    func damaged() throws {
        var rng = SplitMix64(seed: 0x39F)
        let m = Manifest(
            version: 3, createdAt: ManifestEditTests.created, history: "h",
            entries: (0..<40).map { ManifestBinaryTests.entry("a/\($0).plist", &rng) })
        let bytes = m.binaryPlist
        var decoded = 0
        for _ in 0..<3_000 {
            var copy = bytes
            for _ in 0..<rng.int(1...3) { copy[rng.int(8...(copy.count - 1))] = UInt8(truncatingIfNeeded: rng.next()) }
            let general = try? Manifest(bytes: copy)
            guard let quick = Manifest.quicklyDecoded(copy) else { continue }
            decoded += 1
            #expect(quick == general)
        }
        #expect(decoded > 100, "most single-byte changes still decode")
    }
}
