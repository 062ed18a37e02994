import Foundation

extension BinaryPlist {
    /// Encodes `value` as bplist00: dictionary keys sorted, equal scalars stored once,
    /// and the smallest reference and offset widths that fit.
    package static func encode(_ value: PlistValue) -> [UInt8] {
        var writer = Writer()
        _ = writer.flatten(value)
        return writer.serialise()
    }
}

extension BinaryPlist {
    /// A scalar's identity for uniquing: equal by value and type, reals and dates by bit pattern.
    fileprivate enum ScalarKey: Hashable {
        case bool(Bool), int(Int64), uint(UInt64), real(UInt64), date(UInt64)
        case data(Data), string(String), uid(UInt64)
    }

    fileprivate enum Object {
        case scalar(PlistValue)
        /// A collection's marker nibble and its slice of the shared reference pool.
        case collection(marker: UInt8, refStart: Int, count: Int)
    }

    fileprivate struct Writer {
        var objects: [Object] = []
        var refs: [Int] = []
        var unique: [ScalarKey: Int] = [:]

        mutating func flatten(_ value: PlistValue) -> Int {
            let key: ScalarKey
            switch value {
            case .array(let items), .set(let items):
                let index = objects.count
                let isSet: Bool
                if case .set = value { isSet = true } else { isSet = false }
                let start = refs.count
                objects.append(.collection(marker: isSet ? 0xC : 0xA, refStart: start, count: items.count))
                refs.append(contentsOf: repeatElement(0, count: items.count))
                for (i, item) in items.enumerated() { refs[start + i] = flatten(item) }
                return index
            case .dict(let dict):
                let index = objects.count
                let start = refs.count
                let n = dict.count
                objects.append(.collection(marker: 0xD, refStart: start, count: n))
                refs.append(contentsOf: repeatElement(0, count: n * 2))
                let sorted = dict.sorted { $0.key < $1.key }
                for (i, entry) in sorted.enumerated() {
                    refs[start + i] = flatten(.string(entry.key))
                }
                for (i, entry) in sorted.enumerated() {
                    refs[start + n + i] = flatten(entry.value)
                }
                return index
            case .bool(let b): key = .bool(b)
            case .int(let i): key = .int(i)
            case .uint(let u): key = u <= UInt64(Int64.max) ? .int(Int64(u)) : .uint(u)
            case .real(let r): key = .real(r.bitPattern)
            case .date(let d): key = .date(d.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let d): key = .data(d)
            case .string(let s): key = .string(s)
            case .uid(let u): key = .uid(u)
            }
            let next = objects.count
            let index = unique[key, default: next]
            if index == next {
                unique[key] = next
                objects.append(.scalar(value))
            }
            return index
        }

        func serialise() -> [UInt8] {
            let refSize = Writer.width(UInt64(objects.count - 1))
            var out: [UInt8] = []
            out.reserveCapacity(64 + objects.count * 8 + refs.count * refSize)
            out.append(contentsOf: Array("bplist00".utf8))
            var offsets: [Int] = []
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(out.count)
                switch object {
                case .scalar(let v): Writer.writeScalar(v, into: &out)
                case .collection(let marker, let start, let count):
                    Writer.writeHeader(marker, count: count, into: &out)
                    let n = marker == 0xD ? count * 2 : count
                    for i in start..<(start + n) {
                        Writer.writeBE(UInt64(refs[i]), width: refSize, into: &out)
                    }
                }
            }
            let tableOffset = out.count
            let offsetSize = Writer.width(UInt64(offsets.last ?? 8))
            for o in offsets { Writer.writeBE(UInt64(o), width: offsetSize, into: &out) }
            out.append(contentsOf: repeatElement(0, count: 6))
            out.append(UInt8(offsetSize))
            out.append(UInt8(refSize))
            Writer.writeBE(UInt64(objects.count), width: 8, into: &out)
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
            case .string(let s): writeString(s, into: &out)
            case .uid(let u):
                let w = width(u)
                out.append(0x80 | UInt8(w - 1))
                writeBE(u, width: w, into: &out)
            case .array, .set, .dict:
                preconditionFailure("collections are written by serialise()")
            }
        }

        static func writeString(_ s: String, into out: inout [UInt8]) {
            var s = s
            s.withUTF8 { utf8 in
                // One pass: is it ASCII, and how many UTF-16 units does it need?
                var units = 0
                var nonASCII = false
                for b in utf8 {
                    if b & 0xC0 != 0x80 { units += 1 }
                    if b >= 0xF0 { units += 1 }
                    if b >= 0x80 { nonASCII = true }
                }
                if !nonASCII {
                    writeHeader(0x5, count: utf8.count, into: &out)
                    out.append(contentsOf: utf8)
                    return
                }
                writeHeader(0x6, count: units, into: &out)
                let start = out.count
                out.append(contentsOf: repeatElement(0, count: units * 2))
                out.withUnsafeMutableBufferPointer { buf in
                    var o = start
                    var i = 0
                    let n = utf8.count
                    @inline(__always) func put(_ u: UInt32) {
                        buf[o] = UInt8(truncatingIfNeeded: u >> 8)
                        buf[o + 1] = UInt8(truncatingIfNeeded: u)
                        o += 2
                    }
                    while i < n {
                        let b0 = UInt32(utf8[i])
                        if b0 < 0x80 {
                            put(b0); i += 1
                        } else if b0 < 0xE0 {
                            put((b0 & 0x1F) << 6 | UInt32(utf8[i + 1]) & 0x3F); i += 2
                        } else if b0 < 0xF0 {
                            put((b0 & 0x0F) << 12 | (UInt32(utf8[i + 1]) & 0x3F) << 6 | UInt32(utf8[i + 2]) & 0x3F)
                            i += 3
                        } else {
                            let scalar = (b0 & 0x07) << 18 | (UInt32(utf8[i + 1]) & 0x3F) << 12
                                | (UInt32(utf8[i + 2]) & 0x3F) << 6 | UInt32(utf8[i + 3]) & 0x3F
                            let v = scalar - 0x10000
                            put(0xD800 | v >> 10)
                            put(0xDC00 | v & 0x3FF)
                            i += 4
                        }
                    }
                }
            }
        }
    }
}
