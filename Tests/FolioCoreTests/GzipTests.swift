import Foundation
import Testing

@testable import FolioCore

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

    @Test("chunked compression: one valid gzip member, deterministic, about as small, inflated by zlib and by gzip(1)")
    func chunked() throws {
        var rng = SplitMix64(seed: 0x5EED)
        // Text-like input of 3.5 chunks, with repeats that cross chunk boundaries.
        var input: [UInt8] = []
        let words = ["sonnet", "summer", "thee", "lovely", "temperate", "rough", "winds", "darling", "buds", "May"]
        while input.count < Gzip.chunkSize * 7 / 2 {
            input += Array((words[Int(rng.next() % 10)] + (rng.next() % 7 == 0 ? ".\n" : " ")).utf8)
        }
        let chunked = try Gzip.compressInChunks(input, level: 6)
        #expect(try Gzip.compressInChunks(input, level: 6) == chunked)
        #expect(try Gzip.decompress(chunked, maxSize: input.count) == input)
        let whole = try Gzip.compress(input, level: 6)
        #expect(Double(chunked.count) < Double(whole.count) * 1.02, "\(chunked.count) vs \(whole.count)")
        // The system's gzip agrees (CRC and length trailer checked).
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("folio-gz-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("x.gz")
        try Data(chunked).write(to: file)
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gunzip.arguments = ["-dc", file.path]
        let pipe = Pipe()
        gunzip.standardOutput = pipe
        try gunzip.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        gunzip.waitUntilExit()
        #expect(gunzip.terminationStatus == 0)
        #expect(Array(out) == input)
        // Small inputs are one ordinary stream.
        #expect(try Gzip.compressInChunks(Self.sonnet) == (try Gzip.compress(Self.sonnet)))
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
