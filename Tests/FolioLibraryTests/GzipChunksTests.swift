import FolioTestSupport
import Foundation
import Testing

@testable import FolioSupport
@testable import FolioToolSupport

/// Chunk reuse: a compression made from the last one's chunks gives the same bytes as a whole
/// compression, whatever the edit; chunks are recovered only from members that splice safely.
@Suite("gzip chunks")
struct GzipChunksTests {
    /// Text like a manifest's JSON mirror: lines that differ, compressible.
    static func text(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(count + 100)
        while out.count < count {
            out += Array("{\"path\": \"data/item-\(rng.int(0...99_999)).plist\", \"size\": \(rng.int(1...9999)), \"sha256\": \"".utf8)
            out += (0..<16).map { _ in Array("0123456789abcdef".utf8)[rng.int(0...15)] }
            out += Array("\"},\n".utf8)
        }
        return Array(out.prefix(count))
    }

    @Test("with nothing to reuse: the bytes of a whole compression", arguments: [0, 1, Gzip.chunkSize - 1, Gzip.chunkSize, Gzip.chunkSize + 1, 900_000])
    func sameAsWhole(size: Int) throws {
        let input = Self.text(size, seed: UInt64(size))
        for level: Int32 in [1, 6, 9] {
            let chunks = try Gzip.compress(input, level: level, reusing: nil)
            #expect(chunks.member == (try Gzip.compress(input, level: level)))
            #expect(chunks.reusedChunks == 0)
            #expect(try Gzip.decompress(chunks.member, maxSize: size) == input)
        }
    }

    /// One random edit: bytes changed in place, inserted, removed, appended or cut off.
    static func edit(_ input: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var out = input
        let at = input.isEmpty ? 0 : rng.int(0...(input.count - 1))
        switch rng.int(0...4) {
        case 0: for i in at..<min(at + rng.int(1...40), out.count) { out[i] = UInt8(truncatingIfNeeded: rng.next()) }
        case 1: out.insert(contentsOf: Array("inserted \(rng.next())".utf8), at: at)
        case 2: out.removeSubrange(at..<min(at + rng.int(1...300), out.count))
        case 3: out += Array("appended \(rng.next())\n".utf8)
        default: out.removeLast(min(out.count, rng.int(1...5000)))
        }
        return out
    }

    @Test("a history of edits: each made from the last gives a whole compression's bytes", arguments: [1, 2, 3] as [UInt64])
    func historyOfEdits(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var input = Self.text(1_100_000, seed: seed)
        var last = try Gzip.compress(input, level: 6, reusing: nil)
        var reused = 0
        for _ in 0..<25 {
            input = Self.edit(input, &rng)
            let next = try Gzip.compress(input, level: 6, reusing: last)
            #expect(next.member == (try Gzip.compress(input, level: 6)))
            #expect(try Gzip.decompress(next.member, maxSize: input.count) == input)
            reused += next.reusedChunks
            last = next
        }
        #expect(reused > 0, "in-place edits and appends leave chunks unchanged")
    }

    @Test("an edit in place reuses every chunk it does not touch; another level reuses none")
    func inPlaceEdit() throws {
        var input = Self.text(5 * Gzip.chunkSize + 1000, seed: 9)
        let first = try Gzip.compress(input, level: 6, reusing: nil)
        input[3 * Gzip.chunkSize + 17] ^= 0x20
        let next = try Gzip.compress(input, level: 6, reusing: first)
        #expect(next.reusedChunks == 5)
        #expect(next.member == (try Gzip.compress(input, level: 6)))
        #expect(try Gzip.compress(input, level: 9, reusing: first).reusedChunks == 0)
    }

    @Test("chunks recovered from a member Gzip.compress wrote are reused like those it made")
    func recovered() throws {
        let input = Self.text(1_000_000, seed: 4)
        let member = try Gzip.compress(input, level: 6)
        let found = try #require(GzipChunks(recovering: member, of: input, level: 6))
        #expect(found.parts == (try Gzip.compress(input, level: 6, reusing: nil)).parts)
        var edited = input
        edited[10] = UInt8(ascii: "#")
        let next = try Gzip.compress(edited, level: 6, reusing: found)
        #expect(next.reusedChunks == found.parts.count - 1)
        #expect(next.member == (try Gzip.compress(edited, level: 6)))
        // Another input or another level is not what the member holds.
        #expect(GzipChunks(recovering: member, of: edited, level: 6) == nil)
        #expect(GzipChunks(recovering: member, of: input, level: 9) == nil)
    }

    @Test("no chunks are recovered from a damaged or cut member")
    func damaged() throws {
        let input = Self.text(700_000, seed: 5)
        let member = try Gzip.compress(input, level: 6)
        var flipped = member
        flipped[member.count / 2] ^= 0x10
        #expect(GzipChunks(recovering: flipped, of: input, level: 6) == nil)
        #expect(GzipChunks(recovering: Array(member.dropLast(9)) + member.suffix(8), of: input, level: 6) == nil)
        #expect(GzipChunks(recovering: [], of: input, level: 6) == nil)
    }

    @Test("GNU gzip's one-stream member is not taken for chunks: its blocks reach back across them")
    func gnuGzip() throws {
        let input = Self.text(900_000, seed: 6)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-chunks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("input").path
        try Data(input).write(to: URL(fileURLWithPath: file))
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-n", "-6", "-k", file]
        try gzip.run()
        gzip.waitForExit()
        let member = Array(try Data(contentsOf: URL(fileURLWithPath: file + ".gz")))
        #expect(try Gzip.decompress(member, maxSize: input.count) == input, "a valid member of the same bytes")
        #expect(Array(member.prefix(10)) == Gzip.header(level: 6), "with the header Gzip.compress writes at level 6")
        #expect(GzipChunks(recovering: member, of: input, level: 6) == nil)
    }
}
