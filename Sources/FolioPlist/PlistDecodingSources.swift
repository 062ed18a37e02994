import Foundation

/// A number as a property list holds it.
enum PlistNumber {
    case int(Int64)
    case uint(UInt64)
    case real(Double)
}

/// A dictionary or array in a ``PlistDecodingSource``: where its references start (binary) or
/// its value's index (tree), and its number of entries.
struct PlistCollection {
    var start: Int
    var count: Int
}

/// Where a ``PlistDecoder`` reads values from: the bytes of a binary plist, read lazily, or a
/// ``PlistValue`` tree. A value is named by an `Int` (a byte offset, or an index into the tree
/// source's list of values reached so far); -1 is null (a missing super decoder's entry).
/// A class, not a protocol with associated types, so the decoder's types are not generic and
/// need no run-time generic metadata look-ups per value.
class PlistDecodingSource {
    let userInfo: [CodingUserInfoKey: Any]

    init(userInfo: [CodingUserInfoKey: Any]) { self.userInfo = userInfo }

    final var null: Int { -1 }
    /// "a string", "an integer", ... for type mismatch messages.
    func describe(_ r: Int) -> String { fatalError("abstract") }
    func isNull(_ r: Int) -> Bool { fatalError("abstract") }
    func bool(_ r: Int) -> Bool? { fatalError("abstract") }
    func number(_ r: Int) throws(PlistError) -> PlistNumber? { fatalError("abstract") }
    /// The string, or nil when `r` is not a string.
    func string(_ r: Int) throws(PlistError) -> String? { fatalError("abstract") }
    /// The date, or a string to parse as one (JSON writes dates as ISO 8601 strings).
    func date(_ r: Int) throws(PlistError) -> Date? { fatalError("abstract") }
    /// The data, or a base64 string (JSON writes data so).
    func data(_ r: Int) throws(PlistError) -> Data? { fatalError("abstract") }
    func array(_ r: Int) throws(PlistError) -> PlistCollection? { fatalError("abstract") }
    func element(_ a: PlistCollection, _ i: Int) throws(PlistError) -> Int { fatalError("abstract") }
    func dict(_ r: Int) throws(PlistError) -> PlistCollection? { fatalError("abstract") }
    func lookup(_ d: PlistCollection, _ key: String, hint: inout Int) throws(PlistError) -> Int? { fatalError("abstract") }
    func keys(_ d: PlistCollection) throws(PlistError) -> [String] { fatalError("abstract") }
}

/// Reads a binary plist in place: a value is its object's byte offset, collections are read
/// through the offset table only as the decoded type asks for them, and keys are compared as
/// bytes. The input is copied once, so an escaped decoder can never read freed memory.
final class BinaryPlistSource: PlistDecodingSource {
    typealias Collection = PlistCollection

    let storage: UnsafeMutableRawBufferPointer
    let reader: BinaryPlist.Reader
    let base: UnsafeRawPointer
    let refSize: Int
    /// Remaining object visits before the document counts as a reference bomb (shared
    /// references expanded by a recursive type).
    var budget: Int

