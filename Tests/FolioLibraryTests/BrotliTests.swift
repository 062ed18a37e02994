import CFolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioSupport
@testable import FolioToolSupport

@Suite("brotli")
struct BrotliTests {
    static let sonnet = GzipTests.sonnet

    @Test("round trip at qualities 1, 5 and 11, deterministic", arguments: GzipTests.Sample.allCases)
    func roundTrip(_ sample: GzipTests.Sample) throws {
        let input = sample.bytes
        for quality: Int32 in [1, 5, 11] where quality != 11 || input.count < 200_000 {
            let br = try Brotli.compress(input, quality: quality)
            #expect(try Brotli.compress(input, quality: quality) == br, "deterministic at \(quality)")
            #expect(try Brotli.decompress(br, maxSize: input.count) == input)
        }
    }

    /// libbrotlienc's one-shot encoder with its default modeling: what `compress` wrote for
    /// every input before small inputs went without literal context modeling.
    static func oneShot(_ input: [UInt8], quality: Int32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: BrotliEncoderMaxCompressedSize(input.count))
        var size = out.count
        let ok = BrotliEncoderCompress(quality, Brotli.window(for: input.count), BROTLI_MODE_GENERIC, input.count, input, &size, &out)
        return ok == BROTLI_TRUE ? Array(out[..<size]) : []
    }

    @Test("quality 11 models literal contexts from 16 KiB on, as the one-shot encoder does; below, it does not, and each decodes")
    func literalContexts() throws {
        // Text of sonnets, cut at sizes around the threshold (16 KiB) and well below it.
        let text = Array(repeating: Self.sonnet, count: 1 + (40 << 10) / Self.sonnet.count).flatMap { $0 }
        let at = Brotli.plainLiteralsBelow
        for size in [at, at + 1, 40 << 10] {
            let input = Array(text[..<size])
            #expect(try Brotli.compress(input, quality: 11) == Self.oneShot(input, quality: 11), "\(size) bytes")
            #expect(try Brotli.compress(input, quality: 5) == Self.oneShot(input, quality: 5), "\(size) bytes at 5")
        }
        // An empty input is the one-shot encoder's too.
        #expect(try Brotli.compress([], quality: 11) == Self.oneShot([], quality: 11))
        var differed = 0
        for size in [1, 600, 2_000, at - 1] {
            let input = Array(text[..<size])
            let br = try Brotli.compress(input, quality: 11)
            #expect(try Brotli.decompress(br, maxSize: size) == input, "\(size) bytes")
            #expect(try Brotli.compress(input, quality: 5) == Self.oneShot(input, quality: 5), "\(size) bytes at 5")
            if br != Self.oneShot(input, quality: 11) { differed += 1 }
        }
        // Without literal context modeling the stream says so in its block headers: the sizes
        // of text worth modeling come out differently.
        #expect(differed >= 2)
    }

    @Test("on text it beats gzip at its best level")
    func smallerThanGzip() throws {
        let br = try Brotli.compress(Self.sonnet, quality: 11)
        let gz = try Gzip.compress(Self.sonnet, level: 12)
        #expect(br.count < gz.count, "brotli \(br.count) vs gzip \(gz.count)")
    }

    @Test("the window is the smallest that holds the input, 10 to 24 bits")
    func window() {
        #expect(Brotli.window(for: 0) == 10)
        #expect(Brotli.window(for: 1008) == 10)
        #expect(Brotli.window(for: 1009) == 11)
        #expect(Brotli.window(for: 3000) == 12)
        #expect(Brotli.window(for: 1 << 20) == 21)
        #expect(Brotli.window(for: 1 << 30) == 24)
    }

    @Test("maxSize: exactly enough succeeds, one byte less throws; no limit does not trap")
    func maxSize() throws {
        let br = try Brotli.compress(Self.sonnet, quality: 5)
        #expect(try Brotli.decompress(br, maxSize: Self.sonnet.count) == Self.sonnet)
        #expect(throws: BrotliError.self) { try Brotli.decompress(br, maxSize: Self.sonnet.count - 1) }
        #expect(try Brotli.decompress(br, maxSize: Int.max) == Self.sonnet)
        // A bomb: 64 MiB of zeros in a few bytes stops at the limit.
        let bomb = try Brotli.compress([UInt8](repeating: 0, count: 64 << 20), quality: 1)
        #expect(bomb.count < 64 * 1024)
        #expect(throws: BrotliError.self) { try Brotli.decompress(bomb, maxSize: 1 << 20) }
    }

    @Test("truncated, trailing, garbage and out-of-range quality throw")
    func malformed() throws {
        let br = try Brotli.compress(Self.sonnet, quality: 11)
        for length in 0..<br.count {
            #expect(throws: BrotliError.self, "truncated to \(length) of \(br.count)") { try Brotli.decompress(Array(br[0..<length]), maxSize: 1 << 20) }
        }
        #expect(throws: BrotliError.self) { try Brotli.decompress(br + [0], maxSize: 1 << 20) }
        #expect(throws: BrotliError.self) { try Brotli.decompress(br + br, maxSize: 1 << 20) }
        #expect(throws: BrotliError.self) { try Brotli.decompress(Array("\u{FF}\u{FF}plain text, not brotli".utf8), maxSize: 1 << 20) }
        #expect(throws: BrotliError.self) { try Brotli.compress(Self.sonnet, quality: 12) }
        #expect(throws: BrotliError.self) { try Brotli.compress(Self.sonnet, quality: -1) }
    }

    @Test("Google's brotli(1) decodes ours, and we decode its output at its defaults (quality 11, window 22)")
    func brotliTool() throws {
        var rng = SplitMix64(seed: 0xB207)
        var input: [UInt8] = []
        let words = ["sonnet", "summer", "thee", "lovely", "temperate", "rough", "winds", "darling", "buds", "May"]
        while input.count < 300 * 1024 { input += Array((words[Int(rng.next() % 10)] + " ").utf8) }
        let dir = Harness.tempDir("brotli-tool")
        defer { Harness.cleanup(dir) }
        try FileIO.writeAtomically(try Brotli.compress(input, quality: 9), to: dir + "/ours.br")
        let decoded = try Harness.run("/usr/bin/brotli", ["-d", "-c", dir + "/ours.br"])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdoutBytes == input)
        try FileIO.writeAtomically(input, to: dir + "/input")
        let encoded = try Harness.run("/usr/bin/brotli", ["-c", dir + "/input"])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        #expect(try Brotli.decompress(encoded.stdoutBytes, maxSize: input.count) == input)
    }
}
