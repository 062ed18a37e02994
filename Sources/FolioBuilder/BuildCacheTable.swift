import FolioPublished
import FolioSupport

/// The build cache's records in one table of bytes, so that a rebuild of 20,000 files neither
/// decodes nor re-encodes 20,000 property lists: records are indexed by source path when loaded,
/// read when asked for, and an unchanged one is copied into the next table as it is.
///
/// A record: the source's relative path, its stamp (inode, size, modification seconds and
/// nanoseconds) and its entries (path, SHA-256, size, gzip size or -1, brotli size or -1,
/// content type, kind, locale or none). Strings are a 32-bit length and UTF-8; numbers 64-bit; all little-endian.
package struct RecordTable: Sendable {
    private var bytes: [UInt8] = []
    /// Where each source's record is, by relative path.
    private var index: [String: Range<Int>] = [:]

    package init() {}

    /// The table's size in bytes.
    package var byteCount: Int { bytes.count }

    /// Indexes a table; nil when it is damaged (the cache is then ignored).
    package init?(bytes: [UInt8]) {
        self.bytes = bytes
        var reader = Reader(bytes: bytes)
        index.reserveCapacity(bytes.count / 256)
        while !reader.atEnd {
            let start = reader.at
            guard let path = reader.string(), reader.skip(32), let count = reader.uint32() else { return nil }
            for _ in 0..<count {
                guard reader.skipString(), reader.skipString(), reader.skip(24), reader.skipString(), reader.skipString(),
                    let hasLocale = reader.byte(), hasLocale == 0 || reader.skipString()
                else { return nil }
            }
            index[path] = start..<reader.at
        }
    }

    /// The record of a source, when the table has a well-formed one.
    package func record(_ path: String) -> BuildCache.Record? {
        guard let range = index[path] else { return nil }
        var r = Reader(bytes: bytes, at: range.lowerBound)
        guard r.string() != nil, let inode = r.uint64(), let size = r.int64(), let sec = r.int64(), let nsec = r.int64(),
            let count = r.uint32()
        else { return nil }
        var entries: [Manifest.Entry] = []
        entries.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let path = r.string(), let sha = r.string(), let objectSize = r.int64(), let gz = r.int64(), let br = r.int64(),
                let type = r.string(),
                let kind = r.string(), let hasLocale = r.byte(), Manifest.isValidPath(path), ContentHash.isSHA256Hex(sha)
            else { return nil }
            let locale = hasLocale == 0 ? nil : r.string()
            entries.append(Manifest.Entry(
                path: path, sha256: sha, size: Int(objectSize), gzipSize: gz < 0 ? nil : Int(gz), contentType: type, locale: locale,
                kind: kind.isEmpty ? nil : kind, brSize: br < 0 ? nil : Int(br)))
        }
        let stamp = FileStamp(inode: inode, size: size, mtimeSeconds: Int(sec), mtimeNanos: Int(nsec))
        return BuildCache.Record(stamp: stamp, entries: entries)
    }

    /// Builds a table.
    package struct Writer {
        package private(set) var bytes: [UInt8] = []

        package init() {}

        package mutating func reserve(_ count: Int) { bytes.reserveCapacity(count) }

        /// Copies the record of `path` from `table`; false when it has none.
        package mutating func copy(_ path: String, from table: RecordTable) -> Bool {
            guard let range = table.index[path] else { return false }
            bytes += table.bytes[range]
            return true
        }

        package mutating func append(_ path: String, _ record: BuildCache.Record) {
            string(path)
            for n in record.stamp.fields { int64(n) }
            uint32(UInt32(record.entries.count))
            for e in record.entries {
                string(e.path)
                string(e.sha256)
                int64(Int64(e.size))
                int64(Int64(e.gzipSize ?? -1))
                int64(Int64(e.brSize ?? -1))
                string(e.contentType)
                string(e.kind ?? "")
                if let locale = e.locale {
                    bytes.append(1)
                    string(locale)
                } else {
                    bytes.append(0)
                }
            }
        }

        private mutating func uint32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        private mutating func int64(_ v: Int64) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        private mutating func string(_ s: String) {
            uint32(UInt32(s.utf8.count))
            bytes += s.utf8
        }
    }

    /// Reads a table; every read checks its bounds and gives nil past the end.
    struct Reader {
        let bytes: [UInt8]
        var at = 0

        var atEnd: Bool { at >= bytes.count }

        mutating func skip(_ n: Int) -> Bool {
            guard n >= 0, n <= bytes.count - at else { return false }
            at += n
            return true
        }

        mutating func byte() -> UInt8? {
            guard at < bytes.count else { return nil }
            defer { at += 1 }
            return bytes[at]
        }

        private mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
            let n = MemoryLayout<T>.size
            guard n <= bytes.count - at else { return nil }
            let v = bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: T.self)) }
            at += n
            return v
        }

        mutating func uint32() -> UInt32? { fixed(UInt32.self) }
        mutating func uint64() -> UInt64? { fixed(UInt64.self) }
        mutating func int64() -> Int64? { fixed(Int64.self) }

        mutating func string() -> String? {
            guard let n = uint32(), Int(n) <= bytes.count - at else { return nil }
            defer { at += Int(n) }
            return String(decoding: bytes[at..<(at + Int(n))], as: UTF8.self)
        }

        mutating func skipString() -> Bool {
            guard let n = uint32() else { return false }
            return skip(Int(n))
        }
    }
}
