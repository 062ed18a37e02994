import Foundation
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Testing

/// ``ManifestEdit`` (the manifest's edit computed in place on the two files) against the general
/// path (both decoded, ``PlistPatch``), on generated version histories, plain and signed: its
/// edit must rebuild the target's exact bytes, name the same changed entries, and be no larger
/// than the general one by more than a little.
@Suite("Manifest edits in place")
struct ManifestEditTests {
    static let created = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static func sha(_ rng: inout SplitMix64) -> String { ContentHash.hex(rng.bytes(32)) }

    static func entry(_ path: String, _ rng: inout SplitMix64) -> Manifest.Entry {
        let asset = path.hasSuffix(".png")
        return Manifest.Entry(
            path: path, sha256: sha(&rng), size: rng.int(1...90_000), gzipSize: asset || rng.chance(0.2) ? nil : rng.int(1...9_000),
            contentType: asset ? "image/png" : Manifest.plistContentType, locale: rng.chance(0.1) ? "fr" : nil,
            kind: asset ? "asset" : rng.pick(["data", "document", "sonnet", nil]),
            cache: rng.chance(0.1) ? Manifest.CacheHint(maxAge: rng.int(0...3600), staleIfError: 60) : nil)
    }

    /// The next version: some entries changed, added, removed; sometimes the notice or hints.
    static func evolve(_ m: Manifest, _ rng: inout SplitMix64) -> Manifest {
        var entries = m.entries
        for _ in 0..<rng.int(0...4) where !entries.isEmpty {
            let i = rng.int(0...(entries.count - 1))
            switch rng.int(0...3) {
            case 0: entries[i].sha256 = sha(&rng); entries[i].size += 1
            case 1: entries.remove(at: i)
            case 2: entries[i].cache = rng.chance(0.5) ? nil : Manifest.CacheHint(maxAge: 5)
            default: entries.append(entry("new/\(rng.int(0...1_000_000))-é.plist", &rng))
            }
        }
        if rng.chance(0.1) { entries.append(entries.first.map { e in var c = e; c.path = "copy/" + e.path; return c } ?? entry("x.plist", &rng)) }
        var unique: [String: Manifest.Entry] = [:]
        for e in entries { unique[e.path] = e }
        return Manifest(
            version: m.version + 1, createdAt: m.createdAt.addingTimeInterval(60), history: m.history,
            notice: rng.chance(0.2) ? "maintenance at \(rng.int(1...9))" : m.notice, expiresAt: m.expiresAt.map { $0.addingTimeInterval(60) },
            cacheHints: rng.chance(0.1) ? ["manifest": Manifest.CacheHint(maxAge: 30)] : m.cacheHints, entries: Array(unique.values))
    }

    static func check(_ source: [UInt8], _ target: [UInt8], sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let fast = try #require(ManifestEdit.make(from: source, to: target), sourceLocation: sourceLocation)
        let rebuilt = BinaryPlist.encode(try PlistPatch.apply(fast.edit, to: try BinaryPlist.decode(source)))
        #expect(rebuilt == target, "the in-place edit does not rebuild the target", sourceLocation: sourceLocation)
        let general = try #require(DeltaBundle.edit(from: source, to: target), sourceLocation: sourceLocation)
        let (a, b) = (BinaryPlist.encode(fast.edit).count, BinaryPlist.encode(general).count)
        #expect(a <= b + 64, "in-place edit \(a) bytes, general \(b)", sourceLocation: sourceLocation)
        // The changed entries are those of the target that the source does not list as they are.
        let (from, to) = (try Manifest(bytes: source), try Manifest(bytes: target))
        let expected = to.entries.filter { $0 != from.entry($0.path) }.map(\.path)
        #expect(fast.changes.map(\.target.path).sorted() == expected.sorted(), sourceLocation: sourceLocation)
        for change in fast.changes {
            #expect(change.source == from.entry(change.target.path), sourceLocation: sourceLocation)
            let held = from.entries.contains { $0.sha256 == change.target.sha256 }
            #expect(fast.held.contains(change.target.sha256) == held, sourceLocation: sourceLocation)
        }
        #expect(fast.sourceHistory == from.history && fast.targetHistory == to.history, sourceLocation: sourceLocation)
        try checkPrinted(source, target, against: fast, sourceLocation: sourceLocation)
        for edit in [fast.edit, general] { try checkPatched(source, edit, sourceLocation: sourceLocation) }
    }

    /// The manifest read by following `edit` (its copied entries taken from the source's) is
    /// the manifest read whole; a plain manifest is always followed.
    static func checkPatched(_ source: [UInt8], _ edit: PlistValue, sourceLocation: Testing.SourceLocation) throws {
        let sourceValue = try BinaryPlist.decode(source)
        let value = try PlistPatch.apply(edit, to: sourceValue)
        let patched = try Manifest(patched: value, from: try Manifest(bytes: source), sourceValue: sourceValue, edit: edit)
        let whole = try Manifest(decoded: value)
        if whole.expiresAt == nil {
            #expect(patched == whole, "a plain manifest's delta read by its edit", sourceLocation: sourceLocation)
        } else {
            #expect(patched == nil, "a signed manifest is read whole", sourceLocation: sourceLocation)
        }
    }

