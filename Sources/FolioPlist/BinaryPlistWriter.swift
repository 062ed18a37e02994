import Foundation

extension BinaryPlist {
    /// Encodes `value` as bplist00: dictionary keys sorted, equal scalars stored once,
    /// and the smallest reference and offset widths that fit.
    public static func encode(_ value: PlistValue) -> [UInt8] {
        var writer = Writer()
        _ = writer.flatten(value)
        return writer.serialise()
    }

    /// Like ``encode(_:)``, handing over each `chunkSize` bytes of the result as soon as they are
    /// written and final, while the rest is still being encoded (so they can be compressed in the
    /// meantime). Each chunk is the next `chunkSize` bytes of the returned encoding; the bytes
    /// after the last chunk handed over (at least the trailer) are only in the result.
    package static func encode(
        _ value: PlistValue, chunkSize: Int, onChunk: (ArraySlice<UInt8>) -> Void
    ) -> [UInt8] {
        precondition(chunkSize > 0, "chunkSize must be positive")
        return withoutActuallyEscaping(onChunk) { onChunk in
            var writer = Writer()
            writer.chunkSize = chunkSize
            writer.onChunk = onChunk
            _ = writer.flatten(value)
            writer.onChunk = nil
            return writer.serialise()
        }
    }
}

extension BinaryPlist {
    /// A scalar's identity for uniquing: equal by value and type, reals and dates by bit pattern.
    enum ScalarKey: Hashable {
        case bool(Bool), int(Int64), uint(UInt64), real(UInt64), date(UInt64)
        case data(Data), uid(UInt64)
    }

    /// Strings interned by their exact UTF-8 bytes (not canonical equivalence: "é" and
    /// "e\u{301}" stay different objects), in an open-addressing table with a word-at-a-time
    /// hash; text content is mostly strings, and this is the writer's hot path.
    struct StringTable {
        private var mask = 255
        private var indices = [Int32](repeating: -1, count: 256)
        private var hashes = [UInt64](repeating: 0, count: 256)
        private var strings = [String](repeating: "", count: 256)
        private var count = 0
        private static let seed = UInt64.random(in: 1...UInt64.max)

        init() {}

        /// A table that holds `expected` strings without growing.
        init(expected: Int) {
            var size = 256
            while expected * 4 > (size - 1) * 3 { size *= 2 }
            mask = size - 1
            indices = [Int32](repeating: -1, count: size)
            hashes = [UInt64](repeating: 0, count: size)
            strings = [String](repeating: "", count: size)
        }

        @inline(__always)
        static func hash(_ p: UnsafeBufferPointer<UInt8>) -> UInt64 { WordHash.hash(UnsafeRawBufferPointer(p), seed: seed) }

        /// The object index already holding these bytes, or `next` after recording them.
        mutating func findOrInsert(_ utf8: UnsafeBufferPointer<UInt8>, _ string: String, next: Int) -> Int {
            let h = StringTable.hash(utf8)
            var slot = Int(truncatingIfNeeded: h) & mask
            while indices[slot] >= 0 {
                if hashes[slot] == h, StringTable.equal(strings[slot], utf8) { return Int(indices[slot]) }
                slot = (slot + 1) & mask
            }
            indices[slot] = Int32(next)
            hashes[slot] = h
            strings[slot] = string
            count += 1
            if count * 4 > mask * 3 { grow() }
            return next
        }

