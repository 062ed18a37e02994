import Foundation
import Testing

@testable import FolioPlist

/// Encodes, decodes, requires a strictly identical value back, and returns the encoded bytes.
@discardableResult
private func roundTrip(_ value: PlistValue, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    let bytes = BinaryPlist.encode(value)
    #expect(bytes.starts(with: Array("bplist00".utf8)), sourceLocation: sourceLocation)
    let back = try BinaryPlist.decode(bytes)
    #expect(identical(back, value), "round trip changed \(value) into \(back)", sourceLocation: sourceLocation)
    return bytes
}

/// Reads an object's count (low nibble or extended integer) at `at`; returns the count and where the payload starts.
private func objectCount(_ bytes: [UInt8], at: Int) -> (count: Int, payload: Int) {
    let low = Int(bytes[at] & 0x0F)
    if low != 0x0F { return (low, at + 1) }
    let width = 1 << Int(bytes[at + 1] & 0x0F)
    return (Int(bigEndian(bytes[(at + 2)..<(at + 2 + width)])), at + 2 + width)
}

@Suite("Binary plist: round trips of every type")
struct BinaryRoundTripTests {
    /// Integer, and the marker the smallest encoding uses (1, 2, 4 or 8 bytes; negatives always 8).
    static let integers: [(Int64, UInt8)] = [
        (0, 0x10), (1, 0x10), (14, 0x10), (15, 0x10), (255, 0x10), (256, 0x11), (65535, 0x11), (65536, 0x12),
        (0xFFFF_FFFF, 0x12), (0x1_0000_0000, 0x13), (Int64.max, 0x13), (-1, 0x13), (-255, 0x13), (-65536, 0x13),
        (Int64.min, 0x13),
    ]

    @Test("integers at every width boundary", arguments: integers)
    func integer(value: Int64, marker: UInt8) throws {
        let bytes = try roundTrip(.int(value))
        #expect(bytes[8] == marker, "int \(value) written with marker \(hex([bytes[8]]))")
        let width = 1 << Int(marker & 0x0F)
        #expect(bigEndian(bytes[9..<(9 + width)]) == UInt64(bitPattern: value) & (width == 8 ? UInt64.max : (UInt64(1) << (8 * UInt64(width))) - 1))
    }

    @Test("unsigned integers above Int64.max use the 16-byte form", arguments: [UInt64(1) << 63, (UInt64(1) << 63) + 1, UInt64.max])
    func unsignedInteger(value: UInt64) throws {
        let bytes = try roundTrip(.uint(value))
        #expect(bytes[8] == 0x14)
        #expect(bigEndian(bytes[9..<17]) == 0, "high half of a positive 128-bit integer is zero")
        #expect(bigEndian(bytes[17..<25]) == value)
    }

    @Test("a .uint that fits in Int64 reads back as .int")
    func smallUnsignedNormalises() throws {
        #expect(try BinaryPlist.decode(BinaryPlist.encode(.uint(5))) == .int(5))
        #expect(try BinaryPlist.decode(BinaryPlist.encode(.uint(UInt64(Int64.max)))) == .int(.max))
    }

    @Test("hand-built 128-bit integers: sign-extended negatives and out-of-range values")
    func sixteenByteIntegers() throws {
        let negative = BPlistAssembler([[0x14] + bigEndianBytes(.max, width: 8) + bigEndianBytes(UInt64(bitPattern: -5), width: 8)]).bytes()
        #expect(try BinaryPlist.decode(negative) == .int(-5))
        let small = BPlistAssembler([[0x14] + bigEndianBytes(0, width: 8) + bigEndianBytes(42, width: 8)]).bytes()
        #expect(try BinaryPlist.decode(small) == .int(42))
        let huge = BPlistAssembler([[0x14] + bigEndianBytes(1, width: 8) + bigEndianBytes(0, width: 8)]).bytes()
        expectBinaryError(.badNumber, huge)
    }

    static let reals: [Double] = [
        0, -0.0, 1, -1, 1.5, .pi, 0.1, 1e15, 1e300, -1e300, .greatestFiniteMagnitude, .leastNormalMagnitude,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .infinity, -.infinity, .nan,
        Double(bitPattern: 0x7FF0_0000_0000_0ABC),  // a signalling NaN with a payload
    ]