    /// With both files' ``ManifestPrints`` the outcome is the very same as without.
    static func checkPrinted(
        _ source: [UInt8], _ target: [UInt8], against plain: ManifestEdit.Outcome, sourceLocation: Testing.SourceLocation
    ) throws {
        let prints = (source: try #require(ManifestPrints(manifest: source)), target: try #require(ManifestPrints(manifest: target)))
        let printed = try #require(ManifestEdit.make(from: source, to: target, prints: prints), sourceLocation: sourceLocation)
        #expect(BinaryPlist.encode(printed.edit) == BinaryPlist.encode(plain.edit), "prints change the edit", sourceLocation: sourceLocation)
        #expect(printed.changes.map(\.target) == plain.changes.map(\.target), sourceLocation: sourceLocation)
        #expect(printed.changes.map(\.source) == plain.changes.map(\.source), sourceLocation: sourceLocation)
        #expect(printed.held == plain.held, sourceLocation: sourceLocation)
    }

    @Test("generated histories: every version against the five before it")
    func plainHistories() throws {
        var rng = SplitMix64(seed: 0xD17A)
        for round in 0..<6 {
            var m = Manifest(
                version: 1, createdAt: Self.created, history: "h\(round)",
                entries: (0..<rng.int(0...400)).map { i in Self.entry("p/\(i)\(rng.chance(0.1) ? ".png" : ".plist")", &rng) })
            var files = [BinaryPlist.encode(m.plist)]
            // Each version a delta step from the last, applied to the value the last step kept.
            var last = (bytes: files[0], manifest: m, value: try BinaryPlist.decode(files[0]))
            for _ in 0..<8 {
                m = Self.evolve(m, &rng)
                let target = BinaryPlist.encode(m.plist)
                for source in files.suffix(5) where source != target { try Self.check(source, target) }
                files.append(target)
                guard last.bytes != target, let edit = ManifestEdit.make(from: last.bytes, to: target)?.edit else { continue }
                let step = try DeltaStep.apply(
                    DeltaBundle(manifest: edit, objects: [:]), to: last.bytes, source: last.manifest, plain: last.manifest, sourceValue: last.value,
                    targetSHA256: ContentHash.sha256Hex(target)) { _ in nil }
                let (manifest, value) = (try Manifest(bytes: target), try BinaryPlist.decode(target))
                #expect(step.manifestBytes == target && step.manifest == manifest)
                #expect(step.value == value, "the value kept is what the bytes decode to")
                last = (target, step.manifest, step.value)
            }
        }
    }

    @Test("signed manifests: the inner manifest is edited in place too")
    func signedHistories() throws {
        var rng = SplitMix64(seed: 0x5161)
        let root = SecretKey.generate(), signer = SecretKey.generate()
        let list = KeyList(
            version: 1, createdAt: Self.created, expiresAt: Self.created.addingTimeInterval(86_400 * 365), threshold: 1,
            root: root.publicKey, keys: [signer.publicKey], revoked: [])
        let keys = SignedKeyList(signing: list, with: root)
        var m = Manifest(
            version: 1, createdAt: Self.created, history: "hs", expiresAt: Self.created.addingTimeInterval(86_400),
            entries: (0..<300).map { i in Self.entry("s/\(i).plist", &rng) })
        func sign(_ m: Manifest) -> [UInt8] { SignedManifest(signing: BinaryPlist.encode(m.plist), manifest: m, keys: [signer], keyList: keys).bytes }
        var files = [sign(m)]
        for _ in 0..<5 {
            m = Self.evolve(m, &rng)
            let target = sign(m)
            for source in files.suffix(3) { try Self.check(source, target) }
            files.append(target)
        }
    }

    @Test("equal files, other histories and files that are not manifests")
    func edges() throws {
        var rng = SplitMix64(seed: 7)
        let m = Manifest(version: 1, createdAt: Self.created, history: "a", entries: [Self.entry("a.plist", &rng)])
        let bytes = BinaryPlist.encode(m.plist)
        #expect(ManifestEdit.make(from: bytes, to: bytes) == nil)
        var other = m
        other.history = "b"
        other.version = 2
        let outcome = try #require(ManifestEdit.make(from: bytes, to: BinaryPlist.encode(other.plist)))
        #expect(outcome.sourceHistory == "a" && outcome.targetHistory == "b")
        #expect(ManifestEdit.make(from: bytes, to: BinaryPlist.encode(.dict(["version": .int(2)]))) == nil)
        #expect(ManifestEdit.make(from: Array("bplist00 broken".utf8), to: bytes) == nil)
        #expect(ManifestEdit.make(from: bytes, to: Array(bytes.dropLast(3))) == nil)
    }
}
