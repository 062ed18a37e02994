import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

@testable import FolioBuilder

/// The manifest prints the builder keeps between publishes (`.folio-build-prints`) only make the
/// deltas faster: missing, damaged, cut or stale (another channel's), the deltas written are
/// the same bytes, and each rebuilds its target manifest exactly.
@Suite("Delta prints kept between builds")
struct DeltaPrintsTests {
    static func version(_ n: Int, salt: String) -> [String: PlistValue] {
        var entries: [String: PlistValue] = [:]
        for i in 0..<40 where !(n >= 3 && i == 5) {
            let edited = i % 7 == n % 7 ? " edited in \(n)" : ""
            entries["p/\(i).plist"] = .dict(["title": .string("Entry \(i)\(edited)\(salt)"), "lines": .array((0..<6).map { .string("line \($0) of \(i)") })])
        }
        if n >= 4 { entries["new/\(n).plist"] = .dict(["title": .string("New in \(n)")]) }
        return entries
    }

    /// The files under `deltas/` and `head.plist` of a published root.
    static func deltas(_ root: String) throws -> [String: [UInt8]] {
        var out = ["head.plist": try FileIO.read(root + "/head.plist")]
        for name in try FileIO.list(root + "/deltas") { out[name] = try FileIO.read(root + "/deltas/" + name) }
        return out
    }

    /// Publishes versions 1 to 8 into a new root, doing `meddle` to its prints file before each.
    static func publishAll(_ label: String, salt: String = "", meddle: (String, Int) throws -> Void) throws -> String {
        let root = Harness.tempDir(label)
        for n in 1...8 {
            try meddle(root + "/" + ManifestPrintStore.fileName, n)
            try DeltaBuilderFixture.publish(root, version(n, salt: salt))
        }
        return root
    }

    @Test("missing, damaged, cut or stale prints give the same deltas")
    func sameDeltas() throws {
        let kept = try Self.publishAll("prints-kept") { _, _ in }
        let other = try Self.publishAll("prints-other", salt: " elsewhere") { _, _ in }
        defer { for root in [kept, other] { Harness.cleanup(root) } }
        let expected = try Self.deltas(kept)
        #expect(expected.count > 10)
        let missing = try Self.publishAll("prints-missing") { path, _ in unlink(path) }
        let damaged = try Self.publishAll("prints-damaged") { path, _ in
            guard var bytes = try? FileIO.read(path) else { return }
            for i in stride(from: 100, to: bytes.count, by: 4_001) { bytes[i] ^= 0x55 }
            try FileIO.writeAtomically(bytes, to: path)
        }
        let cut = try Self.publishAll("prints-cut") { path, _ in
            guard let bytes = try? FileIO.read(path) else { return }
            try FileIO.writeAtomically(Array(bytes.prefix(bytes.count * 2 / 3)), to: path)
        }
        // Another root's prints: the prints of other manifest files, found by none of these.
        let stale = try Self.publishAll("prints-stale") { path, _ in
            try FileIO.writeAtomically(try FileIO.read(other + "/" + ManifestPrintStore.fileName), to: path)
        }
        defer { for root in [missing, damaged, cut, stale] { Harness.cleanup(root) } }
        for root in [missing, damaged, cut, stale] { #expect(try Self.deltas(root) == expected, "\(root)") }
    }

    @Test("the prints of the last versions are kept, and every delta rebuilds its target")
    func keptAndApplied() throws {
        let root = try Self.publishAll("prints-applied") { _, _ in }
        defer { Harness.cleanup(root) }
        let store = ManifestPrintStore(channelDir: root)
        var manifests: [String: [UInt8]] = [:]
        for v in 1...8 {
            let bytes = try FileIO.read(root + "/manifests/\(v).plist")
            manifests[ContentHash.sha256Hex(bytes)] = bytes
        }
        let current = ContentHash.sha256Hex(try FileIO.read(root + "/manifest.plist"))
        for (sha, bytes) in manifests {
            // Versions 1-8 are all within the default history of 10.
            #expect(store.prints(for: sha, bytes: []) != nil)
            #expect(store.prints(for: sha, bytes: [])?.prints == ManifestPrints(manifest: bytes))
        }
        let names = try FileIO.list(root + "/deltas").filter { $0.hasSuffix(".plist") }
        #expect(names.count >= 7)
        for name in names {
            let pair = try #require(PublishedLayout.deltaPair(ofFile: name))
            let bundle = try DeltaBundle(bytes: try FileIO.read(root + "/deltas/" + name))
            let rebuilt = try DeltaBundle.apply(bundle.manifest, to: try #require(manifests[pair.from]))
            #expect(ContentHash.sha256Hex(rebuilt) == pair.to)
        }
        #expect(names.contains { $0.hasSuffix(current + ".plist") })
    }
}
