import Foundation

/// The bplist00 binary property list codec.
public enum BinaryPlist {
    /// The deepest nesting of arrays, sets and dictionaries the reader accepts.
    package static let maxDepth = 512

    /// Decodes a bplist00 document, rejecting anything malformed with the byte offset of the fault.
    public static func decode(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        let result: Result<PlistValue, PlistError> = bytes.withUnsafeBytes { raw in
            do throws(PlistError) {
                var reader = try Reader(raw)
                return .success(try reader.decodeTop())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Decodes a bplist00 document held in `data`.
    public static func decode(_ data: Data) throws(PlistError) -> PlistValue {
        let result: Result<PlistValue, PlistError> = data.withUnsafeBytes { raw in
            do throws(PlistError) {
                var reader = try Reader(raw)
                return .success(try reader.decodeTop())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension BinaryPlist {
    struct Reader {
        let base: UnsafeRawPointer
        let length: Int
        let offsetIntSize: Int
        let refSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int
        /// Objects on the current path from the top object, for cycle detection.
        var onPath: [Bool]
        /// Remaining node visits before the document counts as a reference bomb.
        var budget: Int

        init(_ raw: UnsafeRawBufferPointer) throws(PlistError) {
            length = raw.count
            guard length >= 8, let b = raw.baseAddress else {
                throw PlistError(.truncated, "bplist: file is \(raw.count) bytes, too short for a header", offset: 0)
            }
            base = b
            let magic: [UInt8] = Array("bplist00".utf8)
            for i in 0..<8 where raw[i] != magic[i] {
                throw PlistError(.badMagic, "bplist: bad magic, expected \"bplist00\"", offset: i)
            }
            guard length >= 8 + 1 + 1 + 32 else {
                throw PlistError(.truncated, "bplist: file is \(length) bytes, too short for an object, offset table and trailer", offset: length)
            }
            let t = length - 32
            offsetIntSize = Int(raw[t + 6])
            refSize = Int(raw[t + 7])
            let count = Self.be64(b + t + 8)
            let top = Self.be64(b + t + 16)
            let table = Self.be64(b + t + 24)
            guard (1...8).contains(offsetIntSize) else {
                throw PlistError(.badTrailer, "bplist: trailer offset size \(offsetIntSize) is not 1...8", offset: t + 6)
            }
            guard (1...8).contains(refSize) else {
                throw PlistError(.badTrailer, "bplist: trailer object reference size \(refSize) is not 1...8", offset: t + 7)
            }
            guard count >= 1, count <= UInt64(t) else {
                throw PlistError(.badTrailer, "bplist: trailer object count \(count) is impossible for a \(length)-byte file", offset: t + 8)
            }
            guard top < count else {
                throw PlistError(.badTrailer, "bplist: trailer top object \(top) is not below the object count \(count)", offset: t + 16)
            }
            guard table >= 9, table < UInt64(t) else {
                throw PlistError(.badTrailer, "bplist: trailer offset table position \(table) is outside 9..<\(t)", offset: t + 24)
            }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
            let (tableBytes, overflow) = objectCount.multipliedReportingOverflow(by: offsetIntSize)
            guard !overflow, offsetTable + tableBytes <= t else {
                throw PlistError(.badTrailer, "bplist: offset table of \(objectCount) entries at \(offsetTable) runs past the trailer", offset: t + 8)
            }
            guard offsetTable + tableBytes == t else {
                throw PlistError(.trailingBytes, "bplist: \(t - offsetTable - tableBytes) unexpected bytes between the offset table and the trailer", offset: offsetTable + tableBytes)
            }
            guard refSize >= 8 || objectCount < 1 << (8 * refSize) else {
                throw PlistError(.badTrailer, "bplist: \(objectCount) objects need references wider than \(refSize) bytes", offset: t + 7)
            }
            guard offsetIntSize >= 8 || offsetTable < 1 << (8 * offsetIntSize) else {
                throw PlistError(.badTrailer, "bplist: offset table at \(offsetTable) needs offsets wider than \(offsetIntSize) bytes", offset: t + 6)
            }
            onPath = [Bool](repeating: false, count: objectCount)
            budget = length &* 8 &+ 1024
        }

        @inline(__always)
        static func be64(_ p: UnsafeRawPointer) -> UInt64 {
            UInt64(bigEndian: p.loadUnaligned(as: UInt64.self))
        }

        @inline(__always)
        func readUInt(_ at: Int, _ size: Int) -> UInt64 {
            let p = base + at
            switch size {
            case 1: return UInt64(p.load(as: UInt8.self))
            case 2: return UInt64(UInt16(bigEndian: p.loadUnaligned(as: UInt16.self)))
            case 4: return UInt64(UInt32(bigEndian: p.loadUnaligned(as: UInt32.self)))
            case 8: return UInt64(bigEndian: p.loadUnaligned(as: UInt64.self))
            default:
                var v: UInt64 = 0
                for i in 0..<size { v = v << 8 | UInt64(p.load(fromByteOffset: i, as: UInt8.self)) }
                return v
            }
        }

        func objectOffset(_ index: Int) throws(PlistError) -> Int {
            let at = offsetTable + index * offsetIntSize
            let off = readUInt(at, offsetIntSize)
            guard off >= 8, off < UInt64(offsetTable) else {
                throw PlistError(.badOffset, "bplist: object \(index) has offset \(off), outside the object area 8..<\(offsetTable)", offset: at)
            }
            return Int(off)
        }

        mutating func decodeTop() throws(PlistError) -> PlistValue {
            try decodeObject(topObject, depth: 0)
        }

        /// Reads the count in a marker's low nibble, or the integer that follows it.
        /// Returns the count and the offset of the payload.
        @inline(__always)
        func readCount(_ marker: UInt8, at off: Int) throws(PlistError) -> (Int, Int) {
            let low = Int(marker & 0x0F)
            if low != 0x0F { return (low, off + 1) }
            let intAt = off + 1
            guard intAt < offsetTable else {
                throw PlistError(.truncated, "bplist: count of object runs into the offset table", offset: intAt)
            }
            let intMarker = base.load(fromByteOffset: intAt, as: UInt8.self)
            guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
                throw PlistError(.badCount, "bplist: extended count has marker 0x\(String(intMarker, radix: 16)), expected an integer of 1, 2, 4 or 8 bytes", offset: intAt)
            }
            let size = 1 << Int(intMarker & 0x0F)
            guard intAt + 1 + size <= offsetTable else {
                throw PlistError(.truncated, "bplist: extended count runs into the offset table", offset: intAt)
            }
            let value = readUInt(intAt + 1, size)
            guard value <= UInt64(offsetTable) else {
                throw PlistError(.badCount, "bplist: count \(value) is larger than the file could hold", offset: intAt)
            }
            return (Int(value), intAt + 1 + size)
        }

        @inline(__always)
        func need(_ bytes: Int, at start: Int, objectAt off: Int, what: String) throws(PlistError) {
            guard bytes <= offsetTable - start else {
                throw PlistError(.badCount, "bplist: \(what) of \(bytes) bytes runs past the object area", offset: off)
            }
        }

        @inline(__always)
        func ref(_ at: Int) throws(PlistError) -> Int {
            let r = readUInt(at, refSize)
            guard r < UInt64(objectCount) else {
                throw PlistError(.badReference, "bplist: object reference \(r) is not below the object count \(objectCount)", offset: at)
            }
            return Int(r)
        }

        mutating func decodeObject(_ index: Int, depth: Int) throws(PlistError) -> PlistValue {
            budget -= 1
            guard budget > 0 else {
                throw PlistError(.referenceBomb, "bplist: shared references expand to more objects than the file could hold", offset: offsetTable + index * offsetIntSize)
            }
            let off = try objectOffset(index)
            let marker = base.load(fromByteOffset: off, as: UInt8.self)
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                case 0x00: throw PlistError(.unsupported, "bplist: null objects are not allowed in a property list", offset: off)
                case 0x0F: throw PlistError(.badMarker, "bplist: fill byte where an object should be", offset: off)
                default: throw PlistError(.badMarker, "bplist: unknown marker 0x\(String(marker, radix: 16))", offset: off)
                }
            case 0x1:
                let n = Int(marker & 0x0F)
                guard n <= 4 else {
                    throw PlistError(.badNumber, "bplist: integer of 2^\(n) bytes; only 1, 2, 4, 8 and 16 exist", offset: off)
                }
                let size = 1 << n
                try need(size, at: off + 1, objectAt: off, what: "integer")
                switch size {
                case 8: return .int(Int64(bitPattern: readUInt(off + 1, 8)))
                case 16:
                    let high = readUInt(off + 1, 8)
                    let low = readUInt(off + 9, 8)
                    if high == 0 { return .integer(low) }
                    if high == UInt64.max, Int64(bitPattern: low) < 0 { return .int(Int64(bitPattern: low)) }
                    throw PlistError(.badNumber, "bplist: 128-bit integer does not fit in 64 bits", offset: off)
                default: return .int(Int64(readUInt(off + 1, size)))
                }
            case 0x2:
                switch marker & 0x0F {
                case 2:
                    try need(4, at: off + 1, objectAt: off, what: "real")
                    return .real(Double(Float(bitPattern: UInt32(readUInt(off + 1, 4)))))
                case 3:
                    try need(8, at: off + 1, objectAt: off, what: "real")
                    return .real(Double(bitPattern: readUInt(off + 1, 8)))
                default:
                    throw PlistError(.badNumber, "bplist: real of 2^\(marker & 0x0F) bytes; only 4 and 8 exist", offset: off)
                }
            case 0x3:
                guard marker == 0x33 else {
                    throw PlistError(.badMarker, "bplist: date marker 0x\(String(marker, radix: 16)), expected 0x33", offset: off)
                }
                try need(8, at: off + 1, objectAt: off, what: "date")
                let seconds = Double(bitPattern: readUInt(off + 1, 8))
                // CoreFoundation and plistlib cannot represent these either; a date past them traps later.
                guard seconds.isFinite, abs(seconds) <= PlistDates.maximumMagnitude else {
                    throw PlistError(.badValue, "bplist: date \(seconds) seconds from 2001 is not a usable date (must be finite and within ±\(Int(PlistDates.maximumMagnitude)) s)", offset: off)
                }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case 0x4:
                let (count, start) = try readCount(marker, at: off)
                try need(count, at: start, objectAt: off, what: "data")
                return .data(Data(bytes: base + start, count: count))
            case 0x5:
                return .string(try asciiString(marker, at: off))
            case 0x6:
                return .string(try utf16String(marker, at: off))
            case 0x8:
                let size = Int(marker & 0x0F) + 1
                guard size <= 8 else {
                    throw PlistError(.badNumber, "bplist: UID of \(size) bytes; at most 8 exist", offset: off)
                }
                try need(size, at: off + 1, objectAt: off, what: "UID")
                return .uid(readUInt(off + 1, size))
            case 0xA, 0xC:
                let (count, start) = try readCount(marker, at: off)
                let (bytes, overflow) = count.multipliedReportingOverflow(by: refSize)
                guard !overflow else { throw PlistError(.badCount, "bplist: count \(count) overflows", offset: off) }
                try need(bytes, at: start, objectAt: off, what: marker >> 4 == 0xA ? "array" : "set")
                try enter(index, depth: depth, at: off)
                var items: [PlistValue] = []
                items.reserveCapacity(count)
                var at = start
                for _ in 0..<count {
                    items.append(try decodeObject(try ref(at), depth: depth + 1))
                    at += refSize
                }
                onPath[index] = false
                return marker >> 4 == 0xA ? .array(items) : .set(items)
            case 0xD:
                let (count, start) = try readCount(marker, at: off)
                let (bytes, overflow) = count.multipliedReportingOverflow(by: refSize * 2)
                guard !overflow else { throw PlistError(.badCount, "bplist: count \(count) overflows", offset: off) }
                try need(bytes, at: start, objectAt: off, what: "dictionary")
                try enter(index, depth: depth, at: off)
                var dict: [String: PlistValue] = [:]
                dict.reserveCapacity(count)
                var keyAt = start
                var valueAt = start + count * refSize
                for _ in 0..<count {
                    let key = try dictKey(try ref(keyAt), refAt: keyAt)
                    let value = try decodeObject(try ref(valueAt), depth: depth + 1)
                    if dict.updateValue(value, forKey: key) != nil {
                        throw PlistError(.duplicateKey, "bplist: dictionary has the key \"\(key)\" twice", offset: keyAt)
                    }
                    keyAt += refSize
                    valueAt += refSize
                }
                onPath[index] = false
                return .dict(dict)
            default:
                throw PlistError(.badMarker, "bplist: unknown marker 0x\(String(marker, radix: 16))", offset: off)
            }
        }

        @inline(__always)
        mutating func enter(_ index: Int, depth: Int, at off: Int) throws(PlistError) {
            guard depth < BinaryPlist.maxDepth else {
                throw PlistError(.tooDeep, "bplist: collections nest deeper than \(BinaryPlist.maxDepth)", offset: off)
            }
            guard !onPath[index] else {
                throw PlistError(.cycle, "bplist: object \(index) contains itself", offset: off)
            }
            onPath[index] = true
        }

        mutating func dictKey(_ index: Int, refAt: Int) throws(PlistError) -> String {
            budget -= 1
            let off = try objectOffset(index)
            let marker = base.load(fromByteOffset: off, as: UInt8.self)
            switch marker >> 4 {
            case 0x5: return try asciiString(marker, at: off)
            case 0x6: return try utf16String(marker, at: off)
            default:
                throw PlistError(.badKey, "bplist: dictionary key is not a string (marker 0x\(String(marker, radix: 16)))", offset: refAt)
            }
        }

        func asciiString(_ marker: UInt8, at off: Int) throws(PlistError) -> String {
            let (count, start) = try readCount(marker, at: off)
            try need(count, at: start, objectAt: off, what: "string")
            let p = (base + start).assumingMemoryBound(to: UInt8.self)
            // Word-at-a-time check that every byte is 7-bit.
            var i = 0
            var bits: UInt64 = 0
            while i + 8 <= count {
                bits |= UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
                i += 8
            }
            while i < count { bits |= UInt64(p[i]); i += 1 }
            guard bits & 0x8080_8080_8080_8080 == 0 else {
                throw PlistError(.badString, "bplist: ASCII string holds a byte above 0x7F", offset: off)
            }
            return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
        }

        func utf16String(_ marker: UInt8, at off: Int) throws(PlistError) -> String {
            let (count, start) = try readCount(marker, at: off)
            let (bytes, overflow) = count.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw PlistError(.badCount, "bplist: count \(count) overflows", offset: off) }
            try need(bytes, at: start, objectAt: off, what: "UTF-16 string")
            let src = base + start
            var lone = -1  // the index of an unpaired surrogate, which CoreFoundation and plistlib refuse
            let text = String(unsafeUninitializedCapacity: count * 3) { out in
                var o = 0
                var i = 0
                while i < count {
                    let u = UInt32(UInt16(bigEndian: src.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self)))
                    i += 1
                    var scalar = u
                    if u < 0x80 {
                        out[o] = UInt8(u); o += 1
                        continue
                    }
                    if u & 0xFC00 == 0xD800, i < count {
                        let lo = UInt32(UInt16(bigEndian: src.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self)))
                        if lo & 0xFC00 == 0xDC00 {
                            scalar = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
                            i += 1
                        } else {
                            lone = i - 1
                            return 0
                        }
                    } else if u & 0xF800 == 0xD800 {
                        lone = i - 1
                        return 0
                    }
                    if scalar < 0x800 {
                        out[o] = UInt8(0xC0 | scalar >> 6)
                        out[o + 1] = UInt8(0x80 | scalar & 0x3F)
                        o += 2
                    } else if scalar < 0x10000 {
                        out[o] = UInt8(0xE0 | scalar >> 12)
                        out[o + 1] = UInt8(0x80 | (scalar >> 6) & 0x3F)
                        out[o + 2] = UInt8(0x80 | scalar & 0x3F)
                        o += 3
                    } else {
                        out[o] = UInt8(0xF0 | scalar >> 18)
                        out[o + 1] = UInt8(0x80 | (scalar >> 12) & 0x3F)
                        out[o + 2] = UInt8(0x80 | (scalar >> 6) & 0x3F)
                        out[o + 3] = UInt8(0x80 | scalar & 0x3F)
                        o += 4
                    }
                }
                return o
            }
            guard lone < 0 else {
                throw PlistError(.badString, "bplist: UTF-16 string has an unpaired surrogate at unit \(lone) (0x\(String(UInt16(bigEndian: src.loadUnaligned(fromByteOffset: lone * 2, as: UInt16.self)), radix: 16)))", offset: off)
            }
            return text
        }
    }
}
