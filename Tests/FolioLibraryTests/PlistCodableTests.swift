import FolioPlistXML
import FolioTestSupport
import Foundation
import Testing

@testable import FolioPlist

// PlistEncoder / PlistDecoder: round trips in every format, errors and their coding paths,
// integer range checks, and differential checks against Foundation's coders and against the
// general path (Codable -> PlistValue -> BinaryPlist.encode / PlistValue -> Codable).

private struct CodableSonnet: Codable, Equatable {
    var number: Int
    var roman: String
    var lines: [String]
}

private struct Everything: Codable, Equatable {
    var bool: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var float: Float
    var double: Double
    var string: String
    var date: Date
    var data: Data
    var optional: Int?
    var missing: String?
    var nested: [String: [Int]]
    var byNumber: [Int: String]
    var optionals: [Int?]
    var sonnets: [CodableSonnet]
}

private let everything = Everything(
    bool: true, int: -42, int8: .min, int16: .max, int32: .min, int64: .max,
    uint: 7, uint8: .max, uint16: .max, uint32: .max, uint64: .max,
    float: 1.5, double: -0.1, string: "Shall I compare thee — to a summer’s day? 🌞",
    date: Date(timeIntervalSinceReferenceDate: 86_400 * 365), data: Data([0, 1, 2, 254, 255]),
    optional: 5, missing: nil, nested: ["a": [1, 2, 3], "é": [], "": [Int.min]],
    byNumber: [1: "one", 20: "twenty", -3: "minus three"], optionals: [1, nil, 3],
    sonnets: [CodableSonnet(number: 18, roman: "XVIII", lines: ["Shall I compare thee to a summer’s day?", "Thou art more lovely and more temperate:"])])

/// A random record: scalars of every kind, nested arrays and dictionaries, optionals.
private struct RandomRecord: Codable, Equatable {
    var name: String
    var count: Int64
    var small: Int8
    var unsigned: UInt64
    var ratio: Double
    var flag: Bool
    var when: Date
    var blob: Data
    var tags: [String]
    var scores: [String: Int]
    var maybe: String?
    var children: [RandomRecord]
}

