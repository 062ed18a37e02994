import FolioTestSupport
import Foundation
import Testing

@testable import FolioPlist
@testable import FolioPublished

/// A minimal valid document, `[1]`: the array at 8, the integer at 10, the offset table at 12, the trailer at 14.
private let validArray = BPlistAssembler([Obj.array([1]), Obj.int(1)])

@Suite("Binary plist: malformed input is rejected with the right kind and offset")
struct MalformedBinaryTests {
    @Test("the hand assembler produces what the reader accepts")
    func assemblerSanity() throws {
        let bytes = validArray.bytes()
        #expect(bytes.count == 46)
        #expect(try BinaryPlist.decode(bytes) == .array([.int(1)]))
    }

    // MARK: Header and length

    @Test("empty and short input")
    func shortInput() throws {
        expectBinaryError(.truncated, [])
        expectBinaryError(.truncated, Array("bplist0".utf8))
        expectBinaryError(.truncated, Array("bplist00".utf8))
        expectBinaryError(.truncated, Array("bplist00".utf8) + [0xA0])
        // One byte short of the smallest possible document (header + object + offset + trailer = 42).
        expectBinaryError(.truncated, Array(BPlistAssembler([[0x08]]).bytes().dropLast()))
        #expect(BPlistAssembler([[0x08]]).bytes().count == 42)
        #expect(try BinaryPlist.decode(BPlistAssembler([[0x08]]).bytes()) == .bool(false))
    }

    @Test("bad magic reports the first differing byte")
    func badMagic() {
        for (magic, at) in [("xplist00", 0), ("bplist01", 7), ("BPLIST00", 0), ("bplist10", 6), ("<?xml ve", 0)] {
            var doc = validArray
            doc.magic = Array(magic.utf8)
            let error = expectBinaryError(.badMagic, doc.bytes(), "magic \(magic)")
            #expect(error?.offset == at, "magic \(magic)")
        }
    }

    @Test("every truncation of a valid document is rejected")
    func truncation() {
        let bytes = BinaryPlist.encode(.dict(["key": .array([.string("value"), .int(300), .real(2.5)])]))
        for length in 0..<bytes.count {
            #expect(throws: PlistError.self, "truncated to \(length) bytes") { try BinaryPlist.decode(Array(bytes[0..<length])) }
        }
        expectBinaryError(.truncated, Array(bytes[0..<41]))
    }

    // MARK: Trailer

    @Test("trailer offset size 0 and 9", arguments: [UInt8(0), 9, 16, 255])
    func badOffsetIntSize(size: UInt8) {
        var doc = validArray
        doc.trailerOffsetIntSize = size
        let bytes = doc.bytes()
        #expect(expectBinaryError(.badTrailer, bytes)?.offset == bytes.count - 32 + 6)
    }

    @Test("trailer reference size 0 and 9", arguments: [UInt8(0), 9, 255])
    func badRefSize(size: UInt8) {
        var doc = validArray
        doc.trailerRefSize = size
        let bytes = doc.bytes()
        #expect(expectBinaryError(.badTrailer, bytes)?.offset == bytes.count - 32 + 7)
    }

    @Test("trailer object count 0, more than the file could hold, or more than the table holds")
    func badObjectCount() {
        for count: UInt64 in [0, 1 << 40, .max] {
            var doc = validArray
            doc.numObjects = count
            let bytes = doc.bytes()
            #expect(expectBinaryError(.badTrailer, bytes, "count \(count)")?.offset == bytes.count - 32 + 8)
        }
        var doc = validArray
        doc.numObjects = 3  // the table has two entries; a third would overlap the trailer
        expectBinaryError(.badTrailer, doc.bytes())
    }

    @Test("top object not below the object count")
    func badTopObject() throws {
        for top: UInt64 in [2, 3, .max] {
            var doc = validArray
            doc.top = top
            let bytes = doc.bytes()
            #expect(expectBinaryError(.badTrailer, bytes, "top \(top)")?.offset == bytes.count - 32 + 16)
        }
        var doc = validArray
        doc.top = 1
        #expect(try BinaryPlist.decode(doc.bytes()) == .int(1), "any object may be the top")
    }

