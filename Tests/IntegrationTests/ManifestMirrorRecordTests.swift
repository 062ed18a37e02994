import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

@testable import FolioBuilder

/// The builder makes `manifest.json` from the mirror it wrote for the current manifest
/// (`.folio-build-mirror` says which one that is): every mirror must be the bytes the whole
/// encoding gives, whether the record is there, missing, damaged, or the files were replaced.
@Suite("JSON mirrors made from the last one")
struct ManifestMirrorRecordTests {
    static func whole(_ root: String) throws -> [UInt8] {
        let bytes = try FileIO.read(root + "/manifest.plist")
        return try JSONPlist.encode(Manifest.jsonMirror(bytes))
    }

    /// Publishes versions 1 to 8, doing `meddle` before each, and checks each mirror.
    static func publishAll(_ label: String, meddle: (String, Int) throws -> Void) throws {
        let root = Harness.tempDir(label)
        defer { Harness.cleanup(root) }
        for n in 1...8 {
            try meddle(root, n)
            try DeltaBuilderFixture.publish(root, DeltaPrintsTests.version(n, salt: ""))
            #expect(try FileIO.read(root + "/manifest.json") == Self.whole(root), "\(label): version \(n)")
            #expect(FileIO.exists(root + "/" + ManifestMirrorRecord.fileName))
        }
    }

    @Test("kept, missing, damaged or stale records, and a mirror replaced by hand, all give the whole encoding")
    func mirrors() throws {
        let record = ManifestMirrorRecord.fileName
        try Self.publishAll("mirror-kept") { root, n in
            // From the second version on, the record names the mirror on disk, and it is used.
            if n > 1 { #expect(ManifestMirrorRecord.currentJSON(channelDir: root) != nil) }
        }
        try Self.publishAll("mirror-missing") { root, _ in unlink(root + "/" + record) }
        try Self.publishAll("mirror-damaged") { root, _ in
            guard var bytes = try? FileIO.read(root + "/" + record) else { return }
            bytes[bytes.count - 3] ^= 0x55
            try FileIO.writeAtomically(bytes, to: root + "/" + record)
            #expect(ManifestMirrorRecord.currentJSON(channelDir: root) == nil)
        }
        // Another program rewrote the mirror (same layout, other text): not spliced from.
        try Self.publishAll("mirror-replaced") { root, n in
            guard n > 1 else { return }
            let text = String(decoding: try FileIO.read(root + "/manifest.json"), as: UTF8.self)
            try FileIO.writeAtomically(Array(text.replacingOccurrences(of: "\"p/", with: "\"q/").utf8), to: root + "/manifest.json")
            #expect(ManifestMirrorRecord.currentJSON(channelDir: root) == nil)
        }
        // A build killed after the commit point, before its mirrors: the manifest is newer.
        try Self.publishAll("mirror-stale") { root, n in
            guard n > 1 else { return }
            let manifest = try FileIO.read(root + "/manifest.plist")
            try FileIO.writeAtomically(manifest, to: root + "/manifest.plist")
            #expect(ManifestMirrorRecord.currentJSON(channelDir: root) == nil)
        }
    }

    @Test("the versioned manifests' SHA-256s kept by stamp: missing, damaged or stale, the same deltas")
    func keptSHAs() throws {
        let name = ManifestSHACache.fileName
        let kept = try DeltaPrintsTests.publishAll("shas-kept") { prints, n in
            let root = FileIO.parent(of: prints)
            if n > 2 { #expect(ManifestSHACache.load(channelDir: root).count == n - 1) }
        }
        defer { Harness.cleanup(kept) }
        let expected = try DeltaPrintsTests.deltas(kept)
        let missing = try DeltaPrintsTests.publishAll("shas-missing") { prints, _ in unlink(FileIO.parent(of: prints) + "/" + name) }
        let damaged = try DeltaPrintsTests.publishAll("shas-damaged") { prints, _ in
            let path = FileIO.parent(of: prints) + "/" + name
            guard var bytes = try? FileIO.read(path) else { return }
            for i in stride(from: 7, to: bytes.count, by: 31) { bytes[i] = UInt8(ascii: "x") }
            try FileIO.writeAtomically(bytes, to: path)
        }
        // Every versioned manifest rewritten (new stamps, same bytes): the kept SHA-256s are not found.
        let rewritten = try DeltaPrintsTests.publishAll("shas-rewritten") { prints, _ in
            let root = FileIO.parent(of: prints)
            for file in (try? FileIO.list(root + "/manifests")) ?? [] {
                try FileIO.writeAtomically(try FileIO.read(root + "/manifests/" + file), to: root + "/manifests/" + file)
            }
        }
        defer { for root in [missing, damaged, rewritten] { Harness.cleanup(root) } }
        for root in [missing, damaged, rewritten] { #expect(try DeltaPrintsTests.deltas(root) == expected, "\(root)") }
    }

    @Test("added, changed and removed counts: sorted lists (merged) and unsorted ones (a dictionary) against a plain count")
    func counts() {
        var rng = SplitMix64(seed: 0x39A)
        func list() -> [Manifest.Entry] {
            let entries = (0..<rng.int(0...30)).map { _ in
                Manifest.Entry(path: "p/\(rng.int(0...40))", sha256: rng.pick(["a", "b"]), size: 1, gzipSize: nil, contentType: "t")
            }
            return Dictionary(entries.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a }).values.sorted { $0.path < $1.path }
        }
        for _ in 0..<300 {
            let (old, new) = (list(), list())
            let before = Dictionary(uniqueKeysWithValues: old.map { ($0.path, $0.sha256) })
            let after = Set(new.map(\.path))
            let expected = [
                new.count { before[$0.path] == nil }, new.count { e in before[e.path].map { $0 != e.sha256 } ?? false },
                old.count { !after.contains($0.path) },
            ]
            func counts(_ c: (added: Int, modified: Int, removed: Int)) -> [Int] { [c.added, c.modified, c.removed] }
            #expect(counts(PublishSession.changes(from: old, to: new)) == expected)
            #expect(counts(PublishSession.changes(from: old.reversed(), to: new.reversed())) == expected)
        }
    }
}
