import CFolioSystem
import FolioPublished
import FolioTestSupport
import Foundation
import Testing

@testable import FolioPlist
@testable import FolioSupport
@testable import FolioToolSupport

@Suite("gzip")
struct GzipTests {
    static let sonnet = Array(String(repeating: "Shall I compare thee to a summer's day? Thou art more lovely and more temperate. ", count: 200).utf8)

    /// Named inputs (so test-case names stay short even for a megabyte of zeros).
    enum Sample: String, CaseIterable, CustomTestStringConvertible {
        case empty, oneByte, text, incompressible, megabyteOfZeros

        var testDescription: String { rawValue }

        var bytes: [UInt8] {
            switch self {
            case .empty: return []
            case .oneByte: return [0x42]
            case .text: return GzipTests.sonnet
            case .incompressible:
                var rng = SplitMix64(seed: 0x6217)
                return rng.bytes(100_000)  // the output is larger than the input
            case .megabyteOfZeros: return [UInt8](repeating: 0, count: 1 << 20)  // 1000:1, inflated over many output chunks
            }
        }
    }

    @Test("round trip, gzip header and trailer", arguments: Sample.allCases)
    func roundTrip(sample: Sample) throws {
        let input = sample.bytes
        let gz = try Gzip.compress(input)
        #expect(Array(gz.prefix(3)) == [0x1F, 0x8B, 0x08], "gzip magic and deflate method")
        #expect(gz[3] == 0, "no name, comment or extra field")
        #expect(Array(gz[4..<8]) == [0, 0, 0, 0], "mtime 0, for reproducible builds")
        let isize = gz.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(isize == UInt32(truncatingIfNeeded: input.count), "ISIZE trailer")
        #expect(try Gzip.decompress(gz, maxSize: input.count) == input)
    }

    @Test("compression is deterministic and effective")
    func deterministic() throws {
        let a = try Gzip.compress(Self.sonnet)
        let b = try Gzip.compress(Self.sonnet)
        #expect(a == b)
        #expect(a.count < Self.sonnet.count / 10)
        let fast = try Gzip.compress(Self.sonnet, level: 1)
        #expect(try Gzip.decompress(fast, maxSize: Self.sonnet.count) == Self.sonnet)
        #expect(try Gzip.compress(Self.sonnet, level: 1) == fast)
    }