    @Test("offset table position below 9 or inside the trailer")
    func badTablePosition() {
        let length = UInt64(validArray.bytes().count)
        for table: UInt64 in [0, 7, 8, length - 32, length - 31, length - 1, length, 1 << 62, .max] {
            var doc = validArray
            doc.tableOffset = table
            let bytes = doc.bytes()
            #expect(expectBinaryError(.badTrailer, bytes, "table at \(table)")?.offset == bytes.count - 32 + 24)
        }
    }

    @Test("a table position inside the object area misplaces the table")
    func tableTooEarly() {
        var doc = validArray
        doc.tableOffset = 10  // the table then appears to end at 12, two bytes before the trailer
        expectBinaryError(.trailingBytes, doc.bytes())
    }

    @Test("bytes between the offset table and the trailer")
    func trailingBytes() {
        for gap in [[0x00], [0xAA, 0xBB, 0xCC]] as [[UInt8]] {
            var doc = validArray
            doc.gap = gap
            #expect(expectBinaryError(.trailingBytes, doc.bytes())?.offset == 14)
        }
    }

    @Test("a reference size too small to address every object")
    func refSizeTooSmall() throws {
        // 300 objects, but 1-byte references can only reach 256 of them.
        var doc = BPlistAssembler([Obj.array([299], refSize: 2)] + (0..<299).map { Obj.int(UInt8($0 % 256)) })
        doc.offsetIntSize = 2
        doc.refSize = 2
        #expect(try BinaryPlist.decode(doc.bytes()) == .array([.int(42)]))
        doc.trailerRefSize = 1
        let bytes = doc.bytes()
        #expect(expectBinaryError(.badTrailer, bytes)?.offset == bytes.count - 32 + 7)
    }

    // MARK: Offsets and references

    @Test("an object offset below 8 or at/after the offset table", arguments: [UInt64(0), 7, 12, 13, 200])
    func badObjectOffset(offset: UInt64) {
        var doc = validArray
        doc.offsetOverrides = [1: offset]
        #expect(expectBinaryError(.badOffset, doc.bytes())?.offset == 13, "offset \(offset): the table entry is at 13")
        var top = validArray
        top.offsetOverrides = [0: offset]
        #expect(expectBinaryError(.badOffset, top.bytes())?.offset == 12)
    }

    @Test("references not below the object count")
    func badReferences() {
        #expect(expectBinaryError(.badReference, BPlistAssembler([Obj.array([1, 2]), Obj.int(1)]).bytes())?.offset == 10)
        #expect(expectBinaryError(.badReference, BPlistAssembler([Obj.array([255])]).bytes())?.offset == 9)
        // A dictionary key reference and a value reference out of range.
        expectBinaryError(.badReference, BPlistAssembler([Obj.dict(keys: [9], values: [1]), Obj.ascii("k")]).bytes())
        expectBinaryError(.badReference, BPlistAssembler([Obj.dict(keys: [1], values: [9]), Obj.ascii("k")]).bytes())
        // Two-byte references.
        var wide = BPlistAssembler([Obj.array([0x0100], refSize: 2), Obj.int(1)])
        wide.refSize = 2
        expectBinaryError(.badReference, wide.bytes())
    }

    @Test("collections that contain themselves")
    func cycles() {
        #expect(expectBinaryError(.cycle, BPlistAssembler([Obj.array([0])]).bytes())?.offset == 8)
        expectBinaryError(.cycle, BPlistAssembler([Obj.set([0])]).bytes())
        expectBinaryError(.cycle, BPlistAssembler([Obj.array([1]), Obj.array([2]), Obj.array([0])]).bytes())
        expectBinaryError(.cycle, BPlistAssembler([Obj.dict(keys: [1], values: [0]), Obj.ascii("self")]).bytes())
        expectBinaryError(.cycle, BPlistAssembler([Obj.array([1]), Obj.dict(keys: [2], values: [1]), Obj.ascii("k")]).bytes())
    }

    @Test("shared (non-cyclic) references are fine")
    func diamonds() throws {
        let bytes = BPlistAssembler([Obj.array([1, 1, 2]), Obj.array([2]), Obj.int(3)]).bytes()
        #expect(try BinaryPlist.decode(bytes) == .array([.array([.int(3)]), .array([.int(3)]), .int(3)]))
        // One object appearing at two depths, and a string used as key and value.
        let dict = BPlistAssembler([Obj.dict(keys: [1], values: [2]), Obj.ascii("k"), Obj.array([1, 1])]).bytes()
        #expect(try BinaryPlist.decode(dict) == .dict(["k": .array([.string("k"), .string("k")])]))
        // 10,000 references to one string are not a reference bomb.
        let many = PlistValue.array(Array(repeating: .string("shared"), count: 10_000))
        #expect(try BinaryPlist.decode(BinaryPlist.encode(many)) == many)
    }