    init(_ bytes: UnsafeRawBufferPointer, userInfo: [CodingUserInfoKey: Any]) throws(PlistError) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if let src = bytes.baseAddress { storage.baseAddress!.copyMemory(from: src, byteCount: bytes.count) }
        do throws(PlistError) {
            reader = try BinaryPlist.Reader(UnsafeRawBufferPointer(rebasing: storage[0..<bytes.count]))
        } catch {
            storage.deallocate()
            throw error
        }
        base = reader.base
        refSize = reader.refSize
        budget = bytes.count &* 8 &+ 1024
        super.init(userInfo: userInfo)
    }

    deinit { storage.deallocate() }

    /// The top object.
    func top() throws(PlistError) -> Int { try reader.objectOffset(reader.topObject) }

    @inline(__always)
    func marker(_ r: Int) -> UInt8 { r >= 0 ? base.load(fromByteOffset: r, as: UInt8.self) : 0 }

    override func describe(_ r: Int) -> String {
        switch marker(r) >> 4 {
        case 0x0: return r < 0 || marker(r) == 0 ? "null" : "a boolean"
        case 0x1: return "an integer"
        case 0x2: return "a real"
        case 0x3: return "a date"
        case 0x4: return "data"
        case 0x5, 0x6: return "a string"
        case 0x8: return "a UID"
        case 0xA: return "an array"
        case 0xC: return "a set"
        case 0xD: return "a dictionary"
        default: return "an unknown object"
        }
    }

    @inline(__always)
    override func isNull(_ r: Int) -> Bool {
        let m = marker(r)
        if m == 0 { return true }
        // "$null", five ASCII bytes.
        return m == 0x55 && isNullString(r)
    }

    private func isNullString(_ r: Int) -> Bool {
        r + 6 <= reader.offsetTable && memcmp(base + r + 1, "$null", 5) == 0
    }

    @inline(__always)
    override func bool(_ r: Int) -> Bool? {
        switch marker(r) {
        case 0x08: return false
        case 0x09: return true
        default: return nil
        }
    }

    @inline(__always)
    override func number(_ r: Int) throws(PlistError) -> PlistNumber? {
        let m = marker(r)
        switch m >> 4 {
        case 0x1:
            let n = Int(m & 0x0F)
            guard n <= 4 else {
                throw PlistError(.badNumber, "bplist: integer of 2^\(n) bytes; only 1, 2, 4, 8 and 16 exist", offset: r)
            }
            let size = 1 << n
            try reader.need(size, at: r + 1, objectAt: r, what: "integer")
            switch size {
            case 8: return .int(Int64(bitPattern: reader.readUInt(r + 1, 8)))
            case 16:
                let high = reader.readUInt(r + 1, 8)
                let low = reader.readUInt(r + 9, 8)
                if high == 0 { return low <= UInt64(Int64.max) ? .int(Int64(low)) : .uint(low) }
                if high == UInt64.max, Int64(bitPattern: low) < 0 { return .int(Int64(bitPattern: low)) }
                throw PlistError(.badNumber, "bplist: 128-bit integer does not fit in 64 bits", offset: r)
            default: return .int(Int64(reader.readUInt(r + 1, size)))
            }
        case 0x2:
            switch m & 0x0F {
            case 2:
                try reader.need(4, at: r + 1, objectAt: r, what: "real")
                return .real(Double(Float(bitPattern: UInt32(reader.readUInt(r + 1, 4)))))
            case 3:
                try reader.need(8, at: r + 1, objectAt: r, what: "real")
                return .real(Double(bitPattern: reader.readUInt(r + 1, 8)))
            default:
                throw PlistError(.badNumber, "bplist: real of 2^\(m & 0x0F) bytes; only 4 and 8 exist", offset: r)
            }
        default: return nil
        }
    }

    @inline(__always)
    override func string(_ r: Int) throws(PlistError) -> String? {
        let m = marker(r)
        switch m >> 4 {
        case 0x5: return try reader.asciiString(m, at: r)
        case 0x6: return try reader.utf16String(m, at: r)
        default: return nil
        }
    }

    override func date(_ r: Int) throws(PlistError) -> Date? {
        let m = marker(r)
        if m == 0x33 {
            try reader.need(8, at: r + 1, objectAt: r, what: "date")
            let seconds = Double(bitPattern: reader.readUInt(r + 1, 8))
            guard seconds.isFinite, abs(seconds) <= PlistDates.maximumMagnitude else {
                throw PlistError(.badValue, "bplist: date \(seconds) seconds from 2001 is not a usable date", offset: r)
            }
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        return nil
    }

    override func data(_ r: Int) throws(PlistError) -> Data? {
        let m = marker(r)
        guard m >> 4 == 0x4 else { return nil }
        let (count, start) = try reader.readCount(m, at: r)
        try reader.need(count, at: start, objectAt: r, what: "data")
        return Data(bytes: base + start, count: count)
    }

    @inline(__always)
    override func array(_ r: Int) throws(PlistError) -> Collection? {
        let m = marker(r)
        guard m >> 4 == 0xA || m >> 4 == 0xC else { return nil }
        let (count, start) = try reader.readCount(m, at: r)
        let (bytes, overflow) = count.multipliedReportingOverflow(by: refSize)
        guard !overflow else { throw PlistError(.badCount, "bplist: count \(count) overflows", offset: r) }
        try reader.need(bytes, at: start, objectAt: r, what: "array")
        return Collection(start: start, count: count)
    }

    @inline(__always)
    func count(_ a: Collection) -> Int { a.count }

    @inline(__always)
    override func element(_ a: Collection, _ i: Int) throws(PlistError) -> Int {
        try resolve(a.start + i * refSize)
    }

    /// The offset of the object referenced at `refAt`, counted against the budget.
    @inline(__always)
    func resolve(_ refAt: Int) throws(PlistError) -> Int {
        budget &-= 1
        guard budget > 0 else {
            throw PlistError(.referenceBomb, "bplist: shared references expand to more objects than the file could hold", offset: refAt)
        }
        return try reader.objectOffset(try reader.ref(refAt))
    }

    @inline(__always)
    override func dict(_ r: Int) throws(PlistError) -> Collection? {
        let m = marker(r)
        guard m >> 4 == 0xD else { return nil }
        let (count, start) = try reader.readCount(m, at: r)
        let (bytes, overflow) = count.multipliedReportingOverflow(by: refSize * 2)
        guard !overflow else { throw PlistError(.badCount, "bplist: count \(count) overflows", offset: r) }
        try reader.need(bytes, at: start, objectAt: r, what: "dictionary")
        return Collection(start: start, count: count)
    }

    /// Finds `key` among the dictionary's keys, starting after the last one found (types decode
    /// their keys in about the order a sorted writer stores them). An ASCII key is compared
    /// with ASCII key objects byte for byte; anything else is compared as Strings (`==`).
    override func lookup(_ d: Collection, _ key: String, hint: inout Int) throws(PlistError) -> Int? {
        let n = d.count
        guard n > 0 else { return nil }
        var key = key
        key.makeContiguousUTF8()
        let found: Result<Int?, PlistError> = key.utf8.withContiguousStorageIfAvailable { kb in
            var bits: UInt8 = 0
            for b in kb { bits |= b }
            let ascii = bits < 0x80
            var i = hint < n ? hint : 0
            for _ in 0..<n {
                let keyRefAt = d.start + i * refSize
                do throws(PlistError) {
                    let off = try reader.objectOffset(try reader.ref(keyRefAt))
                    let m = base.load(fromByteOffset: off, as: UInt8.self)
                    var match = false
                    if ascii, m >> 4 == 0x5 {
                        let (len, start) = try reader.readCount(m, at: off)
                        if len == kb.count {
                            try reader.need(len, at: start, objectAt: off, what: "string")
                            match = len == 0 || memcmp(base + start, kb.baseAddress!, len) == 0
                        }
                    } else if m >> 4 == 0x5 || m >> 4 == 0x6 {
                        match = try string(off) == key
                    } else {
                        throw PlistError(.badKey, "bplist: dictionary key is not a string (marker 0x\(String(m, radix: 16)))", offset: keyRefAt)
                    }
                    if match {
                        hint = i + 1
                        return .success(try resolve(d.start + (n + i) * refSize))
                    }
                } catch {
                    return .failure(error)
                }
                i += 1
                if i == n { i = 0 }
            }
            return .success(nil)
        } ?? .success(nil)
        return try found.get()
    }

    override func keys(_ d: Collection) throws(PlistError) -> [String] {
        var keys: [String] = []
        keys.reserveCapacity(d.count)
        for i in 0..<d.count {
            let keyRefAt = d.start + i * refSize
            let off = try reader.objectOffset(try reader.ref(keyRefAt))
            guard let s = try string(off) else {
                throw PlistError(.badKey, "bplist: dictionary key is not a string", offset: keyRefAt)
            }
            keys.append(s)
        }
        return keys
    }
}