        @inline(__always)
        private static func equal(_ s: String, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
            let view = s.utf8
            guard view.count == utf8.count else { return false }
            if utf8.isEmpty { return true }
            return view.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, utf8.baseAddress!, utf8.count) == 0 }
                ?? view.elementsEqual(utf8)
        }

        private mutating func grow() {
            let size = (mask + 1) * 2
            var newIndices = [Int32](repeating: -1, count: size)
            var newHashes = [UInt64](repeating: 0, count: size)
            var newStrings = [String](repeating: "", count: size)
            for old in 0...mask where indices[old] >= 0 {
                var slot = Int(truncatingIfNeeded: hashes[old]) & (size - 1)
                while newIndices[slot] >= 0 { slot = (slot + 1) & (size - 1) }
                newIndices[slot] = indices[old]
                newHashes[slot] = hashes[old]
                newStrings[slot] = strings[old]
            }
            mask = size - 1
            indices = newIndices
            hashes = newHashes
            strings = newStrings
        }
    }

    /// A collection waiting to be written once the reference width is known.
    struct PendingCollection {
        var index: Int
        var marker: UInt8
        var refStart: Int
        var count: Int
    }

    /// Scalars are written the moment they are first seen; collections, which need the final
    /// reference width, follow them. The offset table maps each object index to its position,
    /// so this order is as valid as any and keeps a single pass over the value tree.
    struct Writer {
        var out: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        var collections: [PendingCollection] = []
        var refs: [Int] = []
        var unique: [ScalarKey: Int] = [:]
        var strings = StringTable()
        /// Objects are only ever appended to `out`, so its bytes up to `emitted` are final and
        /// can be handed to `onChunk` in `chunkSize` pieces while the value is being flattened.
        var chunkSize = Int.max
        var emitted = 0
        var onChunk: ((ArraySlice<UInt8>) -> Void)?

        @inline(__always)
        mutating func emitFullChunks() {
            guard out.count - emitted >= chunkSize, let onChunk else { return }
            while out.count - emitted >= chunkSize {
                onChunk(out[emitted..<(emitted + chunkSize)])
                emitted += chunkSize
            }
        }

        mutating func flatten(_ value: PlistValue) -> Int {
            let key: ScalarKey
            switch value {
            case .array(let items), .set(let items):
                let index = offsets.count
                offsets.append(0)
                let isSet: Bool
                if case .set = value { isSet = true } else { isSet = false }
                let start = refs.count
                collections.append(PendingCollection(index: index, marker: isSet ? 0xC : 0xA, refStart: start, count: items.count))
                refs.append(contentsOf: repeatElement(0, count: items.count))
                for i in items.indices { refs[start + i] = flatten(items[i]) }
                return index
            case .dict(let dict):
                let index = offsets.count
                offsets.append(0)
                let start = refs.count
                let n = dict.count
                collections.append(PendingCollection(index: index, marker: 0xD, refStart: start, count: n))
                refs.append(contentsOf: repeatElement(0, count: n * 2))
                let sorted = BinaryPlist.sortedIndices(dict)
                for (i, at) in sorted.enumerated() {
                    refs[start + i] = flatten(.string(dict[at].key))
                }
                for (i, at) in sorted.enumerated() {
                    refs[start + n + i] = flatten(dict[at].value)
                }
                return index
            case .bool(let b): key = .bool(b)
            case .int(let i): key = .int(i)
            case .uint(let u): key = u <= UInt64(Int64.max) ? .int(Int64(u)) : .uint(u)
            case .real(let r): key = .real(r.bitPattern)
            case .date(let d): key = .date(d.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let d): key = .data(d)
            case .string(let s): return internString(s)
            case .uid(let u): key = .uid(u)
            }
            return internScalar(key, value)
        }

        /// The object index of string `s`: the one already written with the same UTF-8 bytes,
        /// or a new one written now.
        @inline(__always)
        mutating func internString(_ s: String) -> Int {
            let next = offsets.count
            let found = s.utf8.withContiguousStorageIfAvailable { utf8 -> Int in
                let index = strings.findOrInsert(utf8, s, next: next)
                if index == next {
                    offsets.append(out.count)
                    Writer.writeString(utf8, into: &out)
                    emitFullChunks()
                }
                return index
            }
            if let found { return found }
            var copy = s
            copy.makeContiguousUTF8()
            return internString(copy)
        }

        /// The object index of the non-string scalar `value` (whose uniquing key is `key`): the
        /// one already written for an equal scalar, or a new one written now.
        @inline(__always)
        mutating func internScalar(_ key: ScalarKey, _ value: PlistValue) -> Int {
            let next = offsets.count
            let index = Writer.claim(&unique[key, default: -1], next)
            if index == next {
                offsets.append(out.count)
                Writer.writeScalar(value, into: &out)
                emitFullChunks()
            }
            return index
        }

        /// One hash lookup for "find or insert": `slot` is the dictionary's storage for the key.
        @inline(__always)
        static func claim(_ slot: inout Int, _ next: Int) -> Int {
            if slot < 0 { slot = next }
            return slot
        }

        mutating func serialise() -> [UInt8] {
            // Apple's reader requires 2^(8·refSize) > object count and 2^(8·offsetSize) > the table's offset.
            let refSize = Writer.width(UInt64(offsets.count))
            out.reserveCapacity(out.count + refs.count * refSize + collections.count * 3 + offsets.count * 4 + 32)
            for c in collections {
                offsets[c.index] = out.count
                Writer.writeHeader(c.marker, count: c.count, into: &out)
                let n = c.marker == 0xD ? c.count * 2 : c.count
                for i in c.refStart..<(c.refStart + n) {
                    Writer.writeBE(UInt64(refs[i]), width: refSize, into: &out)
                }
            }
            let tableOffset = out.count
            let offsetSize = Writer.width(UInt64(tableOffset))
            for o in offsets { Writer.writeBE(UInt64(o), width: offsetSize, into: &out) }
            out.append(contentsOf: repeatElement(0, count: 6))
            out.append(UInt8(offsetSize))
            out.append(UInt8(refSize))
            Writer.writeBE(UInt64(offsets.count), width: 8, into: &out)
            Writer.writeBE(0, width: 8, into: &out)
            Writer.writeBE(UInt64(tableOffset), width: 8, into: &out)
            return out
        }

        static func width(_ max: UInt64) -> Int {
            if max <= 0xFF { return 1 }
            if max <= 0xFFFF { return 2 }
            if max <= 0xFFFF_FFFF { return 4 }
            return 8
        }

        @inline(__always)
        static func writeBE(_ v: UInt64, width: Int, into out: inout [UInt8]) {
            var shift = (width - 1) * 8
            while shift >= 0 {
                out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
                shift -= 8
            }
        }

        static func writeHeader(_ marker: UInt8, count: Int, into out: inout [UInt8]) {
            if count < 15 {
                out.append(marker << 4 | UInt8(count))
            } else {
                out.append(marker << 4 | 0x0F)
                writeInt(UInt64(count), into: &out)
            }
        }

        static func writeInt(_ v: UInt64, into out: inout [UInt8]) {
            let w = width(v)
            out.append(0x10 | UInt8(w.trailingZeroBitCount))
            writeBE(v, width: w, into: &out)
        }

        static func writeScalar(_ value: PlistValue, into out: inout [UInt8]) {
            switch value {
            case .bool(let b): out.append(b ? 0x09 : 0x08)
            case .int(let i):
                if i < 0 {
                    out.append(0x13)
                    writeBE(UInt64(bitPattern: i), width: 8, into: &out)
                } else {
                    writeInt(UInt64(i), into: &out)
                }
            case .uint(let u):
                if u <= UInt64(Int64.max) {
                    writeInt(u, into: &out)
                } else {
                    out.append(0x14)
                    writeBE(0, width: 8, into: &out)
                    writeBE(u, width: 8, into: &out)
                }
            case .real(let r):
                out.append(0x23)
                writeBE(r.bitPattern, width: 8, into: &out)
            case .date(let d):
                out.append(0x33)
                writeBE(d.timeIntervalSinceReferenceDate.bitPattern, width: 8, into: &out)
            case .data(let d):
                writeHeader(0x4, count: d.count, into: &out)
                out.append(contentsOf: d)
            case .string:
                preconditionFailure("strings are written by flatten()")
            case .uid(let u):
                let w = width(u)
                out.append(0x80 | UInt8(w - 1))
                writeBE(u, width: w, into: &out)
            case .array, .set, .dict:
                preconditionFailure("collections are written by serialise()")
            }
        }

        /// Writes one string: as ASCII (0x5_) when it is, else as UTF-16BE (0x6_). Eight bytes at
        /// a time where it can: the count of UTF-16 units, and runs of ASCII in a non-ASCII
        /// string; one- and two-byte sequences (Latin, Greek, Cyrillic, Hebrew, Arabic text) are
        /// decoded without a branch between them, which mixed text mispredicts.
        static func writeString(_ utf8: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
            let n = utf8.count
            guard n > 0, let base = utf8.baseAddress else {
                writeHeader(0x5, count: 0, into: &out)
                return
            }
            let raw = UnsafeRawPointer(base)
            let high: UInt64 = 0x8080_8080_8080_8080
            // UTF-16 units: one per byte that is not a continuation byte (10xxxxxx), and one
            // more per four-byte sequence (11110xxx, a surrogate pair).
            var continuations = 0
            var fourByteLeads = 0
            var seenHigh: UInt64 = 0
            var i = 0
            while i + 8 <= n {
                let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let h = w & high
                if h != 0 {
                    seenHigh |= h
                    // Bit 7 of each byte: set, with bit 6 clear (continuation); set with bits 6, 5
                    // and 4 (a four-byte lead). Shifting left moves a byte's lower bits up within it.
                    continuations &+= (h & ~(w << 1)).nonzeroBitCount
                    fourByteLeads &+= (h & (w << 1) & (w << 2) & (w << 3)).nonzeroBitCount
                }
                i += 8
            }
            while i < n {
                let b = base[i]
                if b >= 0x80 {
                    seenHigh |= 0x80
                    if b & 0xC0 == 0x80 { continuations += 1 }
                    if b >= 0xF0 { fourByteLeads += 1 }
                }
                i += 1
            }
            if seenHigh == 0 {
                writeHeader(0x5, count: n, into: &out)
                out.append(contentsOf: utf8)
                return
            }
            let units = n - continuations + fourByteLeads
            writeHeader(0x6, count: units, into: &out)
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: units * 2))
            out.withUnsafeMutableBufferPointer { buf in
                let end = buf.baseAddress! + start + units * 2
                var o = buf.baseAddress! + start
                @inline(__always) func put(_ u: UInt32) {
                    o[0] = UInt8(truncatingIfNeeded: u >> 8)
                    o[1] = UInt8(truncatingIfNeeded: u)
                    o += 2
                }
                var i = 0
                while i < n {
                    if i + 8 <= n {
                        let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                        if w & high == 0 {
                            // Eight ASCII bytes: each becomes 00 xx, four to a word.
                            let out = UnsafeMutableRawPointer(o)
                            out.storeBytes(of: Writer.widen(w).littleEndian, as: UInt64.self)
                            out.storeBytes(of: Writer.widen(w >> 32).littleEndian, toByteOffset: 8, as: UInt64.self)
                            o += 16
                            i += 8
                            continue
                        }
                    }
                    let b0 = UInt32(base[i])
                    if b0 < 0xE0 {
                        // One byte (ASCII) or two (110xxxxx 10xxxxxx), chosen without a branch;
                        // the second byte is read only inside the string.
                        let two = b0 >> 7
                        let b1 = UInt32(base[min(i + 1, n - 1)])
                        let decoded = (b0 & 0x1F) << 6 | b1 & 0x3F
                        put(two != 0 ? decoded : b0)
                        i += 1 + Int(two)
                    } else if b0 < 0xF0 {
                        put((b0 & 0x0F) << 12 | (UInt32(base[i + 1]) & 0x3F) << 6 | UInt32(base[i + 2]) & 0x3F)
                        i += 3
                    } else {
                        let scalar = (b0 & 0x07) << 18 | (UInt32(base[i + 1]) & 0x3F) << 12
                            | (UInt32(base[i + 2]) & 0x3F) << 6 | UInt32(base[i + 3]) & 0x3F
                        let v = scalar - 0x10000
                        put(0xD800 | v >> 10)
                        put(0xDC00 | v & 0x3FF)
                        i += 4
                    }
                }
                precondition(o == end, "UTF-16 unit count")
            }
        }

        /// The low four bytes of `w` (little-endian order), each as a big-endian UTF-16 unit:
        /// bytes a b c d become 00 a 00 b 00 c 00 d in memory once stored little-endian.
        @inline(__always)
        static func widen(_ w: UInt64) -> UInt64 {
            var x = w & 0xFFFF_FFFF
            x = (x | x << 16) & 0x0000_FFFF_0000_FFFF
            x = (x | x << 8) & 0x00FF_00FF_00FF_00FF
            return x << 8
        }
    }
}

