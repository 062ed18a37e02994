/// A content coding (`Content-Encoding`) the edge, the tier and the client read: identity, gzip
/// (`x-gzip` too) and, where brotli is linked (the programs), brotli.
package enum ContentDecoding {
    /// A coding named in a response that none of them asks for or reads.
    package struct Unsupported: Error, CustomStringConvertible, Sendable {
        package var coding: String
        package var description: String { "the content coding \"\(coding)\" is not one this reads" }
    }

    /// `bytes` decoded from `coding` (the header's value; nil for none), refusing output larger
    /// than `maxSize` bytes; `br` through `brotli` when given (else unsupported).
    package static func decode(
        _ bytes: [UInt8], coding: String?, maxSize: Int, brotli: (([UInt8], Int) throws -> [UInt8])?
    ) throws -> [UInt8] {
        switch coding?.lowercased() {
        case nil, "identity": return bytes
        case "gzip", "x-gzip": return try Gzip.decompress(bytes, maxSize: maxSize)
        case "br" where brotli != nil: return try brotli!(bytes, maxSize)
        case let other?: throw Unsupported(coding: other)
        }
    }
}
