import CFolioSystem
import Foundation

/// An error from zlib while compressing or decompressing.
package struct GzipError: Error, CustomStringConvertible, Sendable {
    package var description: String
}

/// gzip (RFC 1952) over zlib: deterministic output (no name, mtime 0) for reproducible builds.
package enum Gzip {
    /// Compresses `input` at `level` (9 = best) into a gzip member.
    package static func compress(_ input: [UInt8], level: Int32 = 9) throws(GzipError) -> [UInt8] {
        var stream = z_stream()
        var rc = deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw GzipError(description: "gzip: deflateInit2 failed (\(rc))") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, UInt(input.count))) + 32
        var output = [UInt8](repeating: 0, count: bound)
        var input = input
        rc = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                stream.next_in = inBuf.baseAddress
                stream.avail_in = UInt32(inBuf.count)
                stream.next_out = outBuf.baseAddress
                stream.avail_out = UInt32(outBuf.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard rc == Z_STREAM_END else { throw GzipError(description: "gzip: deflate failed (\(rc))") }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// Inputs above this size are deflated as independent chunks of this size, in parallel.
    package static let chunkSize = 256 * 1024

    /// Like ``compress(_:level:)``, but an input larger than ``chunkSize`` is split into chunks of
    /// that size, deflated on all cores (each primed with the 32 KB before it as its dictionary, so
    /// the ratio barely changes) and joined into one gzip member, as pigz does. The chunking depends
    /// only on the input's size, so the output is the same on every machine.
    package static func compressInChunks(_ input: [UInt8], level: Int32 = 9) throws(GzipError) -> [UInt8] {
        guard input.count > chunkSize else { return try compress(input, level: level) }
        let ranges = stride(from: 0, to: input.count, by: chunkSize).map { $0..<min($0 + chunkSize, input.count) }
        let last = ranges.count - 1
        let parts = Parallel.map(Array(ranges.enumerated())) { (i, range) -> Result<(bytes: [UInt8], crc: UInt), GzipError> in
            Result { () throws(GzipError) in
                try deflateChunk(input, range, level: level, isLast: i == last)
            }
        }
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, level >= 9 ? 2 : 0, 3]
        var crc: UInt = 0
        for (i, part) in parts.enumerated() {
            let (bytes, partCRC) = try part.get()
            out += bytes
            crc = i == 0 ? partCRC : crc32_combine(crc, partCRC, off_t(ranges[i].count))
        }
        let size = UInt32(truncatingIfNeeded: input.count)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: UInt32(crc) >> UInt32(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
        return out
    }

    /// One raw-deflate chunk of `input[range]`, ending byte-aligned (or final), and its CRC-32.
    private static func deflateChunk(
        _ input: [UInt8], _ range: Range<Int>, level: Int32, isLast: Bool
    ) throws(GzipError) -> (bytes: [UInt8], crc: UInt) {
        var stream = z_stream()
        var rc = deflateInit2_(&stream, level, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw GzipError(description: "gzip: deflateInit2 failed (\(rc))") }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(range.count))) + 64)
        var crc: UInt = 0
        rc = input.withUnsafeBufferPointer { all in
            let base = UnsafeMutablePointer(mutating: all.baseAddress!)
            crc = crc32(0, base + range.lowerBound, UInt32(range.count))
            if range.lowerBound > 0 {
                let dictStart = max(0, range.lowerBound - 32 * 1024)
                let r = deflateSetDictionary(&stream, base + dictStart, UInt32(range.lowerBound - dictStart))
                if r != Z_OK { return r }
            }
            return output.withUnsafeMutableBufferPointer { outBuf in
                stream.next_in = base + range.lowerBound
                stream.avail_in = UInt32(range.count)
                stream.next_out = outBuf.baseAddress
                stream.avail_out = UInt32(outBuf.count)
                return deflate(&stream, isLast ? Z_FINISH : Z_SYNC_FLUSH)
            }
        }
        guard rc == (isLast ? Z_STREAM_END : Z_OK), stream.avail_in == 0 else {
            throw GzipError(description: "gzip: deflate failed (\(rc))")
        }
        output.removeSubrange(Int(stream.total_out)...)
        return (output, crc)
    }

    /// Decompresses a gzip stream, refusing output larger than `maxSize` bytes.
    package static func decompress(_ input: [UInt8], maxSize: Int) throws(GzipError) -> [UInt8] {
        var stream = z_stream()
        var rc = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw GzipError(description: "gzip: inflateInit2 failed (\(rc))") }
        defer { inflateEnd(&stream) }
        var output = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: max(1, min(max(input.count * 4, 4096), maxSize)))
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuf in
            stream.next_in = inBuf.baseAddress
            stream.avail_in = UInt32(inBuf.count)
            while true {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { c in
                    stream.next_out = c.baseAddress
                    stream.avail_out = UInt32(c.count)
                    rc = inflate(&stream, Z_NO_FLUSH)
                    return c.count - Int(stream.avail_out)
                }
                output.append(contentsOf: chunk[0..<produced])
                if output.count > maxSize { return Z_BUF_ERROR - 100 }
                if rc == Z_STREAM_END { return stream.avail_in == 0 ? Z_STREAM_END : Z_DATA_ERROR - 100 }
                if rc != Z_OK { return rc }
                if produced == 0, stream.avail_in == 0 { return Z_BUF_ERROR }
            }
        }
        switch status {
        case Z_STREAM_END: return output
        case Z_BUF_ERROR - 100: throw GzipError(description: "gzip: output exceeds \(maxSize) bytes")
        case Z_DATA_ERROR - 100: throw GzipError(description: "gzip: trailing bytes after the gzip stream")
        case Z_BUF_ERROR: throw GzipError(description: "gzip: stream is truncated")
        default: throw GzipError(description: "gzip: corrupt stream (zlib \(status))")
        }
    }
}