    // MARK: Depth

    @Test("nesting: maxDepth (512) collections deep decodes, one more does not")
    func depthLimit() throws {
        #expect(BinaryPlist.maxDepth == 512)
        let atLimit = nestedArrays(BinaryPlist.maxDepth)
        #expect(try BinaryPlist.decode(BinaryPlist.encode(atLimit)) == atLimit)
        #expect(try BinaryPlist.decode(BinaryPlist.encode(nestedArrays(500))) == nestedArrays(500))
        for depth in [BinaryPlist.maxDepth + 1, 600, 2000] {
            expectBinaryError(.tooDeep, BinaryPlist.encode(nestedArrays(depth)), "\(depth) deep")
        }
        var dicts: PlistValue = .string("leaf")
        for _ in 0..<600 { dicts = .dict(["d": dicts]) }
        expectBinaryError(.tooDeep, BinaryPlist.encode(dicts))
    }

    @Test("a reference bomb (60 arrays, each holding the next twice) fails fast")
    func referenceBomb() {
        let levels = 60
        var objects = (0..<(levels - 1)).map { Obj.array([$0 + 1, $0 + 1]) }
        objects.append(Obj.int(1))
        let bytes = BPlistAssembler(objects).bytes()
        let clock = ContinuousClock()
        let elapsed = clock.measure { expectBinaryError(.referenceBomb, bytes) }
        #expect(elapsed < .seconds(2), "took \(elapsed)")

        // The same with dictionaries: every level maps two keys to the next level.
        var dictObjects = [Obj.ascii("a"), Obj.ascii("b")]
        for i in 0..<levels { dictObjects.append(Obj.dict(keys: [0, 1], values: [i + 3, i + 3])) }
        dictObjects.append(Obj.int(0))
        var dictBomb = BPlistAssembler(dictObjects)
        dictBomb.top = 2
        dictBomb.offsetIntSize = 2
        let dictElapsed = clock.measure { expectBinaryError(.referenceBomb, dictBomb.bytes()) }
        #expect(dictElapsed < .seconds(2), "took \(dictElapsed)")
    }

    // MARK: Counts

