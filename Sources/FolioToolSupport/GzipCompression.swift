import CFolioSystem
import CZlib
import FolioSupport

/// gzip (RFC 1952) compression by libdeflate, inflated by zlib (``Gzip/decompress(_:maxSize:)``).
///
/// libdeflate compresses whole buffers, which is what an object is, 2 to 2.5 times faster than zlib
/// at the same level and a few percent smaller (measured on a 850 KB catalog: level 6 in 10 ms for
/// 193,516 bytes against zlib's 25 ms for 203,179). Its output is deterministic for a given level and
/// library version; the header carries no name and mtime 0, so builds are reproducible.
extension Gzip {
    /// The highest level; 10 to 12 are libdeflate's slow near-optimal parsing.
    package static let maxLevel: Int32 = 12

    /// Inputs larger than this are compressed in chunks of this size on all cores.
    package static let chunkSize = 256 * 1024

    /// Compresses `input` at `level` (1 = fastest, 6 = default, 9 = zlib's best, up to 12) into one
    /// gzip member.
    ///
    /// An input larger than ``chunkSize`` is cut into chunks of that size, deflated on all cores and
    /// joined into one deflate stream, as pigz does: each chunk but the last has the final-block
    /// bit of its last block cleared and ends with an empty stored block, so the next chunk starts
    /// on a byte boundary. libdeflate has no preset dictionary, so each chunk starts without the
    /// previous 32 KB as history (0.7% larger on the 850 KB benchmark catalog). The chunking depends
    /// only on the input's size, so the output is the same on every machine.
    package static func compress(_ input: [UInt8], level: Int32 = 9) throws(GzipError) -> [UInt8] {
        guard (1...maxLevel).contains(level) else { throw GzipError(description: "gzip: level \(level) is not in 1...\(maxLevel)") }
        if input.count <= chunkSize { return try single(input, level: level) }
        let ranges = stride(from: 0, to: max(input.count, 1), by: chunkSize).map { $0..<min($0 + chunkSize, input.count) }
        let last = ranges.count - 1
        let parts = Parallel.map(Array(ranges.enumerated())) { i, range in
            Result { () throws(GzipError) in try deflateChunk(input, range, level: level, isLast: i == last) }
        }
        var deflated: [UInt8] = []
        for part in parts { deflated += try part.get() }
        return member(deflated, of: input, level: level)
    }

    /// A member of one chunk (what nearly every object is): deflated into the compressor's
    /// scratch buffer, then header, data and trailer copied once into an array of their size
    /// (the same bytes as ``member(_:of:level:)`` of ``deflate(_:_:level:)``; an array of the
    /// bound's size, kept for every object until the build ends, was 14 MB more at its peak).
    static func single(_ input: [UInt8], level: Int32) throws(GzipError) -> [UInt8] {
        try DeflateCompressors.with(level: level) { handle throws(GzipError) in
            let bound = libdeflate_deflate_compress_bound(handle.pointer, input.count)
            let scratch = handle.scratch(bound)
            let size = input.withUnsafeBufferPointer { inBuf in
                // An empty input may have no address; libdeflate reads nothing then.
                libdeflate_deflate_compress(handle.pointer, inBuf.baseAddress, inBuf.count, scratch.baseAddress, bound)
            }
            // The buffer is libdeflate's own bound, so 0 (no room) cannot happen; checked all the same.
            guard size > 0 else { throw GzipError(description: "gzip: compressed output exceeds its bound") }
            let (header, trailer) = (header(level: level), trailer(of: input))
            return [UInt8](unsafeUninitializedCapacity: size + 18) { out, count in
                for (i, byte) in header.enumerated() { out[i] = byte }
                (out.baseAddress! + 10).update(from: scratch.baseAddress!, count: size)
                for (i, byte) in trailer.enumerated() { out[10 + size + i] = byte }
                count = size + 18
            }
        }
    }

    /// One chunk of a chunked stream: deflated, and made continuable unless it is the last.
    static func deflateChunk(_ input: [UInt8], _ range: Range<Int>, level: Int32, isLast: Bool) throws(GzipError) -> [UInt8] {
        var raw = try deflate(input, range, level: level)
        if !isLast { try unfinish(&raw) }
        return raw
    }