    @Test("a large input: one valid gzip member at levels 1, 6 and 9, deterministic, inflated by zlib and by gzip(1)")
    func largeInput() throws {
        var rng = SplitMix64(seed: 0x5EED)
        // 900 KB of text-like input with repeats far apart (beyond deflate's 32 KB window too).
        var input: [UInt8] = []
        let words = ["sonnet", "summer", "thee", "lovely", "temperate", "rough", "winds", "darling", "buds", "May"]
        while input.count < 900 * 1024 {
            input += Array((words[Int(rng.next() % 10)] + (rng.next() % 7 == 0 ? ".\n" : " ")).utf8)
        }
        var sizes: [Int32: Int] = [:]
        for level: Int32 in [1, 6, 9] {
            let gz = try Gzip.compress(input, level: level)
            #expect(try Gzip.compress(input, level: level) == gz)
            #expect(Array(gz.prefix(4)) == [0x1F, 0x8B, 8, 0], "gzip magic, deflate, no name or extra fields")
            #expect(Array(gz[4..<8]) == [0, 0, 0, 0], "mtime 0, for reproducible builds")
            #expect(try Gzip.decompress(gz, maxSize: input.count) == input)
            sizes[level] = gz.count
        }
        #expect(sizes[6]! < input.count / 3)
        #expect(sizes[9]! <= sizes[6]! && sizes[6]! < sizes[1]!, "\(sizes)")
        #expect(throws: GzipError.self) { try Gzip.compress(input, level: 0) }
        #expect(throws: GzipError.self) { try Gzip.compress(input, level: Gzip.maxLevel + 1) }
        // The system's gzip agrees (CRC and length trailer checked).
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("folio-gz-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("x.gz")
        try Data(try Gzip.compress(input, level: 6)).write(to: file)
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gunzip.arguments = ["-dc", file.path]
        let pipe = Pipe()
        gunzip.standardOutput = pipe
        try gunzip.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        gunzip.waitForExit()
        #expect(gunzip.terminationStatus == 0)
        #expect(Array(out) == input)
    }

    /// CRC-32 (IEEE), bit by bit: slow, and independent of zlib's.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A gzip member around a raw deflate stream of `input`.
    static func member(_ raw: [UInt8], of input: [UInt8]) -> [UInt8] {
        let crc = crc32(input), size = UInt32(truncatingIfNeeded: input.count)
        return [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3] + raw
            + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: crc >> $0) }
            + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: size >> $0) }
    }

    @Test("joining raw deflate streams: every way a stream can end (bit offsets, stored blocks) continues cleanly")
    func joiningStreams() throws {
        var rng = SplitMix64(seed: 0x401E)
        for round in 0..<120 {
            // Two to four pieces of text, random bytes (stored blocks) or runs, of any length.
            var pieces: [[UInt8]] = []
            for _ in 0..<rng.int(2...4) {
                let n = rng.int(0...6000)
                switch rng.int(0...2) {
                case 0: pieces.append(Array((0..<n).map { _ in rng.pick(Array("thee summer day ".utf8)) }))
                case 1: pieces.append(rng.bytes(n))
                default: pieces.append([UInt8](repeating: UInt8(rng.int(0...255)), count: n))
                }
            }
            let level = Int32(rng.pick([1, 6, 9, 12]))
            var joined: [UInt8] = []
            for (i, piece) in pieces.enumerated() {
                var raw = try Gzip.deflate(piece, 0..<piece.count, level: level)
                if i < pieces.count - 1 { try Gzip.unfinish(&raw) }
                joined += raw
            }
            let input = pieces.flatMap { $0 }
            #expect(try Gzip.decompress(Self.member(joined, of: input), maxSize: input.count) == input, "round \(round)")
        }
    }

    @Test("chunked compression at and around the chunk boundaries inflates to the input", arguments: [1, 6, 9])
    func chunkBoundaries(level: Int32) throws {
        var rng = SplitMix64(seed: 0xC4A2 + UInt64(level))
        let size = Gzip.chunkSize
        for count in [size, size + 1, 2 * size - 1, 2 * size, 2 * size + 1, 3 * size + 12_345] {
            let text = Array((0..<count).map { _ in rng.pick(Array("Shall I compare thee to a summer's day?\n".utf8)) })
            var mixed = rng.bytes(count)
            mixed.replaceSubrange(0..<(count / 2), with: text[0..<(count / 2)])  // text, then random bytes
            for input in [text, mixed] {
                let gz = try Gzip.compress(input, level: level)
                #expect(try Gzip.decompress(gz, maxSize: input.count) == input, "\(count) bytes")
                #expect(try Gzip.compress(input, level: level) == gz, "deterministic")
            }
            // Chunks start without the previous history: a little larger than one stream, no more.
            let whole = try Gzip.deflate(text, 0..<text.count, level: level).count + 18
            #expect(Double(try Gzip.compress(text, level: level).count) < Double(whole) * 1.02)
        }
    }

    @Test("a chunk stream makes exactly the bytes of compressing the whole, whatever was handed over before finish")
    func chunkStreamMatchesWhole() throws {
        var rng = SplitMix64(seed: 0x57E4)
        let size = Gzip.chunkSize
        for count in [1, size, size + 1, 2 * size + 7, 3 * size + 12_345] {
            let input = Array((0..<count).map { _ in rng.pick(Array("thee summer lovely day \n".utf8)) })
            let whole = try Gzip.compress(input, level: 6)
            // Hand over none, some or all of the full chunks that are not the last.
            let handable = (count - 1) / size
            for handed in Set([0, handable / 2, handable]) {
                let stream = GzipChunkStream(level: 6)
                for k in 0..<handed { stream.submit(Array(input[(k * size)..<((k + 1) * size)])) }
                #expect(stream.submittedChunks == handed)
                #expect(try stream.finish(input) == whole, "\(count) bytes, \(handed) chunks handed over")
            }
        }
        // Cancelled chunks are dropped; a cancelled stream is not finished.
        let stream = GzipChunkStream(level: 6)
        stream.submit([UInt8](repeating: 1, count: size))
        stream.cancel()
    }

    @Test("the encoder hands over each chunk of its output as soon as it is final, in order")
    func encoderChunks() throws {
        var rng = SplitMix64(seed: 0xE7C)
        var dict: [String: PlistValue] = [:]
        for i in 0..<3000 {
            dict["key \(i)"] = .array([.string("Значение \(i) " + String(repeating: "ж", count: rng.int(0...200))), .int(Int64(i))])
        }
        let value = PlistValue.dict(["strings": .dict(dict)])
        let chunkSize = 64 * 1024
        var chunks: [[UInt8]] = []
        let bytes = BinaryPlist.encode(value, chunkSize: chunkSize) { chunks.append(Array($0)) }
        #expect(bytes == BinaryPlist.encode(value), "the same encoding as without chunks")
        #expect(chunks.count >= 3, "\(bytes.count) bytes")
        #expect(chunks.allSatisfy { $0.count == chunkSize })
        #expect(Array(bytes.prefix(chunks.count * chunkSize)) == chunks.flatMap { $0 })
        #expect(bytes.count > chunks.count * chunkSize, "the trailer comes after the last chunk handed over")
        // A small value hands nothing over.
        var none = 0
        _ = BinaryPlist.encode(.string("small"), chunkSize: chunkSize) { _ in none += 1 }
        #expect(none == 0)
    }

    @Test("one chunk deflated in place, with pooled compressors, gives the general path's bytes at every level")
    func singleChunkMatchesGeneralPath() throws {
        var rng = SplitMix64(seed: 0x51C1E)
        let inputs: [[UInt8]] = [[], [0x42], Array(Self.sonnet.prefix(2300)), rng.bytes(3000), Self.sonnet, Array(repeating: 7, count: Gzip.chunkSize)]
        // Interleaved levels, twice: a compressor taken from the pool again must give the same bytes.
        for _ in 0..<2 {
            for level in Int32(1)...Gzip.maxLevel {
                for input in inputs {
                    let general = Gzip.member(try Gzip.deflate(input, 0..<input.count, level: level), of: input, level: level)
                    #expect(try Gzip.single(input, level: level) == general, "level \(level), \(input.count) bytes")
                    #expect(try Gzip.compress(input, level: level) == general, "level \(level), \(input.count) bytes")
                    #expect(try Gzip.decompress(general, maxSize: input.count) == input)
                }
            }
        }
    }

    @Test("more compressors in use at once than the pool keeps: the extra ones are freed when given back")
    func poolIsBounded() throws {
        // Nested, each holds its compressor while the next is taken: kept + 3 in use at once,
        // at level 4 (each compresses, so each is a working one).
        func hold(_ n: Int) throws(GzipError) {
            guard n > 0 else { return }
            try DeflateCompressors.with(level: 4) { handle throws(GzipError) in
                #expect(libdeflate_deflate_compress(handle.pointer, Self.sonnet, Self.sonnet.count, handle.scratch(32 << 10).baseAddress, 32 << 10) > 0)
                try hold(n - 1)
            }
        }
        try hold(DeflateCompressors.kept + 3)
        #expect(DeflateCompressors.idleCount(level: 4) <= DeflateCompressors.kept)
    }

    @Test("the published level: 1 for small objects, 9 up to 128 KB, 6 past it")
    func publishedLevels() {
        #expect(PublishedCompression.gzipLevel(0) == 1)
        #expect(PublishedCompression.gzipLevel(PublishedCompression.smallObject) == 1)
        #expect(PublishedCompression.gzipLevel(PublishedCompression.smallObject + 1) == 9)
        #expect(PublishedCompression.gzipLevel(128 * 1024) == 9)
        #expect(PublishedCompression.gzipLevel(128 * 1024 + 1) == 6)
    }

    @Test("maxSize: exactly enough succeeds, one byte less throws")
    func maxSize() throws {
        let gz = try Gzip.compress(Self.sonnet)
        #expect(try Gzip.decompress(gz, maxSize: Self.sonnet.count) == Self.sonnet)
        #expect(try Gzip.decompress(gz, maxSize: Self.sonnet.count * 10) == Self.sonnet)
        #expect(throws: GzipError.self) { try Gzip.decompress(gz, maxSize: Self.sonnet.count - 1) }
        #expect(throws: GzipError.self) { try Gzip.decompress(gz, maxSize: 0) }
        // A gzip bomb is stopped at the limit.
        let bomb = try Gzip.compress([UInt8](repeating: 0, count: 4 << 20))
        #expect(bomb.count < 8192)
        #expect(throws: GzipError.self) { try Gzip.decompress(bomb, maxSize: 1 << 20) }
        // Empty content fits in zero bytes.
        #expect(try Gzip.decompress(try Gzip.compress([]), maxSize: 0) == [])
    }

    @Test("maxSize Int.max (no limit) does not trap")
    func unlimitedMaxSize() async {
        await #expect(processExitsWith: .success) {
            let gz = try Gzip.compress(Array("hello, gzip".utf8))
            let out = try Gzip.decompress(gz, maxSize: .max)
            if out != Array("hello, gzip".utf8) { exit(3) }
        }
    }

    @Test("every truncation throws")
    func truncated() throws {
        let gz = try Gzip.compress(Array("a short stream that still has a deflate body".utf8))
        for length in 0..<gz.count {
            #expect(throws: GzipError.self, "truncated to \(length) of \(gz.count)") { try Gzip.decompress(Array(gz[0..<length]), maxSize: 1 << 20) }
        }
        let big = try Gzip.compress(Self.sonnet)
        for length in stride(from: 0, to: big.count, by: 7) {
            #expect(throws: GzipError.self) { try Gzip.decompress(Array(big[0..<length]), maxSize: 1 << 20) }
        }
    }

    @Test("corrupt streams throw: bad magic, damaged body, wrong CRC or length, trailing bytes")
    func corrupt() throws {
        let gz = try Gzip.compress(Self.sonnet)
        var magic = gz
        magic[0] = 0x1E
        var method = gz
        method[2] = 0x07
        var crc = gz
        crc[gz.count - 8] ^= 0xFF
        var size = gz
        size[gz.count - 1] ^= 0x01
        let trailing = gz + [0x00]
        let twoMembers = gz + gz
        for (name, bad) in [("magic", magic), ("method", method), ("crc", crc), ("isize", size), ("trailing byte", trailing), ("two members", twoMembers)] {
            #expect(throws: GzipError.self, "\(name)") { try Gzip.decompress(bad, maxSize: 1 << 20) }
        }
        // Damage anywhere in the deflate body is caught (by the stream structure or the CRC).
        var rng = SplitMix64(seed: 0xBAD)
        for _ in 0..<200 {
            var bad = gz
            bad[rng.int(10...(gz.count - 9))] ^= UInt8(1) << UInt8(rng.int(0...7))
            #expect(throws: GzipError.self) { try Gzip.decompress(bad, maxSize: 1 << 20) }
        }
        #expect(throws: GzipError.self) { try Gzip.decompress(Array("plain text, not gzip".utf8), maxSize: 1 << 20) }
    }

    @Test("errors describe themselves")
    func errorMessages() throws {
        let gz = try Gzip.compress(Self.sonnet)
        do {
            _ = try Gzip.decompress(gz, maxSize: 10)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("10"), "\(error)")
        }
    }
}

@Suite("ContentHash")
struct ContentHashTests {
    @Test("SHA-256 test vectors in lowercase hex")
    func vectors() {
        #expect(ContentHash.sha256Hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(ContentHash.sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(ContentHash.sha256Hex(Data("abc".utf8)) == ContentHash.sha256Hex(Array("abc".utf8)))
    }

    @Test("recognising a hex SHA-256")
    func recognise() {
        let good = ContentHash.sha256Hex(Array("x".utf8))
        #expect(ContentHash.isSHA256Hex(good))
        #expect(!ContentHash.isSHA256Hex(good.uppercased()))
        #expect(!ContentHash.isSHA256Hex(good.dropLast()))
        #expect(!ContentHash.isSHA256Hex(good + "0"))
        #expect(!ContentHash.isSHA256Hex(String(repeating: "g", count: 64)))
        #expect(!ContentHash.isSHA256Hex(""))
    }
}