    @Test("counts larger than the file")
    func badCounts() {
        // An ASCII string claiming 2^31 bytes.
        expectBinaryError(.badCount, BPlistAssembler([[0x5F, 0x12, 0x7F, 0xFF, 0xFF, 0xFF]]).bytes())
        // A 10-byte ASCII string with three bytes present.
        expectBinaryError(.badCount, BPlistAssembler([[0x5A, 0x61, 0x62, 0x63]]).bytes())
        // A UTF-16 string whose count overflows when doubled.
        expectBinaryError(.badCount, BPlistAssembler([[0x6F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]).bytes())
        expectBinaryError(.badCount, BPlistAssembler([[0x63, 0x00, 0x41]]).bytes())
        // Data claiming 2^64 - 1 bytes.
        expectBinaryError(.badCount, BPlistAssembler([[0x4F, 0x13] + bigEndianBytes(.max, width: 8)]).bytes())
        // An array of 65535 references with two present.
        expectBinaryError(.badCount, BPlistAssembler([[0xAF, 0x11, 0xFF, 0xFF, 0x01, 0x01], Obj.int(1)]).bytes())
        // A dictionary of 14 pairs with one present.
        expectBinaryError(.badCount, BPlistAssembler([[0xDE, 0x01, 0x02], Obj.ascii("k"), Obj.int(1)]).bytes())
        // An extended count that is not an integer, or a 16-byte integer.
        expectBinaryError(.badCount, BPlistAssembler([[0x5F, 0x51, 0x61]]).bytes())
        expectBinaryError(.badCount, BPlistAssembler([[0x5F, 0x14] + [UInt8](repeating: 0, count: 16)]).bytes())
        // An integer and a real cut short by the offset table.
        expectBinaryError(.badCount, BPlistAssembler([[0x13, 0x00, 0x01]]).bytes())
        expectBinaryError(.badCount, BPlistAssembler([[0x23, 0x3F, 0xF0]]).bytes())
        expectBinaryError(.badCount, BPlistAssembler([[0x33, 0x00]]).bytes())
        expectBinaryError(.badCount, BPlistAssembler([[0x83, 0x00]]).bytes())
    }

    @Test("an extended count that runs into the offset table")
    func countRunsIntoTable() {
        expectBinaryError(.truncated, BPlistAssembler([[0x5F]]).bytes())
        expectBinaryError(.truncated, BPlistAssembler([[0x5F, 0x12, 0x00]]).bytes())
    }

    // MARK: Keys, markers, numbers, strings

    @Test("a dictionary key that is not a string")
    func nonStringKey() {
        for key in [Obj.int(1), [0x09], Obj.array([]), [0x23] + bigEndianBytes(0, width: 8), [0x41, 0x61]] as [[UInt8]] {
            let error = expectBinaryError(.badKey, BPlistAssembler([Obj.dict(keys: [1], values: [2]), key, Obj.int(1)]).bytes())
            #expect(error?.offset == 9, "the offset names the key reference")
        }
    }

    @Test("a dictionary with the same key twice")
    func duplicateKey() {
        expectBinaryError(.duplicateKey, BPlistAssembler([Obj.dict(keys: [1, 1], values: [2, 2]), Obj.ascii("k"), Obj.int(1)]).bytes())
        // Equal keys stored as two objects, one ASCII and one UTF-16.
        expectBinaryError(.duplicateKey, BPlistAssembler([Obj.dict(keys: [1, 2], values: [3, 3]), Obj.ascii("k"), Obj.utf16([0x6B]), Obj.int(1)]).bytes())
    }

    @Test("unknown markers", arguments: [UInt8(0x01), 0x07, 0x0C, 0x0E, 0x0F, 0x30, 0x34, 0x70, 0x7F, 0x90, 0xB0, 0xE0, 0xF0, 0xFF])
    func unknownMarker(marker: UInt8) {
        let bytes = BPlistAssembler([[marker] + [UInt8](repeating: 0, count: 16)]).bytes()
        #expect(expectBinaryError(.badMarker, bytes, "marker \(hex([marker]))")?.offset == 8)
    }

    @Test("null (0x00) is not a property list value")
    func null() {
        #expect(expectBinaryError(.unsupported, BPlistAssembler([[0x00]]).bytes())?.offset == 8)
        expectBinaryError(.unsupported, BPlistAssembler([Obj.array([1]), [0x00]]).bytes())
    }

    @Test("impossible number sizes")
    func badNumbers() {
        for object in [[0x15], [0x1F], [0x20], [0x21], [0x24], [0x2F], [0x88], [0x8F]] as [[UInt8]] {
            expectBinaryError(.badNumber, BPlistAssembler([object + [UInt8](repeating: 0, count: 40)]).bytes(), "\(hex(object))")
        }
    }

    @Test("a byte above 0x7F inside an ASCII string, at every position", arguments: [3, 8, 9, 20, 31])
    func nonASCIIByte(length: Int) {
        for position in 0..<length {
            var s = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            s[position] = 0xC3
            let bytes = BPlistAssembler([Obj.header(0x5, count: length) + s]).bytes()
            expectBinaryError(.badString, bytes, "length \(length), bad byte at \(position)")
            // The same as a dictionary key.
            let key = BPlistAssembler([Obj.dict(keys: [1], values: [2]), Obj.header(0x5, count: length) + s, Obj.int(0)]).bytes()
            expectBinaryError(.badString, key, "key of length \(length), bad byte at \(position)")
        }
    }

    @Test("unpaired UTF-16 surrogates are refused, as CoreFoundation and plistlib do; pairs decode")
    func unpairedSurrogates() throws {
        let bad: [[UInt16]] = [
            [0xD834], [0xDD1E], [0xD834, 0x0041], [0x0041, 0xD834, 0xDD1E, 0xDD1E], [0xD834, 0xD834, 0xDD1E],
            [0x0041, 0xDBFF],
        ]
        for units in bad {
            expectBinaryError(.badString, BPlistAssembler([Obj.utf16(units)]).bytes(), "\(units)")
            // The same as a dictionary key.
            let key = BPlistAssembler([Obj.dict(keys: [1], values: [2]), Obj.utf16(units), Obj.int(0)]).bytes()
            expectBinaryError(.badString, key, "key \(units)")
        }
        let good: [([UInt16], String)] = [([0xD834, 0xDD1E], "𝄞"), ([0x0041, 0xD83D, 0xDE00, 0x00E9], "A😀é"), ([0xFFFD], "\u{FFFD}")]
        for (units, expected) in good {
            let decoded = try BinaryPlist.decode(BPlistAssembler([Obj.utf16(units)]).bytes())
            #expect(decoded.stringValue.map { sameScalars($0, expected) } == true, "\(units) -> \(decoded)")
        }
    }

    @Test("dates of ±Infinity, NaN or beyond ±1e12 s are refused (CPython's test_plistlib invalid vectors); distant dates read")
    func unusableDates() throws {
        for seconds in [Double.infinity, -.infinity, .nan, 1.000_001e12, -1.000_001e12, .greatestFiniteMagnitude] {
            let doc = BPlistAssembler([[0x33] + bigEndianBytes(seconds.bitPattern, width: 8)]).bytes()
            expectBinaryError(.badValue, doc, "date \(seconds)")
            // What our own writer would write for such a value is refused the same way.
            expectBinaryError(.badValue, BinaryPlist.encode(.date(Date(timeIntervalSinceReferenceDate: seconds))), "encoded \(seconds)")
        }
        for date in [Date.distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: -1e12), Date(timeIntervalSinceReferenceDate: 1e12)] {
            let decoded = try BinaryPlist.decode(BinaryPlist.encode(.dict(["d": .date(date)])))
            #expect(decoded["d"]?.dateValue == date)
            // And every printer formats it without trapping.
            #expect(!PlistDates.formatISO8601(date).isEmpty)
            #expect(try !XMLPlist.encode(decoded).isEmpty)
        }
        // A date made in code past the limit is clamped by the printers, never a trap.
        #expect(!PlistDates.formatISO8601(Date(timeIntervalSinceReferenceDate: .infinity)).isEmpty)
        #expect(!PlistDates.formatISO8601(Date(timeIntervalSinceReferenceDate: .nan)).isEmpty)
    }

