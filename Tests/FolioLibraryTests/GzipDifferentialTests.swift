import CFolioSystem
import CZlib
import FolioTestSupport
import Testing

@testable import FolioSupport
@testable import FolioToolSupport

/// The two gzip implementations against each other: the portable zlib one (what an app links,
/// `Gzip.decompress`) and the programs' libdeflate one (`Gzip.compress`, chunked on all cores).
/// Each inflater reads what each deflater writes.
@Suite("gzip: zlib and libdeflate")
struct GzipDifferentialTests {
    @Test("each inflates what the other deflates, chunked streams included", arguments: [1, 6, 9] as [Int32])
    func eachReadsTheOther(level: Int32) throws {
        var rng = SplitMix64(seed: 0xD1FF + UInt64(level))
        for count in [0, 1, 4096, Gzip.chunkSize - 1, Gzip.chunkSize + 1, 3 * Gzip.chunkSize + 17] {
            var input = Array((0..<count).map { _ in rng.pick(Array("Shall I compare thee to a summer's day?\n".utf8)) })
            input.replaceSubrange(0..<(count / 3), with: rng.bytes(count / 3))  // random bytes, then text
            let ours = try Gzip.compress(input, level: level)
            #expect(try Gzip.decompress(ours, maxSize: input.count) == input, "libdeflate -> zlib, \(count) bytes")
            #expect(Self.libdeflateInflate(ours, size: input.count) == input, "libdeflate -> libdeflate, \(count) bytes")
            let theirs = try #require(Self.zlibDeflate(input, level: level))
            #expect(try Gzip.decompress(theirs, maxSize: input.count) == input, "zlib -> zlib, \(count) bytes")
            #expect(Self.libdeflateInflate(theirs, size: input.count) == input, "zlib -> libdeflate, \(count) bytes")
        }
    }

    /// One gzip member of `input` by zlib's own deflate.
    static func zlibDeflate(_ input: [UInt8], level: Int32) -> [UInt8]? {
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        var input = input
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        let rc = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                stream.next_in = inBuf.baseAddress
                stream.avail_in = UInt32(inBuf.count)
                stream.next_out = outBuf.baseAddress
                stream.avail_out = UInt32(outBuf.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard rc == Z_STREAM_END else { return nil }
        return Array(output[0..<Int(stream.total_out)])
    }

    /// `gz` inflated by libdeflate's gzip decompressor, which must produce exactly `size` bytes;
    /// nil when it refuses the stream.
    static func libdeflateInflate(_ gz: [UInt8], size: Int) -> [UInt8]? {
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var output = [UInt8](repeating: 0, count: max(size, 1))
        var actual = 0
        let rc = gz.withUnsafeBytes { inBuf in
            output.withUnsafeMutableBytes { outBuf in
                libdeflate_gzip_decompress(decompressor, inBuf.baseAddress, inBuf.count, outBuf.baseAddress, outBuf.count, &actual)
            }
        }
        guard rc == LIBDEFLATE_SUCCESS else { return nil }
        return Array(output[0..<actual])
    }
}
