import CZlib
import Foundation
import FolioSupport

/// A gzip member as ``Gzip/compress(_:level:)`` makes it, with where each chunk's deflate data
/// lies in it. The next compression of a similar input at the same level takes the chunks whose
/// bytes did not change instead of deflating them again, and makes the same bytes as a whole
/// compression: a chunk is deflated alone (no history from the one before), so its data depends
/// on its own bytes, the level and whether it is the last. A 10,000-entry manifest after a
/// one-entry edit changes two of its five chunks.
package struct GzipChunks: Sendable {
    /// The gzip member.
    package let member: [UInt8]
    /// What it decompresses to.
    package let input: [UInt8]
    package let level: Int32
    /// Chunk i's deflate data in `member`; chunk i is `input`'s i-th ``Gzip/chunkSize`` bytes.
    let parts: [Range<Int>]
    /// How many chunks were taken from the compression it was made from.
    package let reusedChunks: Int

    /// The chunks of `member`, a gzip member of `input` at `level` as ``Gzip/compress(_:level:)``
    /// writes it (a builder's file, say); nil when it is not one. Each chunk is inflated on its
    /// own, from a fresh stream, and must give exactly its part of `input`: a chunk that reached
    /// back into the one before it would fail, so every chunk found can be reused as it is.
    package init?(recovering member: [UInt8], of input: [UInt8], level: Int32) {
        guard (1...Gzip.maxLevel).contains(level), member.count >= 18,
            Array(member.prefix(10)) == Gzip.header(level: level), member.suffix(8).elementsEqual(Gzip.trailer(of: input))
        else { return nil }
        let ranges = Gzip.chunkRanges(input.count)
        var parts: [Range<Int>] = []
        var start = 10
        for (i, range) in ranges.enumerated() {
            guard let length = Gzip.inflateChunk(member, start..<(member.count - 8), expecting: input[range], isLast: i == ranges.count - 1) else {
                return nil
            }
            parts.append(start..<(start + length))
            start += length
        }
        guard start == member.count - 8 else { return nil }
        self.init(member: member, input: input, level: level, parts: parts, reusedChunks: 0)
    }

    init(member: [UInt8], input: [UInt8], level: Int32, parts: [Range<Int>], reusedChunks: Int) {
        self.member = member
        self.input = input
        self.level = level
        self.parts = parts
        self.reusedChunks = reusedChunks
    }

    /// Chunk `i`'s deflate data when it compresses `range` of `other` exactly as it would be
    /// deflated there: the same bytes, and the last chunk in both or in neither.
    func part(_ i: Int, _ range: Range<Int>, of other: [UInt8], isLast: Bool) -> ArraySlice<UInt8>? {
        guard i < parts.count, (i == parts.count - 1) == isLast, !isLast || input.count == other.count, range.upperBound <= input.count,
            Gzip.same(input, other, range)
        else { return nil }
        return member[parts[i]]
    }
}

extension Gzip {
    /// What ``compress(_:level:)`` makes of `input`, with its chunks; those `previous` (at the
    /// same level) has for the same bytes are taken from it, the others deflated on all cores.
    package static func compress(_ input: [UInt8], level: Int32, reusing previous: GzipChunks?) throws(GzipError) -> GzipChunks {
        guard (1...maxLevel).contains(level) else { throw GzipError(description: "gzip: level \(level) is not in 1...\(maxLevel)") }
        let ranges = chunkRanges(input.count)
        let last = ranges.count - 1
        let previous = previous?.level == level ? previous : nil
        let kept = ranges.indices.map { i in previous?.part(i, ranges[i], of: input, isLast: i == last) }
        let fresh = ranges.indices.filter { kept[$0] == nil }
        let made = Parallel.map(fresh) { i in
            Result { () throws(GzipError) in try deflateChunk(input, ranges[i], level: level, isLast: i == last) }
        }
        var deflated: [ArraySlice<UInt8>?] = kept
        for (i, result) in zip(fresh, made) { deflated[i] = try result.get()[...] }
        var member = header(level: level)
        var parts: [Range<Int>] = []
        member.reserveCapacity(deflated.reduce(18) { $0 + ($1?.count ?? 0) })
        for part in deflated {
            parts.append(member.count..<(member.count + part!.count))
            member += part!
        }
        member += trailer(of: input)
        return GzipChunks(member: member, input: input, level: level, parts: parts, reusedChunks: ranges.count - fresh.count)
    }

    /// The input ranges of a chunked compression's chunks.
    static func chunkRanges(_ count: Int) -> [Range<Int>] {
        stride(from: 0, to: max(count, 1), by: chunkSize).map { $0..<min($0 + chunkSize, count) }
    }

    /// The 10-byte gzip header ``compress(_:level:)`` writes: no name, mtime 0, Unix.
    static func header(level: Int32) -> [UInt8] { [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, level >= 8 ? 2 : (level < 2 ? 4 : 0), 3] }

    /// The gzip trailer of `input`: its CRC-32 and size, little-endian.
    static func trailer(of input: [UInt8]) -> [UInt8] {
        let crc = input.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
        let size = UInt32(truncatingIfNeeded: input.count)
        return [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: crc >> $0) } + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: size >> $0) }
    }

    /// Whether `a` and `b` hold the same bytes in `range` (both long enough).
    static func same(_ a: [UInt8], _ b: [UInt8], _ range: Range<Int>) -> Bool {
        guard range.upperBound <= a.count, range.upperBound <= b.count else { return false }
        return a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                range.isEmpty || memcmp(pa.baseAddress! + range.lowerBound, pb.baseAddress! + range.lowerBound, range.count) == 0
            }
        }
    }

    /// The length of the chunk starting at `within`'s start: raw deflate data that inflates on
    /// its own to `expected` and ends on a byte boundary after a block that is not the final one
    /// (or, for the last chunk, ends the stream at `within`'s end); nil otherwise.
    static func inflateChunk(_ data: [UInt8], _ within: Range<Int>, expecting expected: ArraySlice<UInt8>, isLast: Bool) -> Int? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        // One byte more than expected: output past it means the chunk is not this one.
        var out = [UInt8](repeating: 0, count: expected.count + 1)
        let length: Int? = data.withUnsafeBufferPointer { buf in
            out.withUnsafeMutableBufferPointer { o in
                let start = UnsafeMutablePointer(mutating: buf.baseAddress! + within.lowerBound)
                stream.next_in = start
                stream.avail_in = UInt32(within.count)
                stream.next_out = o.baseAddress
                stream.avail_out = UInt32(o.count)
                while true {
                    let before = (stream.avail_in, stream.avail_out)
                    let rc = inflate(&stream, Z_BLOCK)
                    let produced = Int(stream.total_out)
                    guard produced <= expected.count else { return nil }
                    let consumed = start.distance(to: stream.next_in)
                    if rc == Z_STREAM_END { return isLast && produced == expected.count && consumed == within.count ? consumed : nil }
                    guard rc == Z_OK, before != (stream.avail_in, stream.avail_out) || stream.data_type & 128 != 0 else { return nil }
                    // A block boundary, byte-aligned, with the chunk's bytes all out: its end.
                    if !isLast, stream.data_type & 128 != 0, stream.data_type & 64 == 0, stream.data_type & 7 == 0, produced == expected.count {
                        return consumed
                    }
                }
            }
        }
        guard let length, out.prefix(expected.count).elementsEqual(expected) else { return nil }
        return length
    }
}