private func randomString(_ rng: inout SplitMix64) -> String {
    let alphabet: [Character] = ["a", "b", "Z", " ", "’", "é", "ß", "Ω", "中", "🌞", "\u{301}", "0", "$", "<", "&"]
    let n = Int(rng.next() % 24)
    return String((0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
}

private func randomRecord(_ rng: inout SplitMix64, depth: Int) -> RandomRecord {
    var scores: [String: Int] = [:]
    for _ in 0..<Int(rng.next() % 5) { scores[randomString(&rng)] = Int(truncatingIfNeeded: rng.next()) }
    let children = depth < 2 ? (0..<Int(rng.next() % 3)).map { _ in randomRecord(&rng, depth: depth + 1) } : []
    return RandomRecord(
        name: randomString(&rng), count: Int64(bitPattern: rng.next()), small: Int8(truncatingIfNeeded: rng.next()),
        unsigned: rng.next() >> (rng.next() % 64), ratio: Double(Int64(bitPattern: rng.next())) / 1e6,
        flag: rng.next() & 1 == 0,
        when: Date(timeIntervalSinceReferenceDate: Double(Int64(rng.next() % 2_000_000_000) - 1_000_000_000)),
        blob: Data((0..<Int(rng.next() % 9)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }),
        tags: (0..<Int(rng.next() % 6)).map { _ in randomString(&rng) }, scores: scores,
        maybe: rng.next() & 1 == 0 ? nil : randomString(&rng), children: children)
}

private func encoder(_ format: PlistFormat) -> PlistEncoder {
    var e = PlistEncoder()
    e.outputFormat = format
    return e
}

private func pathString(_ path: [any CodingKey]) -> String {
    path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
}

/// The coding path of a DecodingError.
private func decodingPath(_ error: any Error) -> String? {
    switch error as? DecodingError {
    case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): return pathString(c.codingPath)
    case .keyNotFound(let k, let c): return pathString(c.codingPath + [k])
    default: return nil
    }
}

@Suite struct PlistCodableTests {
    @Test(arguments: PlistFormat.allCases)
    func roundTripsEverything(format: PlistFormat) throws {
        let bytes: [UInt8] = try encoder(format).encode(everything)
        #expect(PlistFormat.sniff(bytes) == format)
        #expect(try PlistDecoder().decode(Everything.self, fromAnyFormat: bytes) == everything)
        if format == .xml {
            // XML is FolioPlistXML's: the portable decoder refuses it as corrupt, never misreads it.
            #expect(throws: DecodingError.self) { try PlistDecoder().decode(Everything.self, from: bytes) }
        } else {
            #expect(try PlistDecoder().decode(Everything.self, from: bytes) == everything)
            #expect(try PlistDecoder().decode(Everything.self, from: Data(bytes)) == everything)
        }
    }

    @Test func fastBinaryEncodingMatchesGeneralPath() throws {
        let e = PlistEncoder()
        let fast: [UInt8] = try e.encode(everything)
        #expect(fast == BinaryPlist.encode(try e.encodeValue(everything)))
        let value = try BinaryPlist.decode(fast)
        #expect(value == (try e.encodeValue(everything)))
        #expect(try PlistDecoder().decode(Everything.self, from: value) == everything)
    }

    @Test func randomValuesAgreeAcrossPathsAndWithFoundation() throws {
        var rng = SplitMix64(seed: 0x5EED_F011_0000_0001)
        let foundation = PropertyListEncoder()
        foundation.outputFormat = .binary
        for round in 0..<200 {
            let records = (0..<Int(rng.next() % 4) + 1).map { _ in randomRecord(&rng, depth: 0) }
            let e = PlistEncoder()
            let fast: [UInt8] = try e.encode(records)
            let tree = try e.encodeValue(records)
            #expect(fast == BinaryPlist.encode(tree), "round \(round): fast and general encodings differ")
            #expect(try PlistDecoder().decode([RandomRecord].self, from: fast) == records, "round \(round)")
            #expect(try PlistDecoder().decode([RandomRecord].self, from: tree) == records, "round \(round)")
            #expect(try PropertyListDecoder().decode([RandomRecord].self, from: Data(fast)) == records, "round \(round): Foundation reads ours")
            let theirs = try foundation.encode(records)
            #expect(try PlistDecoder().decode([RandomRecord].self, from: theirs) == records, "round \(round): we read Foundation's")
            for format in [PlistFormat.xml, .json] {
                let text: [UInt8] = try encoder(format).encode(records)
                #expect(try PlistDecoder().decode([RandomRecord].self, fromAnyFormat: text) == records, "round \(round) \(format)")
            }
        }
    }

    @Test func decodesLikeFoundationFromTheSameBytes() throws {
        let sonnets = (1...40).map { n in
            CodableSonnet(number: n, roman: "N\(n)", lines: (0..<14).map { "Line \($0) of \(n), with a ’ and \(n % 3 == 0 ? "é" : "e")" })
        }
        let foundation = PropertyListEncoder()
        for format in [PropertyListSerialization.PropertyListFormat.binary, .xml] {
            foundation.outputFormat = format
            let data = try foundation.encode(sonnets)
            let ours = try PlistDecoder().decode([CodableSonnet].self, fromAnyFormat: Array(data))
            let theirs = try PropertyListDecoder().decode([CodableSonnet].self, from: data)
            #expect(ours == theirs)
            #expect(ours == sonnets)
        }
        let everythingData = try { () -> Data in foundation.outputFormat = .binary; return try foundation.encode(everything) }()
        #expect(try PlistDecoder().decode(Everything.self, from: everythingData) == everything)
    }

    @Test func errorsCarryCodingPaths() throws {
        let bytes: [UInt8] = try PlistEncoder().encode(["sonnets": [["number": 1, "roman": "I", "lines": ["a", 2]] as [String: PlistValueBox]]])
        struct Wrapper: Decodable { var sonnets: [CodableSonnet] }
        do {
            _ = try PlistDecoder().decode(Wrapper.self, from: bytes)
            Issue.record("expected a type mismatch")
        } catch let error as DecodingError {
            guard case .typeMismatch(let type, let context) = error else { Issue.record("got \(error)"); return }
            #expect(type is String.Type)
            #expect(pathString(context.codingPath) == "sonnets.0.lines.1")
        }
        let missing: [UInt8] = try PlistEncoder().encode([["number": 1]])
        do {
            _ = try PlistDecoder().decode([CodableSonnet].self, from: missing)
            Issue.record("expected keyNotFound")
        } catch let DecodingError.keyNotFound(key, context) {
            #expect(key.stringValue == "roman" || key.stringValue == "lines")
            #expect(pathString(context.codingPath) == "0")
        }
        // The same failures through the tree path.
        for format in [PlistFormat.xml, .json] {
            let text: [UInt8] = try encoder(format).encode([["number": 1]])
            #expect(throws: DecodingError.self) { try PlistDecoder().decode([CodableSonnet].self, fromAnyFormat: text) }
        }
    }

    @Test func integerRangeChecks() throws {
        let big: [UInt8] = try PlistEncoder().encode([300])
        #expect(throws: DecodingError.self) { try PlistDecoder().decode([Int8].self, from: big) }
        #expect(try PlistDecoder().decode([Int16].self, from: big) == [300])
        let negative: [UInt8] = try PlistEncoder().encode([-1])
        #expect(throws: DecodingError.self) { try PlistDecoder().decode([UInt8].self, from: negative) }
        let huge: [UInt8] = try PlistEncoder().encode([UInt64.max])
        #expect(try PlistDecoder().decode([UInt64].self, from: huge) == [UInt64.max])
        do {
            _ = try PlistDecoder().decode([Int64].self, from: huge)
            Issue.record("expected dataCorrupted")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(pathString(context.codingPath) == "0")
        }
        let real: [UInt8] = try PlistEncoder().encode([1.5, 2.0])
        #expect(throws: DecodingError.self) { try PlistDecoder().decode([Int].self, from: real) }
        #expect(try PlistDecoder().decode([Double].self, from: try PlistEncoder().encode([2]) as [UInt8]) == [2.0])
        #expect(throws: DecodingError.self) { try PlistDecoder().decode([Float].self, from: try PlistEncoder().encode([1e300]) as [UInt8]) }
        // Foundation agrees on each.
        #expect(throws: DecodingError.self) { try PropertyListDecoder().decode([Int8].self, from: Data(big)) }
        #expect(throws: DecodingError.self) { try PropertyListDecoder().decode([Int64].self, from: Data(huge)) }
        // Every width's extremes round trip.
        struct Widths: Codable, Equatable {
            var a: [Int8], b: [Int16], c: [Int32], d: [Int64], e: [UInt8], f: [UInt16], g: [UInt32], h: [UInt64], i: [Int], j: [UInt]
        }
        let w = Widths(a: [.min, .max], b: [.min, .max], c: [.min, .max], d: [.min, .max], e: [0, .max], f: [0, .max],
                       g: [0, .max], h: [0, .max], i: [.min, .max], j: [0, .max])
        for format in PlistFormat.allCases {
            #expect(try PlistDecoder().decode(Widths.self, fromAnyFormat: try encoder(format).encode(w) as [UInt8]) == w)
        }
    }

    @Test func typeMismatchesAndNulls() throws {
        let bools: [UInt8] = try PlistEncoder().encode([true])
        #expect(throws: DecodingError.self) { try PlistDecoder().decode([Int].self, from: bools) }
        #expect(throws: DecodingError.self) { try PlistDecoder().decode([Bool].self, from: try PlistEncoder().encode([1]) as [UInt8]) }
        // nil in an unkeyed container is "$null", as Foundation writes it.
        let optionals: [UInt8] = try PlistEncoder().encode([nil, 3] as [Int?])
        #expect(try BinaryPlist.decode(optionals) == .array([.string("$null"), .int(3)]))
        #expect(try PlistDecoder().decode([Int?].self, from: optionals) == [nil, 3])
        #expect(try PropertyListDecoder().decode([Int?].self, from: Data(optionals)) == [nil, 3])
        do {
            _ = try PlistDecoder().decode([String].self, from: try PlistEncoder().encode(["$null"]) as [UInt8])
            Issue.record("expected valueNotFound")
        } catch DecodingError.valueNotFound {}
        // decodeNil(forKey:) of a missing key is keyNotFound, as in Foundation.
        struct NilProbe: Decodable {
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: AnyKey.self)
                _ = try c.decodeNil(forKey: AnyKey("absent"))
            }
        }
        #expect(throws: DecodingError.self) { try PlistDecoder().decode(NilProbe.self, from: try PlistEncoder().encode(["q": 1]) as [UInt8]) }
        // Past the end of an unkeyed container.
        struct TwoInts: Decodable {
            init(from decoder: any Decoder) throws {
                var c = try decoder.unkeyedContainer()
                _ = try c.decode(Int.self)
                _ = try c.decode(Int.self)
            }
        }
        #expect(throws: DecodingError.self) { try PlistDecoder().decode(TwoInts.self, from: try PlistEncoder().encode([1]) as [UInt8]) }
    }

    @Test func nestedContainersAndSuperEncoders() throws {
        let value = Derived(base: 3, extra: "x", pairs: [[1, 2], [3]])
        for format in PlistFormat.allCases {
            let bytes: [UInt8] = try encoder(format).encode(value)
            #expect(try PlistDecoder().decode(Derived.self, fromAnyFormat: bytes) == value)
        }
        let binary: [UInt8] = try PlistEncoder().encode(value)
        let tree = try BinaryPlist.decode(binary)
        #expect(tree["super"] == .dict(["base": .int(3)]))
        #expect(tree["info"]?["extra"] == .string("x"))
        #expect(tree["info"]?["pairs"] == .array([.array([.int(1), .int(2)]), .array([.int(3)])]))
        // Foundation reads it the same way.
        #expect(try PropertyListDecoder().decode(Derived.self, from: Data(binary)) == value)
        // An unused super encoder is an empty dictionary, as in Foundation.
        struct UnusedSuper: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: AnyKey.self)
                _ = c.superEncoder()
                try c.encodeNil(forKey: AnyKey("n"))
            }
        }
        #expect(try BinaryPlist.decode(try PlistEncoder().encode(UnusedSuper()) as [UInt8]) == .dict(["super": .dict([:]), "n": .string("$null")]))
    }

    @Test func urlsDatesAndData() throws {
        struct Misc: Codable, Equatable { var url: URL; var date: Date; var data: Data }
        let m = Misc(url: URL(string: "https://example.com/a?b=c")!, date: Date(timeIntervalSinceReferenceDate: 12_345), data: Data("hi".utf8))
        let binary: [UInt8] = try PlistEncoder().encode(m)
        #expect(try BinaryPlist.decode(binary)["url"] == .string("https://example.com/a?b=c"))
        for format in PlistFormat.allCases {
            #expect(try PlistDecoder().decode(Misc.self, fromAnyFormat: try encoder(format).encode(m) as [UInt8]) == m)
        }
        // Foundation on Linux writes URL as {relative: ...}; that reads too.
        let theirs = try { () -> Data in let e = PropertyListEncoder(); e.outputFormat = .binary; return try e.encode(m) }()
        #expect(try PlistDecoder().decode(Misc.self, from: theirs) == m)
    }

    @Test func duplicateKeysKeepTheLastValue() throws {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: AnyKey.self)
                try c.encode(1, forKey: AnyKey("k"))
                try c.encode("b", forKey: AnyKey("z"))
                try c.encode(2, forKey: AnyKey("k"))
            }
        }
        let e = PlistEncoder()
        let fast: [UInt8] = try e.encode(Twice())
        #expect(try BinaryPlist.decode(fast) == .dict(["k": .int(2), "z": .string("b")]))
        #expect(fast == BinaryPlist.encode(try e.encodeValue(Twice())))
    }

    @Test func fragmentsAndEmptyValues() throws {
        #expect(try PlistDecoder().decode(Int.self, from: try PlistEncoder().encode(42) as [UInt8]) == 42)
        #expect(try PlistDecoder().decode(String.self, fromAnyFormat: try encoder(.xml).encode("x") as [UInt8]) == "x")
        struct Empty: Encodable { func encode(to encoder: any Encoder) throws {} }
        #expect(throws: EncodingError.self) { try PlistEncoder().encode(Empty()) as [UInt8] }
        #expect(try BinaryPlist.decode(try PlistEncoder().encode([Empty()]) as [UInt8]) == .array([.dict([:])]))
        #expect(throws: EncodingError.self) { try encoder(.json).encode([Double.nan]) as [UInt8] }
    }

    @Test func malformedInputIsAnErrorNotACrash() throws {
        let good: [UInt8] = try PlistEncoder().encode(everything)
        for cut in stride(from: 0, to: good.count, by: 7) {
            #expect(throws: DecodingError.self) { try PlistDecoder().decode(Everything.self, from: Array(good[0..<cut])) }
        }
        var rng = SplitMix64(seed: 77)
        for _ in 0..<300 {
            var bad = good
            bad[8 + Int(rng.next() % UInt64(bad.count - 8))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            _ = try? PlistDecoder().decode(Everything.self, from: bad)
        }
        // An array that contains itself, read as a recursive type: an error, not endless recursion.
        let cycle: [UInt8] = Array("bplist00".utf8) + [0xA1, 0x00, 0x08] + [0, 0, 0, 0, 0, 0, 1, 1]
            + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 10]
        #expect(throws: DecodingError.self) { try PlistDecoder().decode(Tree.self, from: cycle) }
    }

    @Test func userInfoReachesTheCodedTypes() throws {
        let key = CodingUserInfoKey(rawValue: "folio.test")!
        var e = PlistEncoder()
        e.userInfo[key] = "enc"
        var d = PlistDecoder()
        d.userInfo[key] = "dec"
        let bytes: [UInt8] = try e.encode(InfoProbe(seen: ""))
        #expect(try BinaryPlist.decode(bytes) == .string("enc"))
        #expect(try d.decode(InfoProbe.self, from: bytes).seen == "dec")
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ s: String) { stringValue = s }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private struct InfoProbe: Codable {
    var seen: String
    init(seen: String) { self.seen = seen }
    init(from decoder: any Decoder) throws {
        seen = decoder.userInfo[CodingUserInfoKey(rawValue: "folio.test")!] as? String ?? "none"
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(encoder.userInfo[CodingUserInfoKey(rawValue: "folio.test")!] as? String ?? "none")
    }
}

