/// A bplist00 document read in place: objects by reference, compared and decoded one at a time.
///
/// For comparing two large documents written by the same deterministic writer (two versions of
/// a manifest) without building either as a ``PlistValue``: equal encoded bytes of a scalar
/// mean an equal value. Two equal values written differently (another writer, another integer
/// width) compare unequal, which only makes the caller's edit larger, never wrong.
package struct BinaryPlistView {
    var reader: BinaryPlist.Reader
    /// The top object's reference.
    package var top: Int { reader.topObject }

    /// The kinds of object the view tells apart.
    package enum Kind: Equatable, Sendable {
        case array, dictionary, string, other
    }

    /// Runs `body` with a view of `bytes`; throws when the trailer or offset table is malformed
    /// (objects are checked as they are read).
    package static func with<R>(_ bytes: [UInt8], _ body: (inout BinaryPlistView) throws(PlistError) -> R) throws(PlistError) -> R {
        let result: Result<R, PlistError> = bytes.withUnsafeBytes { raw in
            do throws(PlistError) {
                var view = BinaryPlistView(reader: try BinaryPlist.Reader(raw))
                return .success(try body(&view))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func marker(_ ref: Int) throws(PlistError) -> (marker: UInt8, offset: Int) {
        let off = try reader.objectOffset(ref)
        return (reader.base.load(fromByteOffset: off, as: UInt8.self), off)
    }

    package func kind(_ ref: Int) throws(PlistError) -> Kind {
        switch try marker(ref).marker >> 4 {
        case 0xA: .array
        case 0xD: .dictionary
        case 0x5, 0x6: .string
        default: .other
        }
    }

    /// The references of an array's elements.
    package func elements(_ ref: Int) throws(PlistError) -> [Int] {
        let (m, off) = try marker(ref)
        guard m >> 4 == 0xA else { throw PlistError(.badMarker, "bplist: object \(ref) is not an array", offset: off) }
        let (count, start) = try reader.readCount(m, at: off)
        try reader.need(count * reader.refSize, at: start, objectAt: off, what: "array")
        var refs: [Int] = []
        refs.reserveCapacity(count)
        for i in 0..<count { refs.append(try reader.ref(start + i * reader.refSize)) }
        return refs
    }

    /// The references of a dictionary's keys and values, in the order written.
    package func pairs(_ ref: Int) throws(PlistError) -> [(key: Int, value: Int)] {
        let (m, off) = try marker(ref)
        guard m >> 4 == 0xD else { throw PlistError(.badMarker, "bplist: object \(ref) is not a dictionary", offset: off) }
        let (count, start) = try reader.readCount(m, at: off)
        try reader.need(count * 2 * reader.refSize, at: start, objectAt: off, what: "dictionary")
        var result: [(key: Int, value: Int)] = []
        result.reserveCapacity(count)
        for i in 0..<count {
            result.append((try reader.ref(start + i * reader.refSize), try reader.ref(start + (count + i) * reader.refSize)))
        }
        return result
    }

    /// The value of the dictionary `ref` for `key`, by reference; nil when absent.
    package func value(_ ref: Int, forKey key: String) throws(PlistError) -> Int? {
        for pair in try pairs(ref) {
            if try kind(pair.key) == .string, try string(pair.key) == key { return pair.value }
        }
        return nil
    }

    /// The value of the dictionary `ref` for an ASCII `key`, by reference, without allocating;
    /// nil when absent.
    package func value(_ ref: Int, forASCIIKey key: StaticString) throws(PlistError) -> Int? {
        let (m, off) = try marker(ref)
        guard m >> 4 == 0xD else { throw PlistError(.badMarker, "bplist: object \(ref) is not a dictionary", offset: off) }
        let (count, start) = try reader.readCount(m, at: off)
        try reader.need(count * 2 * reader.refSize, at: start, objectAt: off, what: "dictionary")
        let wanted = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        for i in 0..<count {
            if let bytes = try asciiBytes(try reader.ref(start + i * reader.refSize)), bytes.elementsEqual(wanted) {
                return try reader.ref(start + (count + i) * reader.refSize)
            }
        }
        return nil
    }

    /// A string object's text.
    package func string(_ ref: Int) throws(PlistError) -> String {
        let (m, off) = try marker(ref)
        switch m >> 4 {
        case 0x5: return try reader.asciiString(m, at: off)
        case 0x6: return try reader.utf16String(m, at: off)
        default: throw PlistError(.badMarker, "bplist: object \(ref) is not a string", offset: off)
        }
    }

    /// The bytes of an ASCII string object, or nil for any other object.
    package func asciiBytes(_ ref: Int) throws(PlistError) -> UnsafeRawBufferPointer? {
        let (m, off) = try marker(ref)
        guard m >> 4 == 0x5 else { return nil }
        let (count, start) = try reader.readCount(m, at: off)
        try reader.need(count, at: start, objectAt: off, what: "string")
        return UnsafeRawBufferPointer(start: reader.base + start, count: count)
    }

    /// The object `ref` decoded (checked as ``BinaryPlist/decode(_:)`` checks it).
    package mutating func decode(_ ref: Int) throws(PlistError) -> PlistValue {
        try reader.decodeObject(ref, depth: 0)
    }

    /// The encoded bytes of a scalar object (marker included); nil for a collection.
    func scalarBytes(_ ref: Int) throws(PlistError) -> UnsafeRawBufferPointer? {
        let (m, off) = try marker(ref)
        var end: Int
        switch m >> 4 {
        case 0x0: end = off + 1
        case 0x1: end = off + 1 + (1 << Int(m & 0x0F))
        case 0x2: end = off + 1 + (1 << Int(m & 0x0F))
        case 0x3: end = off + 9
        case 0x8: end = off + 2 + Int(m & 0x0F)
        case 0x4, 0x5:
            let (count, start) = try reader.readCount(m, at: off)
            end = start + count
        case 0x6:
            let (count, start) = try reader.readCount(m, at: off)
            end = start + 2 * count
        default: return nil
        }
        guard end <= reader.offsetTable else { throw PlistError(.truncated, "bplist: object \(ref) runs past the object area", offset: off) }
        return UnsafeRawBufferPointer(start: reader.base + off, count: end - off)
    }

    /// Where a collection's references start and how many elements (arrays) or pairs
    /// (dictionaries) it has; nil for any other object.
    func layout(_ ref: Int) throws(PlistError) -> (marker: UInt8, count: Int, start: Int)? {
        let (m, off) = try marker(ref)
        guard m >> 4 == 0xA || m >> 4 == 0xD else { return nil }
        let (count, start) = try reader.readCount(m, at: off)
        try reader.need(count * reader.refSize * (m >> 4 == 0xD ? 2 : 1), at: start, objectAt: off, what: "collection")
        return (m >> 4, count, start)
    }

    /// Whether object `a` here and object `b` of `other` are written the same: scalars byte for
    /// byte, arrays element by element, dictionaries pair by pair in the order written. At most
    /// `limit` objects are visited (shared references can make a small file a huge tree): past
    /// it the answer is "not the same", which only makes a caller's edit larger.
    package func same(_ a: Int, as b: Int, in other: BinaryPlistView, limit: Int = 4096) throws(PlistError) -> Bool {
        var budget = limit
        return try same(a, as: b, in: other, depth: 0, budget: &budget)
    }

    private func same(_ a: Int, as b: Int, in other: BinaryPlistView, depth: Int, budget: inout Int) throws(PlistError) -> Bool {
        budget -= 1
        guard depth < BinaryPlist.maxDepth, budget >= 0 else { return false }
        if let x = try scalarBytes(a) {
            guard let y = try other.scalarBytes(b) else { return false }
            return x.elementsEqual(y)
        }
        guard let x = try layout(a), let y = try other.layout(b), x.marker == y.marker, x.count == y.count else { return false }
        // Arrays: count references; dictionaries: count keys, then count values.
        let refs = x.marker == 0xD ? 2 * x.count : x.count
        for i in 0..<refs {
            let (p, q) = (try reader.ref(x.start + i * reader.refSize), try other.reader.ref(y.start + i * other.reader.refSize))
            guard try same(p, as: q, in: other, depth: depth + 1, budget: &budget) else { return false }
        }
        return true
    }
}
