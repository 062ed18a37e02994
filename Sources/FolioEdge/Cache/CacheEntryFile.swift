import FolioHTTPCore
import FolioSupport
import FolioToolSupport
import Foundation
import NIOCore
import NIOHTTP1

/// One cached response as a file: a fixed header, the head (what the index needs, then the
/// fields), then the body.
///
///     "FolioCE1"  magic and format version              8 bytes
///     head length, body length (little-endian)           4 + 8 bytes
///     CRC-32 of the head and the body                    4 bytes
///     head: key, status, reason, request and response times, soft-purged, the Vary names
///           and the request's values for them, freshness lifetime and initial age, the
///           response fields, and the prepared heads of a hit and of a 304
///     body
///
/// A file is written whole under a temporary name and renamed into place, so a reader sees an
/// old entry or a new one; the checksum, checked on every read, catches what a crash or the disk
/// tore anyway. A file that fails is a miss, never an answer.
enum CacheEntryFile {
    static let magic = Array("FolioCE1".utf8)
    static let headerSize = 24
    /// The head is read alone when the index is rebuilt; one longer than this is not a cache entry.
    static let maxHeadSize = 1 << 20

    /// What the index keeps of an entry, read from its head alone.
    struct Head {
        var key: String
        var status: Int
        var reason: String
        var requestTime: Double
        var responseTime: Double
        var stale: Bool
        var fields: [(String, String)]
        var derived: StoredResponse.Derived
        var control: CacheControl
        var bodyLength: Int
    }

    struct Corrupt: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: - Writing

    static func encode(_ r: StoredResponse) -> [UInt8] {
        var head = Writer()
        head.string(r.key)
        head.int(r.status)
        head.string(r.reason)
        head.double(r.requestTime)
        head.double(r.responseTime)
        head.int(r.markedStale ? 1 : 0)
        head.pairs(r.headers.map { ($0.name, $0.value) })
        head.strings(r.varyNames)
        head.int(r.varyValues.count)
        for v in r.varyValues {
            head.int(v == nil ? 0 : 1)
            head.string(v ?? "")
        }
        head.double(r.lifetime)
        head.double(r.initialAge)
        head.buffer(r.preparedHead)
        head.int(r.prepared304 == nil ? 0 : 1)
        head.buffer(r.prepared304 ?? ByteBuffer())
        head.control(r.control)
        let bodyLength = r.body.readableBytes
        var out = magic
        out.reserveCapacity(headerSize + head.bytes.count + bodyLength)
        Writer.append(UInt32(head.bytes.count), to: &out)
        Writer.append(UInt64(bodyLength), to: &out)
        var crc = crc32(0, head.bytes)
        r.body.withUnsafeReadableBytes { crc = crc32(crc, $0) }
        Writer.append(crc, to: &out)
        out += head.bytes
        r.body.withUnsafeReadableBytes { out.append(contentsOf: $0) }
        return out
    }

    // MARK: - Reading