    @Test("reals keep their exact bit pattern (-0.0, infinities, NaN payloads)", arguments: reals)
    func real(value: Double) throws {
        let bytes = try roundTrip(.real(value))
        #expect(bytes[8] == 0x23)
        #expect(bigEndian(bytes[9..<17]) == value.bitPattern)
    }

    @Test("4-byte reals (written by libplist) decode")
    func float32() throws {
        for f: Float in [1.5, -0.0, .infinity, 3.4e38, .leastNonzeroMagnitude] {
            let bytes = BPlistAssembler([[0x22] + bigEndianBytes(UInt64(f.bitPattern), width: 4)]).bytes()
            let decoded = try BinaryPlist.decode(bytes)
            #expect(identical(decoded, .real(Double(f))), "\(f) decoded as \(decoded)")
        }
        let nan = BPlistAssembler([[0x22, 0x7F, 0xC0, 0, 0]]).bytes()
        #expect(try BinaryPlist.decode(nan).doubleValue?.isNaN == true)
    }

    static let dates: [Date] = [
        Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1.5),
        Date(timeIntervalSinceReferenceDate: -1.5), Date(timeIntervalSince1970: 0),
        Date(timeIntervalSinceReferenceDate: 1e9 + 0.25), Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_7),
        .distantPast, .distantFuture,
    ]

    @Test("dates keep their exact seconds since 2001", arguments: dates)
    func date(value: Date) throws {
        let bytes = try roundTrip(.date(value))
        #expect(bytes[8] == 0x33)
        #expect(bigEndian(bytes[9..<17]) == value.timeIntervalSinceReferenceDate.bitPattern)
    }

    @Test("data of every count width", arguments: [0, 1, 14, 15, 16, 255, 256, 70_000])
    func data(count: Int) throws {
        let payload = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let bytes = try roundTrip(.data(payload))
        #expect(bytes[8] >> 4 == 0x4)
        let (n, start) = objectCount(bytes, at: 8)
        #expect(n == count)
        #expect(Data(bytes[start..<(start + n)]) == payload)
    }

    static let strings: [String] = [
        "", "a", "hello, world", String(repeating: "x", count: 14), String(repeating: "y", count: 15),
        String(repeating: "z", count: 16), String(repeating: "long ascii ", count: 100), "a\u{0}b", "\u{7F}", "tab\tnew\nline",
        "Ünïcödé", "𝄞", "日本語のテキスト", "한국어", "👨‍👩‍👧‍👦 family", "mixed ascii and é",
        String(repeating: "é", count: 14), String(repeating: "é", count: 15), String(repeating: "é", count: 16),
        String(repeating: "𝄞", count: 7), String(repeating: "𝄞", count: 8), "\u{FFFD}\u{FEFF}\u{10FFFF}",
        String(repeating: "ü", count: 70_000),
    ]

    @Test("strings: ASCII as 0x5_, anything else as UTF-16 0x6_, with count extension", arguments: strings)
    func string(value: String) throws {
        let bytes = try roundTrip(.string(value))
        let isASCII = value.unicodeScalars.allSatisfy(\.isASCII)
        #expect(bytes[8] >> 4 == (isASCII ? 0x5 : 0x6))
        let (n, start) = objectCount(bytes, at: 8)
        if isASCII {
            #expect(n == value.utf8.count)
            #expect(Array(bytes[start..<(start + n)]) == Array(value.utf8))
        } else {
            let units = Array(value.utf16)
            #expect(n == units.count)
            let written = stride(from: start, to: start + 2 * n, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
            #expect(written == units, "UTF-16BE payload")
        }
    }

    /// The writer reads eight bytes at a time (ASCII runs, the unit count) and decodes one- and
    /// two-byte sequences without branching: random mixes of one- to four-byte scalars, at
    /// every alignment and length, against Swift's own UTF-16.
    @Test func randomMixedScriptStrings() throws {
        var rng = SystemRandomNumberGenerator()
        let scalars: [String] = ["a", "Z", " ", "\u{0}", "\u{7F}", "é", "ж", "\u{7FF}", "\u{800}", "日", "\u{FFFD}", "𝄞", "🙂", "\u{10FFFF}", "\u{301}"]
        for _ in 0..<2000 {
            let asciiRun = String(repeating: "q", count: Int.random(in: 0...17, using: &rng))
            let value = asciiRun + (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                Bool.random(using: &rng) ? "x" : scalars.randomElement(using: &rng)!
            }.joined()
            let bytes = try roundTrip(.string(value))
            let (n, start) = objectCount(bytes, at: 8)
            if value.utf8.allSatisfy({ $0 < 0x80 }) {
                #expect(bytes[8] >> 4 == 0x5)
                #expect(Array(bytes[start..<(start + n)]) == Array(value.utf8))
            } else {
                #expect(bytes[8] >> 4 == 0x6)
                let written = stride(from: start, to: start + 2 * n, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
                #expect(written == Array(value.utf16), "UTF-16BE payload of \(value.unicodeScalars.map { String($0.value, radix: 16) })")
            }
        }
    }

    @Test("booleans")
    func booleans() throws {
        #expect(try roundTrip(.bool(true))[8] == 0x09)
        #expect(try roundTrip(.bool(false))[8] == 0x08)
    }

    static let uids: [(UInt64, UInt8)] = [
        (0, 0x80), (1, 0x80), (255, 0x80), (256, 0x81), (65535, 0x81), (65536, 0x83), (0xFFFF_FFFF, 0x83),
        (0x1_0000_0000, 0x87), (.max, 0x87),
    ]

    @Test("UIDs in 1, 2, 4 or 8 bytes", arguments: uids)
    func uid(value: UInt64, marker: UInt8) throws {
        let bytes = try roundTrip(.uid(value))
        #expect(bytes[8] == marker)
        #expect(bigEndian(bytes[9..<(9 + Int(marker & 0x0F) + 1)]) == value)
    }

    @Test("empty containers")
    func emptyContainers() throws {
        #expect(try roundTrip(.array([])) == Array("bplist00".utf8) + [0xA0] + [8] + [0, 0, 0, 0, 0, 0, 1, 1] + bigEndianBytes(1, width: 8) + bigEndianBytes(0, width: 8) + bigEndianBytes(9, width: 8))
        #expect(try roundTrip(.set([]))[8] == 0xC0)
        #expect(try roundTrip(.dict([:]))[8] == 0xD0)
    }

    @Test("containers of 14, 15, 16 and more elements", arguments: [1, 14, 15, 16, 17, 255, 256, 300])
    func containerCounts(count: Int) throws {
        let items = (0..<count).map { PlistValue.int(Int64($0)) }
        for (value, nibble) in [(PlistValue.array(items), UInt8(0xA)), (.set(items), 0xC)] {
            let bytes = try roundTrip(value)
            let top = topObjectOffset(bytes)
            #expect(bytes[top] >> 4 == nibble)
            #expect(objectCount(bytes, at: top).count == count)
        }
        var dict: [String: PlistValue] = [:]
        for i in 0..<count { dict["key \(i)"] = .int(Int64(i)) }
        let bytes = try roundTrip(.dict(dict))
        let top = topObjectOffset(bytes)
        #expect(bytes[top] >> 4 == 0xD)
        #expect(objectCount(bytes, at: top).count == count)
    }

    @Test("sets written by another tool (0xC marker) decode as .set")
    func handBuiltSet() throws {
        let bytes = BPlistAssembler([Obj.set([1, 2, 1]), Obj.int(7), Obj.ascii("a")]).bytes()
        #expect(identical(try BinaryPlist.decode(bytes), .set([.int(7), .string("a"), .int(7)])))
        let nested = BPlistAssembler([Obj.array([1]), Obj.set([2]), Obj.set([])]).bytes()
        #expect(identical(try BinaryPlist.decode(nested), .array([.set([.set([])])])))
    }

    @Test("a nested document with every type")
    func kitchenSink() throws {
        let value: PlistValue = .dict([
            "bool": .bool(true), "int": .int(-42), "uint": .uint(.max), "real": .real(-0.0),
            "date": .date(Date(timeIntervalSinceReferenceDate: 86400.5)), "data": .data(Data(repeating: 0xAB, count: 20)),
            "string": .string("Grüße, 世界 🌍"), "uid": .uid(12), "set": .set([.int(1), .string("one")]),
            "array": .array([.array([]), .dict([:]), .array([.int(1), .array([.int(2), .array([.int(3)])])])]),
            "dict": .dict(["nested": .dict(["deeper": .dict(["deepest": .string("here")])])]),
            "": .string("empty key"), "ünïcödé key": .bool(false),
        ])
        try roundTrip(value)
    }

    @Test("600 seeded random documents round-trip exactly")
    func randomRoundTrip() throws {
        var generator = ValueGenerator(seed: 0x5EED_F011_0C0D_EC00)
        for i in 0..<600 {
            let value = generator.value()
            let bytes = BinaryPlist.encode(value)
            let back = try BinaryPlist.decode(bytes)
            #expect(identical(back, value), "document \(i): \(value) came back as \(back)")
        }
    }

    @Test("a 500-deep chain of arrays round-trips")
    func deepChain() throws {
        try roundTrip(nestedArrays(500))
    }

    @Test("decode(Data) and decode([UInt8]) agree; PlistValue.decode sniffs binary")
    func decodeOverloads() throws {
        let value: PlistValue = .dict(["a": .array([.int(1), .string("é")])])
        let bytes = BinaryPlist.encode(value)
        #expect(try BinaryPlist.decode(Data(bytes)) == value)
        #expect(try PlistValue.decode(bytes) == value)
        #expect(try value.encoded(as: .binary) == bytes)
        // A Data slice whose indices do not start at zero.
        let padded = Data([0xFF, 0xFF] + bytes)
        #expect(try BinaryPlist.decode(padded.dropFirst(2)) == value)
    }
}

@Suite("Binary plist: writer properties")
struct BinaryWriterTests {
    @Test("encoding is deterministic and independent of dictionary insertion order")
    func deterministic() throws {
        var forward: [String: PlistValue] = [:]
        var backward: [String: PlistValue] = [:]
        backward.reserveCapacity(1000)
        let keys = (0..<200).map { "key-\($0)-\(String(repeating: "é", count: $0 % 5))" }
        for k in keys { forward[k] = .string(k.uppercased()) }
        for k in keys.reversed() { backward[k] = .string(k.uppercased()) }
        let a = BinaryPlist.encode(.dict(forward))
        let b = BinaryPlist.encode(.dict(backward))
        #expect(a == b)
        #expect(a == BinaryPlist.encode(.dict(forward)))

        var generator = ValueGenerator(seed: 7)
        for _ in 0..<100 {
            let value = generator.value()
            #expect(BinaryPlist.encode(value) == BinaryPlist.encode(value))
        }
    }

    /// Objects are content-addressed by the hash of these bytes, so the layout is part of the
    /// published format: scalars as first met (keys sorted, keys before values), collections after.
    @Test("exact bytes of a small dictionary (layout pinned: published hashes depend on it)")
    func goldenDictionary() {
        let encoded = BinaryPlist.encode(.dict(["b": .int(1), "a": .int(2)]))
        let expected: [UInt8] = Array("bplist00".utf8)
            + [0x51, 0x61]  // 8: object 1, "a"
            + [0x51, 0x62]  // 10: object 2, "b"
            + [0x10, 0x02]  // 12: object 3, 2 (the value of "a")
            + [0x10, 0x01]  // 14: object 4, 1
            + [0xD2, 0x01, 0x02, 0x03, 0x04]  // 16: object 0, the dictionary
            + [0x10, 0x08, 0x0A, 0x0C, 0x0E]  // 21: offset table
            + [0, 0, 0, 0, 0, 0, 1, 1] + bigEndianBytes(5, width: 8) + bigEndianBytes(0, width: 8) + bigEndianBytes(21, width: 8)
        #expect(encoded == expected, "\(hex(encoded))")
    }

    @Test("equal strings are stored once")
    func uniqueStrings() throws {
        let value = PlistValue.array(Array(repeating: .string("the same string, repeated"), count: 100))
        let bytes = BinaryPlist.encode(value)
        #expect(Trailer(bytes).numObjects == 2)
        // Header, the 25-byte string (3-byte header), the array (3-byte header, 100 refs), table, trailer.
        #expect(bytes.count == 8 + 28 + 103 + 2 + 32)
        #expect(try BinaryPlist.decode(bytes) == value)
    }

    @Test("an array of 100 similar dictionaries shares keys and equal values")
    func uniqueAcrossDictionaries() throws {
        let when = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let rows = (0..<100).map { _ in
            PlistValue.dict(["name": .string("sonnet"), "lines": .int(14), "published": .date(when)])
        }
        let value = PlistValue.array(rows)
        let bytes = BinaryPlist.encode(value)
        let trailer = Trailer(bytes)
        // 1 array + 100 dictionaries + 3 keys + 3 values.
        #expect(trailer.numObjects == 107, "\(trailer)")
        #expect(objectCountWithoutUniquing(value) == 701)
        #expect(try BinaryPlist.decode(bytes) == value)
    }

    @Test("a key and an equal string value share one object")
    func keysShareWithValues() {
        #expect(Trailer(BinaryPlist.encode(.dict(["a": .string("a")]))).numObjects == 2)
    }

    @Test("int 1, true, 1.0, UID 1, \"1\", a date 1 s after 2001 and data [1] are different objects")
    func noCrossTypeMerging() throws {
        let value = PlistValue.array([
            .int(1), .bool(true), .real(1.0), .uid(1), .string("1"),
            .date(Date(timeIntervalSinceReferenceDate: 1)), .data(Data([1])),
        ])
        let bytes = BinaryPlist.encode(value)
        #expect(Trailer(bytes).numObjects == 8)
        #expect(identical(try BinaryPlist.decode(bytes), value))
    }

    @Test("0.0 and -0.0 are not merged; identical NaNs are")
    func realsUniquedByBitPattern() throws {
        let zeros = PlistValue.array([.real(0.0), .real(-0.0), .real(0.0)])
        let bytes = BinaryPlist.encode(zeros)
        #expect(Trailer(bytes).numObjects == 3)
        #expect(identical(try BinaryPlist.decode(bytes), zeros))
        #expect(Trailer(BinaryPlist.encode(.array([.real(.nan), .real(.nan)]))).numObjects == 2)
    }

    @Test("the same integer as .int and .uint is one object")
    func intAndUIntShare() throws {
        let bytes = BinaryPlist.encode(.array([.int(5), .uint(5)]))
        #expect(Trailer(bytes).numObjects == 2)
        #expect(try BinaryPlist.decode(bytes) == .array([.int(5), .int(5)]))
    }

    @Test("canonically equivalent but different strings are not merged (é vs e + U+0301)")
    func canonicallyEquivalentStringsStayDistinct() throws {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let value = PlistValue.array([.string(precomposed), .string(decomposed)])
        let bytes = BinaryPlist.encode(value)
        let back = try BinaryPlist.decode(bytes)
        #expect(identical(back, value), "wrote \(precomposed.unicodeScalars.map(\.value)) and \(decomposed.unicodeScalars.map(\.value)); read back \(back)")
        #expect(Trailer(bytes).numObjects == 3)
    }

    @Test("ASCII strings use marker 0x5_, others UTF-16BE 0x6_")
    func stringMarkers() {
        #expect(Array(BinaryPlist.encode(.string("abc"))[8..<12]) == [0x53, 0x61, 0x62, 0x63])
        #expect(Array(BinaryPlist.encode(.string("é𝄞"))[8..<15]) == [0x63, 0x00, 0xE9, 0xD8, 0x34, 0xDD, 0x1E])
        #expect(Array(BinaryPlist.encode(.string(String(repeating: "q", count: 15)))[8..<11]) == [0x5F, 0x10, 0x0F])
        #expect(BinaryPlist.encode(.string("\u{7F}"))[8] == 0x51)
        #expect(BinaryPlist.encode(.string("\u{80}"))[8] == 0x61)
    }

    @Test("the trailer: top object 0, unused bytes zero, table right before the trailer")
    func trailerLayout() {
        let bytes = BinaryPlist.encode(.array([.string("x"), .int(3)]))
        let t = bytes.count - 32
        #expect(Array(bytes[t..<(t + 6)]) == [0, 0, 0, 0, 0, 0])
        let trailer = Trailer(bytes)
        #expect(trailer.topObject == 0)
        #expect(trailer.numObjects == 3)
        #expect(Int(trailer.offsetTableOffset) + Int(trailer.numObjects) * trailer.offsetIntSize == t)
    }

    /// A document of exactly `n` objects: an array of n - 1 distinct integers.
    static func document(objects n: Int) -> PlistValue {
        .array((0..<(n - 1)).map { .int(Int64($0)) })
    }

    /// Object count and the reference width Apple's CoreFoundation, Python's plistlib and libplist all
    /// write, and CoreFoundation's reader requires: 1 << (8 * refSize) must exceed the object count.
    static let refWidths: [(Int, Int)] = [(255, 1), (256, 2), (257, 2), (65535, 2), (65536, 4), (65537, 4)]

    @Test("object reference width at the 255/256 and 65535/65536 object boundaries", arguments: refWidths)
    func referenceWidth(objects: Int, refSize: Int) throws {
        let value = Self.document(objects: objects)
        let bytes = BinaryPlist.encode(value)
        let trailer = Trailer(bytes)
        #expect(trailer.numObjects == UInt64(objects))
        #expect(bytes[bytes.count - 32 + 7] == UInt8(refSize), "\(objects) objects written with \(trailer.objectRefSize)-byte references")
        #expect((1 << (8 * UInt64(trailer.objectRefSize))) > trailer.numObjects, "CoreFoundation rejects \(trailer)")
        #expect(try BinaryPlist.decode(bytes) == value)
    }

    @Test("offset-table width can address the offset table itself, as CoreFoundation requires",
          arguments: [200, 235, 240, 244, 245, 246, 250, 300, 65_400, 65_510, 65_520, 65_540])
    func offsetWidth(dataCount: Int) throws {
        let value = PlistValue.array([.data(Data(repeating: 0x5A, count: dataCount))])
        let bytes = BinaryPlist.encode(value)
        let trailer = Trailer(bytes)
        let needed = trailer.offsetTableOffset <= 0xFF ? 1 : trailer.offsetTableOffset <= 0xFFFF ? 2 : 4
        #expect(trailer.offsetIntSize == needed, "\(trailer)")
        #expect(try BinaryPlist.decode(bytes) == value)
    }
}

/// Dictionary keys are written in the order of String's `<`, found with an ASCII-prefix shortcut.
@Suite("Binary plist key order")
struct BinaryPlistKeyOrderTests {
    @Test func sameOrderAsStringComparison() {
        var rng = SystemRandomNumberGenerator()
        // ASCII, NUL, shared prefixes longer than eight and sixteen bytes, non-ASCII early and
        // late, precomposed and decomposed accents (one key in a Swift dictionary), and a bare
        // combining mark that joins whatever ASCII letter comes before it.
        let pieces = ["a", "b", "e", "f", "A", "z", "\u{0}", "~", "\u{7F}", "é", "e\u{301}", "\u{301}", "ж", "日", "🙂",
                      "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmno", "abcdefghijklmnop", "%d", " "]
        for _ in 0..<400 {
            var dict: [String: PlistValue] = [:]
            for i in 0..<Int.random(in: 0...60, using: &rng) {
                let key = (0..<Int.random(in: 0...5, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
                dict[key] = .int(Int64(i))
            }
            let expected = dict.sorted { $0.key < $1.key }.map(\.key)
            #expect(BinaryPlist.sortedIndices(dict).map { dict[$0].key } == expected)
        }
    }

    /// A combining mark right after the prefix changes its last letter: "…e" + U+0301 is "…é",
    /// which sorts after "…f" although its bytes start lower.
    @Test(arguments: [7, 15, 16])
    func combiningMarkAfterThePrefix(asciiBefore: Int) {
        let stem = String(repeating: "a", count: asciiBefore)
        let dict: [String: PlistValue] = [stem + "e\u{301}": .int(1), stem + "f": .int(2), stem + "e": .int(3), stem + "ex": .int(4)]
        #expect(BinaryPlist.sortedIndices(dict).map { dict[$0].key } == [stem + "e", stem + "ex", stem + "f", stem + "e\u{301}"])
    }

    @Test func asciiPrefixes() {
        func prefix(_ s: String) -> [UInt64] { let p = BinaryPlist.asciiPrefix(s); return [p.hi, p.lo] }
        #expect(prefix("") == [0, 0])
        #expect(prefix("a") == [0x6100_0000_0000_0000, 0])
        #expect(prefix("abcdefghij") == [0x6162_6364_6566_6768, 0x696A_0000_0000_0000])
        #expect(prefix("abcdefghijklmnopq") == [0x6162_6364_6566_6768, 0x696A_6B6C_6D6E_6F70])
        #expect(prefix("abcdefghijklmnopqé") == [0x6162_6364_6566_6768, 0x696A_6B6C_6D6E_6F70])
        #expect(prefix("abcdefgé")[0] == .max)  // its eighth byte starts é
        #expect(prefix("é")[0] == .max)
        #expect(prefix("abcdefghijklmnopé")[0] == .max)  // é right after the sixteen bytes
        #expect(prefix("abcdefghijklmnop\u{301}")[0] == .max)  // a mark that would join the p
    }
}