private struct Tree: Decodable {
    var children: [Tree]
    init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        var children: [Tree] = []
        while !c.isAtEnd { children.append(try c.decode(Tree.self)) }
        self.children = children
    }
}

/// A value of mixed type inside a dictionary literal, for building ill-typed input.
private enum PlistValueBox: Encodable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral {
    case int(Int), string(String), array([PlistValueBox])
    init(integerLiteral value: Int) { self = .int(value) }
    init(stringLiteral value: String) { self = .string(value) }
    init(arrayLiteral elements: PlistValueBox...) { self = .array(elements) }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .int(let i): try c.encode(i)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        }
    }
}

private class Base: Codable, Equatable {
    var base: Int
    init(base: Int) { self.base = base }
    static func == (a: Base, b: Base) -> Bool { a.base == b.base && type(of: a) == type(of: b) && a.isEqual(b) }
    func isEqual(_ other: Base) -> Bool { true }
}

private final class Derived: Base {
    var extra: String
    var pairs: [[Int]]
    enum CodingKeys: String, CodingKey { case info }
    enum InfoKeys: String, CodingKey { case extra, pairs }

    init(base: Int, extra: String, pairs: [[Int]]) {
        self.extra = extra
        self.pairs = pairs
        super.init(base: base)
    }

    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let info = try c.nestedContainer(keyedBy: InfoKeys.self, forKey: .info)
        extra = try info.decode(String.self, forKey: .extra)
        var outer = try info.nestedUnkeyedContainer(forKey: .pairs)
        var pairs: [[Int]] = []
        while !outer.isAtEnd {
            var inner = try outer.nestedUnkeyedContainer()
            var row: [Int] = []
            while !inner.isAtEnd { row.append(try inner.decode(Int.self)) }
            pairs.append(row)
        }
        self.pairs = pairs
        try super.init(from: c.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        var info = c.nestedContainer(keyedBy: InfoKeys.self, forKey: .info)
        try info.encode(extra, forKey: .extra)
        var outer = info.nestedUnkeyedContainer(forKey: .pairs)
        for row in pairs {
            var inner = outer.nestedUnkeyedContainer()
            for v in row { try inner.encode(v) }
        }
        try super.encode(to: c.superEncoder())
    }

    override func isEqual(_ other: Base) -> Bool {
        guard let o = other as? Derived else { return false }
        return o.extra == extra && o.pairs == pairs
    }
}