    /// The whole entry at `path`, checked against its checksum; throws when it is missing,
    /// torn or not an entry.
    /// `relative` is opened in the directory `directoryFD` when there is one (no path walk
    /// from the root); `expectedSize`, the index's, saves a stat.
    static func read(_ path: String, relative: String? = nil, in directoryFD: Int32 = -1, expectedSize: Int? = nil) throws -> (StoredResponse, size: Int) {
        let fd = directoryFD >= 0 && relative != nil ? openat(directoryFD, relative!, O_RDONLY | O_CLOEXEC) : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Corrupt("\(path): cannot open") }
        defer { close(fd) }
        let (response, held) = try readHeld(fd: fd, path: path, expectedSize: expectedSize)
        return (response, held.size)
    }

    /// What a reader keeps of an entry file it holds open: the checked head, decoded, and where
    /// the body is. The file is never written in place (a new entry is a new file), so reading
    /// the body again and checking it against the checksum reads the whole entry.
    struct Held: Sendable {
        /// The entry with an empty body.
        var template: StoredResponse
        var bodyOffset: Int
        var bodyLength: Int
        /// The CRC-32 of the head alone, and the file's of head and body.
        var headCRC: UInt32
        var crc: UInt32
        var size: Int
    }

    /// The whole entry in the open file `fd`, checked, and what a reader holding the file keeps.
    static func readHeld(fd: Int32, path: String, expectedSize: Int?) throws -> (StoredResponse, Held) {
        let buffer = try expectedSize.map { try readUpTo(fd, $0 + 1, path: path) } ?? readFile(fd, path: path)
        let (head, headRange) = try parseHead(buffer)
        guard buffer.readableBytes == headerSize + headRange.count + head.bodyLength else {
            throw Corrupt("\(path): \(buffer.readableBytes) bytes, the header says \(headerSize + headRange.count + head.bodyLength)")
        }
        let stored = buffer.withUnsafeReadableBytes { raw in UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 20, as: UInt32.self)) }
        let headCRC = buffer.withUnsafeReadableBytes { raw in crc32(0, UnsafeRawBufferPointer(rebasing: raw[headRange])) }
        let actual = buffer.withUnsafeReadableBytes { raw in crc32(headCRC, UnsafeRawBufferPointer(rebasing: raw[headRange.upperBound...])) }
        guard stored == actual else { throw Corrupt("\(path): checksum mismatch") }
        let body = buffer.getSlice(at: buffer.readerIndex + headRange.upperBound, length: head.bodyLength) ?? ByteBuffer()
        let held = Held(
            template: response(head, body: ByteBuffer()), bodyOffset: headRange.upperBound, bodyLength: head.bodyLength, headCRC: headCRC,
            crc: stored, size: buffer.readableBytes)
        return (StoredResponse(held.template, body: body), held)
    }

    /// The entry of a held file: its body read again and checked with the head kept.
    static func read(fd: Int32, held: Held, path: String) throws -> StoredResponse {
        var body = ByteBufferAllocator().buffer(capacity: held.bodyLength)
        try readInto(&body, fd: fd, count: held.bodyLength, path: path, base: held.bodyOffset)
        guard body.withUnsafeReadableBytes({ crc32(held.headCRC, $0) }) == held.crc else { throw Corrupt("\(path): checksum mismatch") }
        return StoredResponse(held.template, body: body)
    }

    /// The head of the entry at `path` and the file's size, reading only its first bytes (the
    /// index at start-up); the body is checked when the entry is read.
    static func readHead(_ path: String) throws -> (Head, size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Corrupt("\(path): cannot open") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Corrupt("\(path): cannot stat") }
        var buffer = ByteBufferAllocator().buffer(capacity: 4096)
        try readInto(&buffer, fd: fd, count: min(Int(st.st_size), 4096), path: path)
        if let length = buffer.getInteger(at: 8, endianness: .little, as: UInt32.self), Int(length) + headerSize > buffer.readableBytes,
            Int(length) <= maxHeadSize, Int(length) + headerSize <= Int(st.st_size)
        {
            try readInto(&buffer, fd: fd, count: Int(length) + headerSize - buffer.readableBytes, path: path)
        }
        let (head, range) = try parseHead(buffer)
        guard Int(st.st_size) == headerSize + range.count + head.bodyLength else { throw Corrupt("\(path): truncated") }
        return (head, Int(st.st_size))
    }

    static func response(_ head: Head, body: ByteBuffer) -> StoredResponse {
        var headers = HTTPHeaders()
        for (n, v) in head.fields { headers.add(name: n, value: v) }
        return StoredResponse(
            key: head.key, status: head.status, reason: head.reason, headers: headers, body: body, requestTime: head.requestTime,
            responseTime: head.responseTime, markedStale: head.stale, control: head.control, derived: head.derived)
    }

    private static func parseHead(_ buffer: ByteBuffer) throws -> (Head, Range<Int>) {
        guard buffer.readableBytes >= headerSize, buffer.readableBytesView.prefix(8).elementsEqual(magic),
            let headLength = buffer.getInteger(at: buffer.readerIndex + 8, endianness: .little, as: UInt32.self),
            let bodyLength = buffer.getInteger(at: buffer.readerIndex + 12, endianness: .little, as: UInt64.self),
            Int(headLength) <= maxHeadSize, bodyLength < UInt64(Int.max / 2),
            buffer.readableBytes >= headerSize + Int(headLength)
        else { throw Corrupt("not a cache entry, or a torn one") }
        let range = headerSize..<(headerSize + Int(headLength))
        var r = Reader(bytes: buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count) ?? ByteBuffer())
        let head = try Head(
            key: r.string(), status: r.int(), reason: r.string(), requestTime: r.double(), responseTime: r.double(),
            stale: r.int() != 0, fields: r.pairs(), derived: r.derived(), control: r.control(), bodyLength: Int(bodyLength))
        return (head, range)
    }

    // MARK: - Files

    /// The file's bytes, up to `limit` (one more than expected tells a longer file).
    private static func readUpTo(_ fd: Int32, _ limit: Int, path: String) throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: limit)
        while buffer.readableBytes < limit {
            let offset = buffer.writerIndex
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: limit - offset) { raw in
                pread(fd, raw.baseAddress, limit - offset, off_t(offset))
            }
            guard n >= 0 else { throw Corrupt("\(path): cannot read") }
            if n == 0 { break }
        }
        return buffer
    }

    private static func readFile(_ fd: Int32, path: String) throws -> ByteBuffer {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Corrupt("\(path): cannot stat") }
        var buffer = ByteBufferAllocator().buffer(capacity: Int(st.st_size))
        try readInto(&buffer, fd: fd, count: Int(st.st_size), path: path)
        return buffer
    }

    /// Reads `count` bytes at the buffer's end offset in the file (its writer index, from `base`).
    private static func readInto(_ buffer: inout ByteBuffer, fd: Int32, count: Int, path: String, base: Int = 0) throws {
        var left = count
        while left > 0 {
            let offset = base + buffer.writerIndex
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: left) { raw in
                max(0, pread(fd, raw.baseAddress, left, off_t(offset)))
            }
            guard n > 0 else { throw Corrupt("\(path): short read") }
            left -= n
        }
    }

    private static func crc32(_ crc: UInt32, _ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { crc32(crc, $0) }
    }

    private static func crc32(_ crc: UInt32, _ raw: UnsafeRawBufferPointer) -> UInt32 {
        CRC32.update(crc, raw)
    }

    // MARK: - Encoding

    private struct Writer {
        var bytes: [UInt8] = []

        static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
        }

        mutating func int(_ value: Int) { Self.append(Int64(value), to: &bytes) }
        mutating func double(_ value: Double) { Self.append(value.bitPattern, to: &bytes) }

        mutating func string(_ value: String) {
            let utf8 = Array(value.utf8)
            Self.append(UInt32(utf8.count), to: &bytes)
            bytes += utf8
        }

        /// The directives that decide freshness, so that reading an entry parses none.
        mutating func control(_ c: CacheControl) {
            for v in [c.maxAge, c.sMaxAge, c.maxStale, c.minFresh, c.staleWhileRevalidate, c.staleIfError] { int(v ?? -1) }
            let flags = [c.noStore, c.noCache, c.isPrivate, c.isPublic, c.mustRevalidate, c.proxyRevalidate, c.mustUnderstand, c.immutable, c.onlyIfCached, c.isEmpty]
            int(flags.enumerated().reduce(0) { $0 | ($1.element ? 1 << $1.offset : 0) })
            strings(c.privateFields)
        }

        mutating func strings(_ list: [String]) {
            Self.append(UInt32(list.count), to: &bytes)
            for v in list { string(v) }
        }

        mutating func buffer(_ b: ByteBuffer) {
            Self.append(UInt32(b.readableBytes), to: &bytes)
            b.withUnsafeReadableBytes { bytes.append(contentsOf: $0) }
        }

        mutating func pairs(_ list: [(String, String)]) {
            Self.append(UInt32(list.count), to: &bytes)
            for (n, v) in list {
                string(n)
                string(v)
            }
        }
    }

    private struct Reader {
        var bytes: ByteBuffer

        mutating func int() throws -> Int {
            guard let v = bytes.readInteger(endianness: .little, as: Int64.self) else { throw Corrupt("short head") }
            return Int(v)
        }

        mutating func double() throws -> Double {
            guard let v = bytes.readInteger(endianness: .little, as: UInt64.self) else { throw Corrupt("short head") }
            return Double(bitPattern: v)
        }

        mutating func string() throws -> String {
            guard let n = bytes.readInteger(endianness: .little, as: UInt32.self), let s = bytes.readString(length: Int(n)) else {
                throw Corrupt("short head")
            }
            return s
        }

        mutating func count() throws -> Int {
            guard let n = bytes.readInteger(endianness: .little, as: UInt32.self), Int(n) <= bytes.readableBytes / 4 else {
                throw Corrupt("short head")
            }
            return Int(n)
        }

        mutating func buffer() throws -> ByteBuffer {
            guard let n = bytes.readInteger(endianness: .little, as: UInt32.self), let b = bytes.readSlice(length: Int(n)) else {
                throw Corrupt("short head")
            }
            return b
        }

        mutating func control() throws -> CacheControl {
            var c = CacheControl()
            let values = try (0..<6).map { _ in try int() }.map { $0 < 0 ? nil : $0 }
            (c.maxAge, c.sMaxAge, c.maxStale, c.minFresh, c.staleWhileRevalidate, c.staleIfError) = (values[0], values[1], values[2], values[3], values[4], values[5])
            let flags = try int()
            let bit = { (i: Int) in flags & (1 << i) != 0 }
            (c.noStore, c.noCache, c.isPrivate, c.isPublic, c.mustRevalidate) = (bit(0), bit(1), bit(2), bit(3), bit(4))
            (c.proxyRevalidate, c.mustUnderstand, c.immutable, c.onlyIfCached, c.isEmpty) = (bit(5), bit(6), bit(7), bit(8), bit(9))
            c.privateFields = try (0..<count()).map { _ in try string() }
            return c
        }

        mutating func derived() throws -> StoredResponse.Derived {
            let names = try (0..<count()).map { _ in try string() }
            let n = try int()
            guard n == names.count else { throw Corrupt("vary values") }
            let values: [String?] = try (0..<n).map { _ in
                let present = try int() != 0
                let v = try string()
                return present ? v : nil
            }
            let lifetime = try double()
            let initialAge = try double()
            let head = try buffer()
            let has304 = try int() != 0
            let notModified = try buffer()
            return StoredResponse.Derived(
                varyNames: names, varyValues: values, lifetime: lifetime, initialAge: initialAge, preparedHead: head,
                prepared304: has304 ? notModified : nil)
        }

        mutating func pairs() throws -> [(String, String)] {
            guard let n = bytes.readInteger(endianness: .little, as: UInt32.self), Int(n) <= bytes.readableBytes / 8 else {
                throw Corrupt("short head")
            }
            return try (0..<Int(n)).map { _ in (try string(), try string()) }
        }
    }
}