    @Test("entries out of path order are read sorted; two with one path are refused, in any order")
    func manifestEntryOrder() throws {
        func entry(_ path: String) -> Manifest.Entry {
            Manifest.Entry(path: path, sha256: String(repeating: "a", count: 64), size: 1, gzipSize: nil, contentType: "text/plain")
        }
        let good = Manifest(version: 1, createdAt: Date(timeIntervalSince1970: 1_700_000_000), entries: [entry("a"), entry("b"), entry("c")])
        guard case .dict(var root) = good.plist, case .array(let list) = root["entries"] else { Issue.record("manifest is not a dict"); return }
        root["entries"] = .array(list.reversed())
        #expect(try Manifest(plist: .dict(root)).entries.map(\.path) == ["a", "b", "c"])
        for duplicated in [[list[0], list[1], list[0]], [list[1], list[1]], [list[0], list[0], list[2]]] {
            root["entries"] = .array(duplicated)
            #expect(throws: ManifestError.self) { try Manifest(plist: .dict(root)) }
        }
    }

    @Test("a manifest whose createdAt is not a usable date is refused with a message, not a trap")
    func manifestCreatedAt() throws {
        let good = Manifest(version: 1, createdAt: Date(timeIntervalSince1970: 1_700_000_000), entries: [])
        guard case .dict(var root) = good.plist else { Issue.record("manifest is not a dict"); return }
        #expect(throws: Never.self) { try Manifest(plist: .dict(root)) }
        for seconds in [Double.infinity, -.infinity, .nan, 5e12] {
            root["createdAt"] = .date(Date(timeIntervalSinceReferenceDate: seconds))
            #expect(throws: ManifestError.self, "createdAt \(seconds)") { try Manifest(plist: .dict(root)) }
            // As published bytes, the reader already refuses the date.
            #expect(throws: (any Error).self) { try Manifest(bytes: BinaryPlist.encode(.dict(root))) }
        }
    }

    // MARK: Fuzzing