extension BinaryPlist {
    /// The positions of `dict`'s entries in the order of String's `<` on their keys, found
    /// faster: the first sixteen bytes of a key, when they are ASCII, are carried as a pair of
    /// big-endian numbers, and two keys whose pairs differ are ordered by them exactly as `<`
    /// would order them (ASCII is in scalar order, and nothing later can change an ASCII
    /// character: see ``asciiPrefix(_:)``). Equal pairs, or keys without one, fall back to `<`.
    /// Sorting (prefix, position) triples moves no strings and retains nothing.
    static func sortedIndices(_ dict: [String: PlistValue]) -> [Dictionary<String, PlistValue>.Index] {
        var entries: [(hi: UInt64, lo: UInt64, index: Dictionary<String, PlistValue>.Index)] = []
        entries.reserveCapacity(dict.count)
        var i = dict.startIndex
        while i != dict.endIndex {
            let p = asciiPrefix(dict[i].key)
            entries.append((p.hi, p.lo, i))
            dict.formIndex(after: &i)
        }
        entries.sort { a, b in
            if a.hi != .max, b.hi != .max, a.hi != b.hi || a.lo != b.lo {
                return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo
            }
            return dict[a.index].key < dict[b.index].key
        }
        return entries.map(\.index)
    }

    /// The first sixteen bytes of `key`, zero-padded, as two big-endian numbers; `hi` is `.max`
    /// (which no ASCII bytes make) when the prefix cannot order the key: one of those bytes is
    /// not ASCII, or the byte after them is not, since a combining mark there would join the
    /// last ASCII character (`<` compares canonical forms: "e" + U+0301 is "é").
    static func asciiPrefix(_ key: String) -> (hi: UInt64, lo: UInt64) {
        let unusable: (hi: UInt64, lo: UInt64) = (.max, .max)
        return key.utf8.withContiguousStorageIfAvailable { bytes -> (hi: UInt64, lo: UInt64) in
            if bytes.count > 16, bytes[16] >= 0x80 { return unusable }
            var hi: UInt64 = 0
            var lo: UInt64 = 0
            for i in 0..<16 {
                let b: UInt8 = i < bytes.count ? bytes[i] : 0
                if b >= 0x80 { return unusable }
                if i < 8 { hi = hi << 8 | UInt64(b) } else { lo = lo << 8 | UInt64(b) }
            }
            return (hi, lo)
        } ?? unusable
    }
}

