import CZlib
import Foundation

/// An error while compressing or decompressing gzip.
package struct GzipError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(description: String) { self.description = description }
}

/// gzip (RFC 1952): inflated here by zlib (streaming, with a size limit), on every platform.
/// Compression, by libdeflate, is the programs' (FolioToolSupport extends this type).
package enum Gzip {
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