    /// A document touching every object type, counts over 15 and 2-byte integers.
    static let fuzzSeed: [UInt8] = BinaryPlist.encode(.dict([
        "array": .array([.int(1), .int(-1), .int(300), .int(70_000), .uint(.max), .bool(true), .bool(false)]),
        "set": .set([.string("a"), .string("é")]),
        "strings": .array([.string(String(repeating: "s", count: 20)), .string("日本語"), .string("𝄞")]),
        "real": .real(2.5), "date": .date(Date(timeIntervalSinceReferenceDate: 1000)),
        "data": .data(Data(repeating: 7, count: 17)), "uid": .uid(300),
        "nested": .dict(["x": .array([.array([.dict([:])])])]),
    ]))

    @Test("3000 seeded mutations of a valid document: decode succeeds or throws PlistError, never crashes")
    func mutationFuzz() throws {
        let base = Self.fuzzSeed
        #expect(try BinaryPlist.decode(base).dictValue?.count == 8)
        var rng = SplitMix64(seed: 0xF022)
        var failures = 0
        var successes = 0
        let interesting: [UInt8] = [0x00, 0x01, 0x08, 0x0F, 0x10, 0x13, 0x14, 0x5F, 0x6F, 0x7F, 0x80, 0xAF, 0xD0, 0xDF, 0xFF]
        for _ in 0..<3000 {
            var bytes = base
            switch rng.int(0...5) {
            case 0:
                for _ in 0..<rng.int(1...4) { bytes[rng.int(0...(bytes.count - 1))] ^= UInt8(1) << UInt8(rng.int(0...7)) }
            case 1:
                for _ in 0..<rng.int(1...3) { bytes[rng.int(0...(bytes.count - 1))] = rng.pick(interesting) }
            case 2:
                bytes = Array(bytes[0..<rng.int(0...(bytes.count - 1))])
            case 3:
                // The trailer and the offset table are where a single byte does the most damage.
                bytes[rng.int((bytes.count - 32 - 8)...(bytes.count - 1))] = UInt8(truncatingIfNeeded: rng.next())
            case 4:
                let at = rng.int(0...(bytes.count - 1))
                if rng.chance(0.5) { bytes.insert(contentsOf: rng.bytes(rng.int(1...3)), at: at) } else { bytes.remove(at: at) }
            default:
                bytes[rng.int(8...(bytes.count - 33))] = UInt8(truncatingIfNeeded: rng.next())
            }
            do throws(PlistError) {
                let value = try BinaryPlist.decode(bytes)
                successes += 1
                // Whatever decoded must be a well-formed value the writer can encode and read again.
                #expect(identical(try BinaryPlist.decode(BinaryPlist.encode(value)), value))
            } catch {
                failures += 1
                #expect(error.offset != nil, "\(error)")
            }
        }
        #expect(failures > 500)
        #expect(successes > 0)
    }

    @Test("3000 random object areas behind a plausible trailer")
    func structuredFuzz() {
        var rng = SplitMix64(seed: 0xB1157)
        let markers: [UInt8] = [0x08, 0x09, 0x10, 0x11, 0x13, 0x14, 0x23, 0x33, 0x42, 0x4F, 0x53, 0x5F, 0x62, 0x6F, 0x80, 0xA2, 0xAF, 0xC1, 0xD1, 0xD2, 0xDF]
        var thrown = 0
        for _ in 0..<3000 {
            let count = rng.int(1...12)
            var objects: [[UInt8]] = []
            for _ in 0..<count {
                var object = [rng.pick(markers)]
                for _ in 0..<rng.int(0...6) {
                    object.append(rng.chance(0.6) ? UInt8(rng.int(0...(count + 1))) : UInt8(truncatingIfNeeded: rng.next()))
                }
                objects.append(object)
            }
            var doc = BPlistAssembler(objects)
            doc.top = UInt64(rng.int(0...(count - 1)))
            if rng.chance(0.2) { doc.offsetOverrides[rng.int(0...(count - 1))] = UInt64(rng.int(0...300)) }
            do throws(PlistError) {
                _ = try BinaryPlist.decode(doc.bytes())
            } catch {
                thrown += 1
                #expect(error.offset != nil)
            }
        }
        #expect(thrown > 0)
    }

    @Test("random garbage after the magic")
    func garbage() {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<1000 {
            let bytes = Array("bplist00".utf8) + rng.bytes(rng.int(0...200))
            #expect(throws: PlistError.self) { try BinaryPlist.decode(bytes) }
        }
    }
}