extension BinaryPlist {
    /// Writes a document object by object, for a caller that walks its own types instead of
    /// building a ``PlistValue`` tree first: it must visit objects in the order ``encode(_:)``
    /// flattens them (a collection, then a dictionary's keys in sorted order, then its values
    /// in that order, depth first), and the bytes are then exactly those ``encode(_:)`` writes
    /// for the same value. The first object visited is the top one.
    package struct Builder {
        var writer = Writer()

        package init() {}

        /// The reference slots of a collection begun with ``array(count:)`` or ``dictionary(count:)``.
        package struct Slots {
            let refStart: Int
            let count: Int
        }

        /// A general value, flattened as ``encode(_:)`` would; its object index.
        package mutating func value(_ v: PlistValue) -> Int { writer.flatten(v) }

        /// A string (equal strings are one object); its object index.
        package mutating func string(_ s: String) -> Int { writer.internString(s) }

        /// An integer (equal integers are one object); its object index.
        package mutating func int(_ i: Int64) -> Int { writer.internScalar(.int(i), .int(i)) }

        /// Begins an array of `count` elements; its slots are filled by ``setElement(_:_:_:)``.
        package mutating func array(count: Int) -> (index: Int, slots: Slots) {
            begin(marker: 0xA, count: count, refs: count)
        }

        /// Begins a dictionary of `count` pairs; its slots are filled by ``setKey(_:_:_:)`` and
        /// ``setValue(_:_:_:)``, keys in sorted order.
        package mutating func dictionary(count: Int) -> (index: Int, slots: Slots) {
            begin(marker: 0xD, count: count, refs: count * 2)
        }

        private mutating func begin(marker: UInt8, count: Int, refs n: Int) -> (index: Int, slots: Slots) {
            let index = writer.offsets.count
            writer.offsets.append(0)
            let start = writer.refs.count
            writer.collections.append(PendingCollection(index: index, marker: marker, refStart: start, count: count))
            writer.refs.append(contentsOf: repeatElement(0, count: n))
            return (index, Slots(refStart: start, count: count))
        }

        @inline(__always)
        package mutating func setElement(_ slots: Slots, _ i: Int, _ ref: Int) { writer.refs[slots.refStart + i] = ref }
        @inline(__always)
        package mutating func setKey(_ slots: Slots, _ i: Int, _ ref: Int) { writer.refs[slots.refStart + i] = ref }
        @inline(__always)
        package mutating func setValue(_ slots: Slots, _ i: Int, _ ref: Int) { writer.refs[slots.refStart + slots.count + i] = ref }

        /// Reserves room for about `bytes` of objects and `objects` objects.
        package mutating func reserve(bytes: Int, objects: Int) {
            writer.out.reserveCapacity(bytes)
            writer.offsets.reserveCapacity(objects)
            writer.strings = StringTable(expected: objects)
        }

        /// The document's bytes.
        package mutating func finish() -> [UInt8] { writer.serialise() }
    }
}
