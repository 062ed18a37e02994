import FolioTestSupport
import Foundation
import Testing

@testable import FolioCatalogs
@testable import FolioLocalization
@testable import FolioPlist
@testable import FolioPublished
@testable import FolioSupport
@testable import FolioToolSupport

@Suite("Roman numerals")
struct RomanNumeralTests {
    @Test("format and parse round-trip for 1...3999, in either case")
    func roundTrip() {
        var seen = Set<String>()
        for n in 1...3999 {
            let s = RomanNumeral.format(n)
            #expect(RomanNumeral.parse(s) == n, "\(n) -> \(s)")
            #expect(RomanNumeral.parse(s.lowercased()) == n, "\(n) -> \(s.lowercased())")
            #expect(s.allSatisfy { "IVXLCDM".contains($0) })
            seen.insert(s)
        }
        #expect(seen.count == 3999, "every number has its own numeral")
    }

    @Test("canonical forms", arguments: [
        (1, "I"), (3, "III"), (4, "IV"), (9, "IX"), (14, "XIV"), (18, "XVIII"), (40, "XL"), (90, "XC"), (99, "XCIX"),
        (154, "CLIV"), (400, "CD"), (900, "CM"), (1994, "MCMXCIV"), (2024, "MMXXIV"), (3888, "MMMDCCCLXXXVIII"),
        (3999, "MMMCMXCIX"),
    ])
    func canonical(n: Int, numeral: String) {
        #expect(RomanNumeral.format(n) == numeral)
        #expect(RomanNumeral.parse(numeral) == n)
    }

    @Test("non-canonical or invalid numerals are rejected", arguments: [
        "", "IIII", "VV", "IC", "IIV", "XM", "VX", "LL", "DD", "IL", "XD", "XXXX", "CCCC", "MMMM", "IM", "VIV",
        "MCMXCIVI", "ABC", " I", "I ", "IV ", "0", "-I", "I\u{301}", "Ⅳ",
    ])
    func rejected(numeral: String) {
        #expect(RomanNumeral.parse(numeral) == nil, "\(numeral) accepted as \(String(describing: RomanNumeral.parse(numeral)))")
    }

    @Test("lowercase and mixed case are accepted")
    func caseInsensitive() {
        #expect(RomanNumeral.parse("xiv") == 14)
        #expect(RomanNumeral.parse("mcmxciv") == 1994)
        #expect(RomanNumeral.parse("Xiv") == 14)
        #expect(RomanNumeral.parse(Substring("cliv")) == 154)
    }
}

@Suite("UTF-8 validation")
struct UTF8ValidationTests {
    @Test("well-formed input has no invalid offset")
    func valid() {
        for s in ["", "plain ascii", "é日𝄞", "Ünïcödé\n日本語\n😀", "\u{0}\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}"] {
            #expect(UTF8Validation.firstInvalidOffset(Array(s.utf8)) == nil, "\(s)")
        }
    }

    @Test("the first bad byte is found where it is", arguments: [
        ([0xFF], 0), (Array("ab".utf8) + [0xFF], 2), ([0xFE], 0), ([0x80], 0), (Array("x".utf8) + [0xBF, 0x41], 1),
        ([0xC0, 0x80], 0), (Array("a".utf8) + [0xC1, 0xBF], 1),  // overlong 2-byte
        ([0xE0, 0x80, 0x80], 0), ([0xE0, 0x9F, 0xBF], 0),  // overlong 3-byte
        ([0xF0, 0x80, 0x80, 0x80], 0), ([0xF0, 0x8F, 0xBF, 0xBF], 0),  // overlong 4-byte
        ([0xED, 0xA0, 0x80], 0), (Array("xy".utf8) + [0xED, 0xBF, 0xBF], 2),  // UTF-16 surrogates
        ([0xF4, 0x90, 0x80, 0x80], 0), ([0xF5, 0x80, 0x80, 0x80], 0),  // above U+10FFFF
        (Array("abc".utf8) + [0xE6, 0x97], 3), ([0xF0, 0x9D, 0x84], 0), (Array("é".utf8) + [0xC3], 2),  // truncated
        ([0xE6, 0x41, 0x41], 0), ([0xF0, 0x9D, 0x41, 0x9E], 0), ([0xE6, 0x97, 0xC3, 0xA9], 0),  // bad continuation
        (Array("日本".utf8) + [0xFF] + Array("語".utf8), 6), (Array("ok".utf8) + [0xC3, 0xA9, 0xC3], 4),
    ] as [([UInt8], Int)])
    func invalid(bytes: [UInt8], offset: Int) {
        #expect(UTF8Validation.firstInvalidOffset(bytes) == offset, "\(hex(bytes))")
    }

    @Test("line and column of a byte offset, counting characters not bytes")
    func position() {
        let bytes = Array("ab\ncd\néx".utf8)
        #expect(UTF8Validation.position(of: 0, in: bytes) == (1, 1))
        #expect(UTF8Validation.position(of: 1, in: bytes) == (1, 2))
        #expect(UTF8Validation.position(of: 2, in: bytes) == (1, 3))
        #expect(UTF8Validation.position(of: 3, in: bytes) == (2, 1))
        #expect(UTF8Validation.position(of: 4, in: bytes) == (2, 2))
        #expect(UTF8Validation.position(of: 6, in: bytes) == (3, 1))
        #expect(UTF8Validation.position(of: 8, in: bytes) == (3, 2))
        #expect(UTF8Validation.position(of: 100, in: bytes) == (3, 3))
    }

    @Test("finding and locating a bad byte together")
    func findAndLocate() throws {
        let bytes = Array("line one\nsecond é".utf8) + [0xFF] + Array(" tail\n".utf8)
        let bad = try #require(UTF8Validation.firstInvalidOffset(bytes))
        #expect(bad == 18)
        #expect(UTF8Validation.position(of: bad, in: bytes) == (2, 9))
    }
}

@Suite("Test support")
struct TestSupportTests {
    @Test("SplitMix64 matches the reference implementation")
    func splitMix() {
        var rng = SplitMix64(seed: 0)
        #expect(rng.next() == 0xE220_A839_7B1D_CDAF)
        #expect(rng.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(rng.next() == 0x06C4_5D18_8009_454F)
    }

    @Test("the strict comparison tells apart what == does not")
    func strictComparison() {
        #expect(PlistValue.real(0.0) == .real(-0.0))
        #expect(!identical(.real(0.0), .real(-0.0)))
        #expect(identical(.real(.nan), .real(.nan)))
        #expect(PlistValue.string("\u{E9}") == .string("e\u{301}"))
        #expect(!identical(.string("\u{E9}"), .string("e\u{301}")))
        #expect(!identical(.array([.int(1)]), .set([.int(1)])))
        #expect(!identical(.int(1), .uint(1)))
        #expect(identical(.dict(["a": .array([.int(1)])]), .dict(["a": .array([.int(1)])])))
        #expect(!identical(.dict(["a": .int(1)]), .dict(["b": .int(1)])))
    }
}