/// Reads a ``PlistValue`` tree (decoded XML or JSON, or a value built in code). Values are
/// named by their index in `values`, where each is put as the decoder reaches it.
final class PlistValueSource: PlistDecodingSource {
    var values: [PlistValue] = []

    /// Adds `value`, returning its name.
    func add(_ value: PlistValue) -> Int {
        values.append(value)
        return values.count - 1
    }

    @inline(__always)
    func value(_ r: Int) -> PlistValue { r >= 0 ? values[r] : .null }

    override func describe(_ r: Int) -> String {
        switch value(r) {
        case .bool: "a boolean"
        case .int, .uint: "an integer"
        case .real: "a real"
        case .date: "a date"
        case .data: "data"
        case .string: "a string"
        case .uid: "a UID"
        case .array: "an array"
        case .set: "a set"
        case .dict: "a dictionary"
        }
    }

    override func isNull(_ r: Int) -> Bool { value(r).isNull }
    override func bool(_ r: Int) -> Bool? { value(r).boolValue }

    override func number(_ r: Int) throws(PlistError) -> PlistNumber? {
        switch value(r) {
        case .int(let i): .int(i)
        case .uint(let u): .uint(u)
        case .real(let d): .real(d)
        default: nil
        }
    }

    override func string(_ r: Int) throws(PlistError) -> String? { value(r).stringValue }

    override func date(_ r: Int) throws(PlistError) -> Date? {
        switch value(r) {
        case .date(let d): d
        case .string(let s): PlistDates.parseISO8601(s)
        default: nil
        }
    }

    override func data(_ r: Int) throws(PlistError) -> Data? {
        switch value(r) {
        case .data(let d): d
        case .string(let s): Data(base64Encoded: s)
        default: nil
        }
    }

    override func array(_ r: Int) throws(PlistError) -> PlistCollection? {
        value(r).arrayValue.map { PlistCollection(start: r, count: $0.count) }
    }

    override func element(_ a: PlistCollection, _ i: Int) throws(PlistError) -> Int {
        add(values[a.start].arrayValue![i])
    }

    override func dict(_ r: Int) throws(PlistError) -> PlistCollection? {
        value(r).dictValue.map { PlistCollection(start: r, count: $0.count) }
    }

    override func lookup(_ d: PlistCollection, _ key: String, hint: inout Int) throws(PlistError) -> Int? {
        values[d.start][key].map { add($0) }
    }

    override func keys(_ d: PlistCollection) throws(PlistError) -> [String] { Array(values[d.start].dictValue!.keys) }
}
