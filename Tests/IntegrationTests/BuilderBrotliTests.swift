import FolioBuilder
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

/// The builder's `.br` variants: where smaller than gzip, described by `brSize`, kept when already
/// on disk, replaced when damaged, turned off by `--no-brotli`; the manifest and deltas too.
@Suite("folio-build brotli variants", .serialized)
struct BuilderBrotliTests {
    let build = Harness.binary("folio-build")
    let env = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]

    func publish(_ content: String, _ out: String, _ extra: [String] = []) throws -> Harness.Output {
        let r = try Harness.run(build, ["--content", content, "--output", out] + extra, env: env)
        #expect(r.status == 0, "\(r.stderr)")
        return r
    }

    /// A copy of the repository's content published into a temporary directory, removed after
    /// `body` (given the content and the published directory).
    func withPublishedCopy(_ label: String, _ body: (_ content: String, _ out: String) throws -> Void) throws {
        let dir = Harness.tempDir(label)
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        _ = try publish(content, dir + "/public")
        try body(content, dir + "/public")
    }

    @Test("a .br variant where smaller than the gzip one, described by brSize; the manifest has one too")
    func variantsWhereSmaller() throws {
        let dir = Harness.tempDir("br")
        defer { Harness.cleanup(dir) }
        let out = dir + "/public"
        _ = try publish(Harness.repoRoot + "/content", out)
        let m = try Harness.verifyPublished(out)  // every .br decodes to its object and beats gzip
        let withBrotli = m.entries.filter { $0.brSize != nil }
        #expect(withBrotli.count * 2 > m.entries.count, "\(withBrotli.count) of \(m.entries.count)")
        let gzipTotal = m.entries.reduce(0) { $0 + ($1.gzipSize ?? $1.size) }
        let wireTotal = m.entries.reduce(0) { $0 + $1.wireSize }
        #expect(wireTotal * 100 < gzipTotal * 95, "brotli saves at least 5%: \(wireTotal) vs \(gzipTotal)")
        // No .br file without its brSize: the manifest describes every variant on disk.
        let named = Set(withBrotli.compactMap(\.brotliObjectPath))
        for file in try FileIO.list(out + "/objects") where file.hasSuffix(".br") {
            #expect(named.contains("objects/" + file), "\(file) is not in the manifest")
        }
        let manifest = try FileIO.read(out + "/manifest.plist")
        let br = try FileIO.read(out + "/manifest.plist.br")
        #expect(try Brotli.decompress(br, maxSize: manifest.count) == manifest)
        #expect(br.count < (try FileIO.read(out + "/manifest.plist.gz")).count)
        // The JSON mirror carries brSize as a number.
        let json = try JSONPlist.decode(try FileIO.read(out + "/manifest.json"))
        let first = try #require(json["entries"]?.arrayValue?.first { $0["brSize"] != nil })
        #expect(first["brSize"]?.intValue != nil)
    }

    @Test("--no-brotli writes none; the default keeps the objects so; --brotli-quality adds them to every object in one new version")
    func noBrotli() throws {
        let dir = Harness.tempDir("nobr")
        defer { Harness.cleanup(dir) }
        let out = dir + "/public"
        let content = Harness.repoRoot + "/content"
        _ = try publish(content, out, ["--no-brotli"])
        let plain = try Harness.verifyPublished(out)
        #expect(plain.entries.allSatisfy { $0.brSize == nil })
        #expect(try FileIO.list(out + "/objects").allSatisfy { !$0.hasSuffix(".br") })
        #expect(!FileIO.exists(out + "/manifest.plist.br"))
        #expect(try publish(content, out, ["--no-brotli"]).stdout.contains("up to date at version 1"))
        // The default compresses new objects alone: those published keep their variants.
        let kept = try publish(content, out)
        #expect(kept.stdout.contains("up to date at version 1"), "\(kept.stdout)")
        #expect(try Harness.verifyPublished(out).entries.allSatisfy { $0.brSize == nil })
        let r = try publish(content, out, ["--brotli-quality", "11"])
        #expect(r.stdout.contains("published version 2 (was 1): 0 added, 0 changed, 0 removed"), "\(r.stdout)")
        let m = try Harness.verifyPublished(out)
        #expect(m.entries.filter { $0.brSize != nil }.count * 2 > m.entries.count)
        #expect(FileIO.exists(out + "/manifest.plist.br"))
        #expect(try publish(content, out, ["--brotli-quality", "11"]).stdout.contains("up to date at version 2"))
        let bad = try Harness.run(build, ["--content", content, "--output", dir + "/x", "--brotli-quality", "12"], env: env)
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--brotli-quality must be 1 to 11, got 12"), "\(bad.stderr)")
    }

    @Test("the default spends quality 11 on a build's first 384 KiB of new objects, in order; then 5 from 64 KiB, none below")
    func budget() {
        let kib = 1 << 10
        let sizes: [Int?] = [3 << 20, nil, 256 * kib, 100 * kib, 100 * kib, 1000, 70 * kib, 63 * kib, 2 << 20]
        // Past 1 MiB an object gets at most 5 whatever the setting, and spends no budget; the
        // object that crosses the budget still gets 11.
        #expect(BrotliSetting.default.qualities(for: sizes) == [5, nil, 11, 11, 11, nil, 5, nil, 5])
        // An explicit quality has no budget.
        #expect(BrotliSetting(quality: 11).qualities(for: sizes) == [5, nil, 11, 11, 11, 11, 11, 11, 5])
        #expect(BrotliSetting(quality: 3).qualities(for: sizes) == [3, nil, 3, 3, 3, 3, 3, 3, 3])
    }

    @Test("a bulk build past the budget publishes small objects with gzip alone, and a rebuild keeps it so")
    func bulkBuild() throws {
        let dir = Harness.tempDir("br-bulk")
        defer { Harness.cleanup(dir) }
        let content = try Self.notes(in: dir), out = dir + "/public"
        _ = try publish(content, out)
        let notes = try Harness.verifyPublished(out).entries.filter { $0.path.hasPrefix("notes/") }
        #expect(notes.count == 300)
        #expect(notes.allSatisfy { $0.gzipSize != nil })
        let withBrotli = notes.filter { $0.brSize != nil }.count
        #expect(withBrotli > 150 && withBrotli < 250, "\(withBrotli) of 300 notes have a brotli variant")
        // An edit compresses the changed note at quality 11; the others keep what they have.
        try FileIO.writeAtomically(Self.words(seed: 1000, bytes: 2048), to: content + "/notes/n299.txt", sync: false)
        _ = try publish(content, out)
        let after = try Harness.verifyPublished(out).entries.filter { $0.path.hasPrefix("notes/") }
        #expect(try #require(after.first { $0.path == "notes/n299.txt" }).brSize != nil)
        let before = Dictionary(uniqueKeysWithValues: notes.map { ($0.path, $0.brSize) })
        let changed = after.filter { $0.path != "notes/n299.txt" && before[$0.path] != $0.brSize }.map(\.path)
        #expect(changed.isEmpty, "\(changed)")
    }

    @Test("past the budget, an object published with a .br keeps it: a new setting changes no entry")
    func keepsPublishedVariantsPastBudget() throws {
        let dir = Harness.tempDir("br-keep")
        defer { Harness.cleanup(dir) }
        let content = try Self.notes(in: dir), out = dir + "/public"
        // Every note gets a .br at quality 5; the default (a new build-cache key) compiles them all again.
        _ = try publish(content, out, ["--brotli-quality", "5"])
        let before = try Harness.verifyPublished(out).entries
        #expect(before.filter { $0.brSize != nil }.count > 250)
        let r = try publish(content, out)
        #expect(r.stdout.contains("up to date at version 1"), "\(r.stdout)")
        #expect(try Harness.verifyPublished(out).entries.map(\.brSize) == before.map(\.brSize))
    }

    /// `DIR/content` with 300 notes of about 2 KiB of varied words (600 KiB, past the 384 KiB
    /// budget), written an hour ago: a rebuild reuses them from the build cache (a file as new as
    /// the scan is compiled again).
    static func notes(in dir: String) throws -> String {
        let content = dir + "/content"
        try FileManager.default.createDirectory(atPath: content + "/notes", withIntermediateDirectories: true)
        let hourAgo = Date().addingTimeInterval(-3600)
        for i in 0..<300 {
            let path = content + "/notes/n\(i).txt"
            try FileIO.writeAtomically(words(seed: UInt64(i + 1), bytes: 2048), to: path, sync: false)
            try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: path)
        }
        return content
    }

    /// About `bytes` bytes of words drawn from a small vocabulary (text brotli compresses better than gzip).
    static func words(seed: UInt64, bytes: Int) -> [UInt8] {
        let vocabulary = ["summer", "winter", "shall", "compare", "thee", "lovely", "temperate", "rough", "winds", "shake",
                          "darling", "buds", "lease", "hath", "short", "date", "eye", "heaven", "shines", "gold"]
        var state = seed &* 6364136223846793005 &+ 1442695040888963407
        var text = ""
        while text.utf8.count < bytes {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            text += vocabulary[Int(state >> 33) % vocabulary.count] + (state & 7 == 0 ? ".\n" : " ")
        }
        return Array(text.utf8)
    }

    @Test("a .br already on disk is kept; a damaged one is compressed again and replaced")
    func keepsAndRepairs() throws {
        try withPublishedCopy("br-repair") { content, out in
            let m = try Harness.verifyPublished(out)
            let e = try #require(m.entry("sonnets/all.plist"))
            let brPath = out + "/" + (try #require(e.brotliObjectPath))
            let good = try FileIO.read(brPath)
            // Another quality stands in for another libbrotli: kept, and the manifest follows it.
            let other = try Brotli.compress(try FileIO.read(out + "/" + e.objectPath), quality: 10)
            #expect(other.count != good.count)
            try FileIO.writeAtomically(other, to: brPath)
            let cache = out + "/.folio-build-cache.plist"
            try FileManager.default.removeItem(atPath: cache)  // compile every source again
            _ = try publish(content, out)
            #expect(try Harness.verifyPublished(out).entry("sonnets/all.plist")?.brSize == other.count)
            #expect(try FileIO.read(brPath) == other)
            // A damaged one (cut short) is not trusted.
            try FileIO.writeAtomically(Array(other.dropLast(3)), to: brPath)
            try FileManager.default.removeItem(atPath: cache)
            _ = try publish(content, out)
            #expect(try Harness.verifyPublished(out).entry("sonnets/all.plist")?.brSize == good.count)
            #expect(try FileIO.read(brPath) == good)
        }
    }

    @Test("deltas get a .br variant that decodes to the delta")
    func deltaVariants() throws {
        try withPublishedCopy("br-delta") { content, out in
            var text = try String(contentsOfFile: content + "/sonnets/018.txt", encoding: .utf8)
            text = text.replacingOccurrences(of: "summer’s day", with: "winter’s night")
            try text.write(toFile: content + "/sonnets/018.txt", atomically: true, encoding: .utf8)
            _ = try publish(content, out)
            let files = try FileIO.list(out + "/deltas")
            let plain = files.filter { $0.hasSuffix(".plist") }
            #expect(plain.count == 1, "\(files)")
            for name in plain {
                let bytes = try FileIO.read(out + "/deltas/" + name)
                let br = try FileIO.read(out + "/deltas/" + name + ".br")
                #expect(try Brotli.decompress(br, maxSize: bytes.count) == bytes)
                #expect(br.count < (try FileIO.read(out + "/deltas/" + name + ".gz")).count)
            }
        }
    }
}