    /// The gzip header and trailer around the joined deflate data of `input`.
    static func member(_ deflated: [UInt8], of input: [UInt8], level: Int32) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, level >= 8 ? 2 : (level < 2 ? 4 : 0), 3]
        out.reserveCapacity(deflated.count + 18)
        out += deflated
        let crc = input.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
        let size = UInt32(truncatingIfNeeded: input.count)
        for shift: UInt32 in [0, 8, 16, 24] { out.append(UInt8(truncatingIfNeeded: crc >> shift)) }
        for shift: UInt32 in [0, 8, 16, 24] { out.append(UInt8(truncatingIfNeeded: size >> shift)) }
        return out
    }

    /// `input[range]` as one complete raw deflate stream.
    static func deflate(_ input: [UInt8], _ range: Range<Int>, level: Int32) throws(GzipError) -> [UInt8] {
        try DeflateCompressors.with(level: level) { handle throws(GzipError) in
            let compressor = handle.pointer
            let bound = libdeflate_deflate_compress_bound(compressor, range.count)
            let output = [UInt8](unsafeUninitializedCapacity: bound) { out, count in
                count = input.withUnsafeBufferPointer { inBuf in
                    // An empty input may have no address; libdeflate reads nothing then.
                    libdeflate_deflate_compress(compressor, inBuf.baseAddress.map { $0 + range.lowerBound }, range.count, out.baseAddress, out.count)
                }
            }
            // The buffer is libdeflate's own bound, so 0 (no room) cannot happen; checked all the same.
            guard !output.isEmpty else { throw GzipError(description: "gzip: compressed output exceeds its bound") }
            return output
        }
    }

    /// Makes a complete raw deflate stream continuable: clears the final-block bit of its last
    /// block and, unless it ends on a byte boundary, pads it to one with an empty stored block.
    ///
    /// zlib's inflate with `Z_BLOCK` returns after each block, with `data_type` giving the unused
    /// bits of the last byte read (the next block's header, whose first bit is the final flag,
    /// starts right after them), 128 at a block boundary and 64 once the final block was read.
    static func unfinish(_ raw: inout [UInt8]) throws(GzipError) {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw GzipError(description: "gzip: inflateInit2 failed")
        }
        defer { inflateEnd(&stream) }
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        var header = (byte: 0, bit: 0)  // the header of the block being read: the first starts the stream
        var unused = 0
        let status: Int32 = raw.withUnsafeMutableBufferPointer { buf in
            let base = buf.baseAddress!
            stream.next_in = base
            stream.avail_in = UInt32(buf.count)
            while true {
                let rc = scratch.withUnsafeMutableBufferPointer { s -> Int32 in
                    stream.next_out = s.baseAddress
                    stream.avail_out = UInt32(s.count)
                    return inflate(&stream, Z_BLOCK)
                }
                guard rc == Z_OK || rc == Z_BUF_ERROR else { return rc }
                guard stream.data_type & 128 != 0 else {
                    if rc == Z_BUF_ERROR { return rc }  // no progress: the stream is truncated
                    continue  // the scratch output filled up inside a block
                }
                unused = Int(stream.data_type & 7)
                if stream.data_type & 64 != 0 {
                    // The end of the final block, whose header is the one recorded last.
                    return stream.avail_in == 0 ? Z_STREAM_END : Z_DATA_ERROR
                }
                let consumed = base.distance(to: stream.next_in)
                header = unused > 0 ? (consumed - 1, 8 - unused) : (consumed, 0)
            }
        }
        guard status == Z_STREAM_END, header.byte < raw.count else {
            throw GzipError(description: "gzip: cannot join deflate chunks (zlib \(status))")
        }
        raw[header.byte] &= ~UInt8(1 << header.bit)
        guard unused > 0 else { return }  // the next chunk's first block follows directly
        raw[raw.count - 1] &= 0xFF >> UInt8(unused)  // zero the bits past the last block
        // A stored block's 3 header bits (all zero: not final, type 00) go into the unused bits,
        // spilling into one more byte when fewer than 3 are left; then LEN 0 and NLEN 0xFFFF.
        if unused < 3 { raw.append(0) }
        raw += [0x00, 0x00, 0xFF, 0xFF]
    }
}
