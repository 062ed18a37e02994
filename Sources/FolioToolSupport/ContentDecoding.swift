import FolioSupport

extension ContentDecoding {
    /// `bytes` decoded from `coding` (identity, gzip or brotli), refusing output larger than
    /// `maxSize` bytes.
    package static func decode(_ bytes: [UInt8], coding: String?, maxSize: Int) throws -> [UInt8] {
        try decode(bytes, coding: coding, maxSize: maxSize) { try Brotli.decompress($0, maxSize: $1) }
    }
}
