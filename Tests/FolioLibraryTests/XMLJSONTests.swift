import FolioTestSupport
import Foundation
import Testing

@testable import FolioPlist
@testable import FolioPlistXML

private func xml(_ body: String) -> [UInt8] {
    Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        \(body)
        </plist>

        """.utf8)
}

/// Expects an XML decoding error of `kind` that names a line.
@discardableResult
private func expectXMLError(
    _ kind: PlistError.Kind, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
) -> PlistError? {
    let error = expectPlistError(kind, sourceLocation: sourceLocation) { () throws(PlistError) -> PlistValue in
        try XMLPlist.decode(bytes)
    }
    if let error {
        #expect(error.line.map { $0 >= 1 } == true, "an XML error must name its line: \(error)", sourceLocation: sourceLocation)
    }
    return error
}

@Suite("XML plists")
struct XMLPlistTests {
    static let blob = Data(0...50)

    /// A plist in the layout Xcode and `plutil -convert xml1` produce.
    static let appleStyle: [UInt8] = {
        let b64 = blob.base64EncodedString()
        let wrapped = stride(from: 0, to: b64.count, by: 36).map { i -> String in
            let start = b64.index(b64.startIndex, offsetBy: i)
            let end = b64.index(start, offsetBy: min(36, b64.count - i))
            return "\t" + b64[start..<end]
        }.joined(separator: "\n")
        return xml(
            """
            <dict>
            \t<key>CFBundleName</key>
            \t<string>Folio &amp; Friends &lt;beta&gt;</string>
            \t<key>count</key>
            \t<integer>42</integer>
            \t<key>negative</key>
            \t<integer>-17</integer>
            \t<key>big</key>
            \t<integer>18446744073709551615</integer>
            \t<key>hex</key>
            \t<integer>0x1F</integer>
            \t<key>ratio</key>
            \t<real>0.75</real>
            \t<key>whole</key>
            \t<real>3</real>
            \t<key>enabled</key>
            \t<true/>
            \t<key>disabled</key>
            \t<false/>
            \t<key>created</key>
            \t<date>2024-02-29T12:30:15Z</date>
            \t<key>blob</key>
            \t<data>
            \(wrapped)
            \t</data>
            \t<key>items</key>
            \t<array>
            \t\t<string>one</string>
            \t\t<integer>2</integer>
            \t\t<array/>
            \t\t<dict/>
            \t\t<string></string>
            \t</array>
            \t<key>$top</key>
            \t<dict>
            \t\t<key>CF$UID</key>
            \t\t<integer>3</integer>
            \t</dict>
            \t<key>comment</key>
            \t<!-- comments are ignored -->
            \t<string><![CDATA[<raw> & text]]></string>
            \t<key>unicode</key>
            \t<string>Ünïcödé &#x1D11E; 日本</string>
            \t<key>  spaced  </key>
            \t<string>  kept  </string>
            </dict>
            """)
    }()

    @Test("decodes an Apple-style plist with every element")
    func appleStyleDecode() throws {
        #expect(Self.blob.base64EncodedString().count > 36, "the data element really is line-wrapped")
        let value = try XMLPlist.decode(Self.appleStyle)
        let expected: PlistValue = .dict([
            "CFBundleName": .string("Folio & Friends <beta>"), "count": .int(42), "negative": .int(-17),
            "big": .uint(.max), "hex": .int(31), "ratio": .real(0.75), "whole": .real(3), "enabled": .bool(true),
            "disabled": .bool(false), "created": .date(Date(timeIntervalSinceReferenceDate: 730_902_615)),
            "blob": .data(Self.blob), "items": .array([.string("one"), .int(2), .array([]), .dict([:]), .string("")]),
            "$top": .uid(3), "comment": .string("<raw> & text"), "unicode": .string("Ünïcödé 𝄞 日本"),
            "  spaced  ": .string("  kept  "),
        ])
        #expect(identical(value, expected), "\(value)")
        #expect(try PlistValue.decodeAnyFormat(Self.appleStyle) == expected)
        // The portable reader refuses XML, saying who reads it.
        let refused = expectPlistError(.unsupported) { () throws(PlistError) in try PlistValue.decode(Self.appleStyle) }
        #expect(refused?.message.contains("FolioPlistXML") == true)
    }

    @Test("a bare value without <plist>, and a CF$UID dictionary with other keys stays a dictionary")
    func looseForms() throws {
        #expect(try XMLPlist.decode(Array("<array><integer>1</integer></array>".utf8)) == .array([.int(1)]))
        let notUID = try XMLPlist.decode(xml("<dict><key>CF$UID</key><integer>1</integer><key>x</key><true/></dict>"))
        #expect(notUID == .dict(["CF$UID": .int(1), "x": .bool(true)]))
    }

    @Test("numbers, dates and reals in their accepted spellings")
    func scalarSpellings() throws {
        func decode(_ element: String) throws -> PlistValue { try XMLPlist.decode(xml(element)) }
        #expect(try decode("<integer> 7 </integer>") == .int(7))
        #expect(try decode("<integer>-9223372036854775808</integer>") == .int(.min))
        #expect(try decode("<integer>9223372036854775808</integer>") == .uint(1 << 63))
        #expect(try decode("<real>1e3</real>") == .real(1000))
        #expect(try decode("<real>inf</real>") == .real(.infinity))
        #expect(try decode("<real>-infinity</real>") == .real(-.infinity))
        #expect(try decode("<real>+infinity</real>") == .real(.infinity))
        #expect(try decode("<real>nan</real>").doubleValue?.isNaN == true)
        #expect(try decode("<date>2001-01-01T00:00:00.5Z</date>") == .date(Date(timeIntervalSinceReferenceDate: 0.5)))
        #expect(try decode("<date>2001-01-01T01:00:00+01:00</date>") == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(try decode("<date>1969-07-20T20:17:40Z</date>") == .date(Date(timeIntervalSinceReferenceDate: -992_490_140)))
        #expect(try decode("<data></data>") == .data(Data()))
    }

    @Test("malformed XML throws a syntax error naming the line")
    func malformed() {
        let mismatched = Array("<plist version=\"1.0\">\n<dict>\n<key>a</key>\n<string>x</strin>\n</dict>\n</plist>\n".utf8)
        #expect(expectXMLError(.syntax, mismatched)?.line == 4)
        let bareAmpersand = Array("<plist>\n<string>fish & chips</string>\n</plist>".utf8)
        #expect(expectXMLError(.syntax, bareAmpersand)?.line == 2)
        expectXMLError(.syntax, Array("<plist><array><string>x</string>".utf8))
        expectXMLError(.syntax, Array("not xml at all".utf8))
        expectXMLError(.syntax, [])
    }

    @Test("structural errors: unknown elements, a key without a value, misplaced keys, duplicates")
    func structure() {
        #expect(expectXMLError(.badValue, xml("<dict>\n<key>a</key>\n<foo/>\n</dict>"))?.line == 6)
        expectXMLError(.badValue, xml("<dict><key>a</key></dict>"))
        expectXMLError(.badValue, xml("<dict><key>a</key><string>x</string><key>b</key></dict>"))
        expectXMLError(.badKey, xml("<dict><string>v</string><key>k</key></dict>"))
        expectXMLError(.duplicateKey, xml("<dict><key>k</key><true/><key>k</key><false/></dict>"))
        expectXMLError(.badValue, xml("<true/><false/>"))
        expectXMLError(.badValue, xml(""))
        expectXMLError(.badValue, xml("<string>a<b/>c</string>"))
    }

    @Test("bad scalar contents")
    func badScalars() {
        for body in ["<integer>12a</integer>", "<integer>1.5</integer>", "<integer></integer>",
                     "<integer>18446744073709551616</integer>", "<integer>-9223372036854775809</integer>",
                     "<real>abc</real>", "<real></real>"] {
            expectXMLError(.badNumber, xml(body))
        }
        for body in ["<date>2001-13-01T00:00:00Z</date>", "<date>yesterday</date>", "<date>2001-01-01T00:00:00</date>",
                     "<data>!!!!</data>", "<data>AAE</data>"] {
            expectXMLError(.badValue, xml(body))
        }
    }

    @Test("entity references are not expanded (no XXE)")
    func entities() {
        let internalEntity = Array("""
            <?xml version="1.0"?>
            <!DOCTYPE plist [<!ENTITY e "expanded">]>
            <plist><string>&e;</string></plist>
            """.utf8)
        expectXMLError(.unsupported, internalEntity)
        let external = Array("""
            <?xml version="1.0"?>
            <!DOCTYPE plist [<!ENTITY e SYSTEM "file:///etc/passwd">]>
            <plist><string>&e;</string></plist>
            """.utf8)
        do throws(PlistError) {
            let value = try XMLPlist.decode(external)
            #expect(!(value.stringValue ?? "").contains("root:"), "an external entity was read: \(value)")
        } catch {
            #expect(error.kind == .unsupported || error.kind == .syntax, "\(error)")
        }
    }

    @Test("encoding: Apple's layout, tab-indented, keys sorted, special characters escaped")
    func golden() throws {
        let encoded = try XMLPlist.encode(.dict([
            "b": .bool(true), "a": .array([.int(1), .string("x & <y> ]]>"), .real(0.5)]), "c": .dict([:]), "d": .array([]),
            "u": .uid(4), "s": .set([.int(2)]),
        ]))
        let expected = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>a</key>
            \t<array>
            \t\t<integer>1</integer>
            \t\t<string>x &amp; &lt;y&gt; ]]&gt;</string>
            \t\t<real>0.5</real>
            \t</array>
            \t<key>b</key>
            \t<true/>
            \t<key>c</key>
            \t<dict/>
            \t<key>d</key>
            \t<array/>
            \t<key>s</key>
            \t<array>
            \t\t<integer>2</integer>
            \t</array>
            \t<key>u</key>
            \t<dict>
            \t\t<key>CF$UID</key>
            \t\t<integer>4</integer>
            \t</dict>
            </dict>
            </plist>

            """
        #expect(String(decoding: encoded, as: UTF8.self) == expected)
    }

    @Test("scalar formatting: reals like Foundation, dates in whole UTC seconds")
    func formatting() {
        #expect(XMLPlist.formatReal(1) == "1")
        #expect(XMLPlist.formatReal(-3) == "-3")
        #expect(XMLPlist.formatReal(0.1) == "0.1")
        #expect(XMLPlist.formatReal(.infinity) == "inf")
        #expect(XMLPlist.formatReal(-.infinity) == "-inf")
        #expect(XMLPlist.formatReal(.nan) == "nan")
        #expect(PlistDates.formatISO8601(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00Z")
        #expect(PlistDates.formatISO8601(Date(timeIntervalSinceReferenceDate: 730_902_615.9)) == "2024-02-29T12:30:15Z")
        #expect(PlistDates.formatISO8601(Date(timeIntervalSinceReferenceDate: -992_490_140)) == "1969-07-20T20:17:40Z")
        #expect(PlistDates.parseISO8601("2024-02-29T12:30:15Z") == Date(timeIntervalSinceReferenceDate: 730_902_615))
        #expect(PlistDates.parseISO8601("2024-02-29T24:00:00Z") == nil)
        #expect(PlistDates.parseISO8601("2024-02-29T12:30:15.Z") == nil)
        #expect(PlistDates.parseISO8601("2024-02-29T12:30:15Zjunk") == nil)
    }

    @Test("strings that XML cannot hold (U+0001 and other controls, U+FFFE, U+FFFF) are refused on encode")
    func unencodableStrings() {
        for s in ["\u{1}", "a\u{0}b", "\u{1F}", "\u{FFFE}", "\u{FFFF}", "\u{8}", "ok\u{1B}[0m"] {
            let comment: Comment = "\(String(reflecting: s))"
            expectPlistError(.badString, comment) { () throws(PlistError) -> [UInt8] in try XMLPlist.encode(.string(s)) }
            expectPlistError(.badString, comment) { () throws(PlistError) -> [UInt8] in try XMLPlist.encode(.dict([s: .int(1)])) }
            expectPlistError(.badString, comment) { () throws(PlistError) -> [UInt8] in try XMLPlist.encode(.array([.bool(true), .string(s)])) }
        }
    }

    @Test("whitespace and markup characters round-trip", arguments: ["tab\there", "line\nbreak", "  padded  ", "<&>\"'", "]]>", "\u{7F}", "𝄞é日"])
    func stringRoundTrip(s: String) throws {
        let back = try XMLPlist.decode(XMLPlist.encode(.dict([s: .string(s)])))
        #expect(identical(back, .dict([s: .string(s)])), "\(back)")
    }

    @Test("a carriage return survives an XML round trip")
    func carriageReturn() throws {
        for s in ["a\rb", "windows\r\nline", "\r"] {
            let back = try XMLPlist.decode(XMLPlist.encode(.string(s)))
            #expect(back.stringValue.map { sameScalars($0, s) } == true,
                    "\(s.unicodeScalars.map(\.value)) came back as \(back.stringValue?.unicodeScalars.map(\.value) ?? [])")
        }
    }

    @Test("-0.0 keeps its sign through XML")
    func negativeZero() throws {
        let back = try XMLPlist.decode(XMLPlist.encode(.real(-0.0)))
        #expect(identical(back, .real(-0.0)), "-0.0 came back as \(back)")
    }

    @Test("200 seeded random documents round-trip (sets as arrays, dates in whole seconds)")
    func randomRoundTrip() throws {
        var generator = ValueGenerator(seed: 0x0C0FFEE, options: .xml)
        for i in 0..<200 {
            let value = generator.value()
            let back = try XMLPlist.decode(XMLPlist.encode(value))
            #expect(identical(back, normalisedForXML(value)), "document \(i): \(value) came back as \(back)")
        }
    }

    @Test("nesting: a 300-deep document (valid in binary) round-trips through XML")
    func deepDocument() throws {
        let value = nestedArrays(300)
        #expect(try BinaryPlist.decode(BinaryPlist.encode(value)) == value)
        let back = try XMLPlist.decode(XMLPlist.encode(value))
        #expect(back == value)
    }

    @Test("nesting deeper than maxDepth is refused")
    func tooDeep() {
        #expect(throws: PlistError.self) { try XMLPlist.decode(XMLPlist.encode(nestedArrays(600))) }
    }
}

/// Expects a JSON decoding error of `kind` at `line`:`column`.
@discardableResult
private func expectJSONError(
    _ kind: PlistError.Kind, _ text: String, line: Int? = nil, column: Int? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> PlistError? {
    let error = expectPlistError(kind, "input: \(String(reflecting: text))", sourceLocation: sourceLocation) { () throws(PlistError) -> PlistValue in
        try JSONPlist.decode(Array(text.utf8))
    }
    if let error {
        #expect(error.line != nil && error.column != nil && error.offset != nil, "JSON errors say where: \(error)", sourceLocation: sourceLocation)
        if let line { #expect(error.line == line, "\(error)", sourceLocation: sourceLocation) }
        if let column { #expect(error.column == column, "\(error)", sourceLocation: sourceLocation) }
    }
    return error
}

private func json(_ text: String) throws(PlistError) -> PlistValue {
    try JSONPlist.decode(Array(text.utf8))
}

@Suite("JSON plists")
struct JSONPlistTests {
    @Test("decodes every JSON form")
    func decode() throws {
        let text = #"""
            {
              "name": "Folio",
              "count": 3,
              "ratio": 1.5,
              "whole real": 1.0,
              "exp": 1e2,
              "neg": -0.5,
              "flags": [true, false],
              "nested": {"a": [], "b": {}},
              "uid": {"CF$UID": 7},
              "unicode": "\u00e9\ud834\udd1e\u65E5 raw é 𝄞",
              "escapes": "\"\\\/\b\f\n\r\t\u0001"
            }
            """#
        let value = try json(text)
        let expected: PlistValue = .dict([
            "name": .string("Folio"), "count": .int(3), "ratio": .real(1.5), "whole real": .real(1.0), "exp": .real(100),
            "neg": .real(-0.5), "flags": .array([.bool(true), .bool(false)]), "nested": .dict(["a": .array([]), "b": .dict([:])]),
            "uid": .uid(7), "unicode": .string("é𝄞日 raw é 𝄞"), "escapes": .string("\"\\/\u{8}\u{C}\n\r\t\u{1}"),
        ])
        #expect(identical(value, expected), "\(value)")
        #expect(try PlistValue.decode(Array(text.utf8)) == expected)
        #expect(try json("\u{FEFF}[1]") == .array([.int(1)]), "a UTF-8 byte-order mark is skipped")
    }

    @Test("integers stay integers, reals stay reals")
    func numbers() throws {
        #expect(try json("1") == .int(1))
        #expect(identical(try json("1.0"), .real(1)))
        #expect(identical(try json("1.5"), .real(1.5)))
        #expect(identical(try json("1E2"), .real(100)))
        #expect(identical(try json("-0"), .int(0)))
        #expect(identical(try json("-0.0"), .real(-0.0)))
        #expect(try json("9223372036854775807") == .int(.max))
        #expect(try json("-9223372036854775808") == .int(.min))
        #expect(try json("9223372036854775808") == .uint(1 << 63))
        #expect(try json("18446744073709551615") == .uint(.max))
        // Beyond 64 bits an integer would lose digits as a real: refused, with where (issue #29).
        #expect(throws: PlistError.self) { try json("18446744073709551616") }
        #expect(try json("18446744073709551616.0") == .real(18_446_744_073_709_551_616.0))

        #expect(try JSONPlist.encode(.int(1)) == Array("1\n".utf8))
        #expect(try JSONPlist.encode(.real(1)) == Array("1.0\n".utf8))
        #expect(try JSONPlist.encode(.real(1.5)) == Array("1.5\n".utf8))
        #expect(try JSONPlist.encode(.real(-0.0)) == Array("-0.0\n".utf8))
        #expect(try JSONPlist.encode(.uint(.max)) == Array("18446744073709551615\n".utf8))
        for r in [1e20, .leastNonzeroMagnitude, 0.1, -1e15, 123_456_789.125] {
            #expect(identical(try json(String(decoding: JSONPlist.encode(.real(r)), as: UTF8.self)), .real(r)), "\(r)")
        }
    }

    @Test("integers and strings are written as String(n) and the escapes give them")
    func writtenForms() throws {
        var rng = SplitMix64(seed: 0x150)
        let ints: [Int64] = [0, 1, -1, 9, 10, -10, .max, .min, .min + 1] + (0..<200).map { _ in Int64(bitPattern: rng.next()) >> rng.int(0...63) }
        for n in ints { #expect(try JSONPlist.encode(.int(n), pretty: false) == Array((String(n) + "\n").utf8)) }
        let strings = ["", "plain", "é 𝄞 日", "quote \" here", "back\\slash", "line\nbreak", "\u{1}\u{1F}\t\r", "\u{7F} DEL stays"]
        for text in strings {
            var slow: [UInt8] = [UInt8(ascii: "\"")]
            for b in text.utf8 {
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): slow += [0x5C, b]
                case 0x0A: slow += Array("\\n".utf8)
                case 0x0D: slow += Array("\\r".utf8)
                case 0x09: slow += Array("\\t".utf8)
                case 0..<0x20: slow += Array(String(format: "\\u%04x", b).utf8)
                default: slow.append(b)
                }
            }
            slow.append(UInt8(ascii: "\""))
            #expect(try JSONPlist.encode(.string(text), pretty: false) == slow + [0x0A], "\(text)")
            #expect(try json(String(decoding: JSONPlist.encode(.string(text)), as: UTF8.self)) == .string(text))
        }
        let dict: PlistValue = .dict(["b": .int(2), "a": .array([.int(-3)]), "é": .string("x"), "Z": .dict([:])])
        #expect(String(decoding: try JSONPlist.encode(dict, pretty: false), as: UTF8.self) == #"{"Z":{},"a":[-3],"b":2,"é":"x"}"# + "\n")
    }

    @Test("a missing comma on line 3 is reported at line 3")
    func errorPosition() {
        expectJSONError(.syntax, "{\n  \"a\": 1,\n  \"b\": 2 \"c\": 3\n}", line: 3, column: 10)
        expectJSONError(.syntax, "[\n  1,\n  2 3\n]", line: 3, column: 5)
        // Columns count characters, not bytes.
        let error = expectJSONError(.syntax, "{\n\"a\": 1,\n\"é\": tru\n}", line: 3, column: 6)
        #expect(error?.offset == 16)
        expectJSONError(.syntax, "[1, 2", line: 1, column: 1)
        expectJSONError(.syntax, "\n\n\n   ]", line: 4, column: 4)
    }

    @Test("null is rejected: property lists have no null")
    func null() {
        expectJSONError(.unsupported, "{\n  \"a\": null\n}", line: 2, column: 8)
        expectJSONError(.unsupported, "null")
    }

    @Test("a duplicate key is rejected, at the second occurrence")
    func duplicateKey() {
        let error = expectPlistError(.duplicateKey) { () throws(PlistError) -> PlistValue in
            try json("{\n  \"k\": 1,\n  \"k\": 2\n}")
        }
        #expect(error?.line == 3)
        #expect(error?.column == 3)
        #expect(error?.message.contains("\"k\"") == true, "\(String(describing: error))")
    }

    @Test("\\u escapes, surrogate pairs, and unpaired surrogates")
    func unicodeEscapes() throws {
        #expect(try json(#""\u00e9""#) == .string("é"))
        #expect(identical(try json(#""\ud834\udd1e""#), .string("𝄞")))
        #expect(identical(try json(#""\uD83D\uDE00!""#), .string("😀!")))
        #expect(identical(try json(#""\u0000""#), .string("\u{0}")))
        for bad in [#""\ud834""#, #""\udd1e""#, #""\ud834\u0041""#, #""\ud834x""#, #""\u12""#, #""\u12G4""#] {
            expectJSONError(.syntax, bad)
        }
    }

    @Test("invalid JSON", arguments: [
        "", "   ", "01", "1.", ".5", "+1", "-", "1e", "[1,]", "{\"a\":1,}", "[1] x", "'single'", "\"unterminated",
        "\"tab\there\"", "\"\\x\"", "tru", "NaN", "Infinity", "{1: 2}", "{\"a\" 1}", "[", "{", "1e999",
    ])
    func invalid(text: String) {
        expectJSONError(.syntax, text)
    }

    @Test("invalid UTF-8 inside a string")
    func invalidUTF8() {
        let error = expectPlistError(.syntax) { () throws(PlistError) -> PlistValue in
            try JSONPlist.decode([0x22, 0x61, 0xFF, 0x22])
        }
        #expect(error?.offset == 0)
    }

    @Test("encoding: sorted keys, two-space indent, compact form, escapes")
    func encode() throws {
        let value: PlistValue = .dict(["b": .dict([:]), "a": .array([.int(1), .string("x\"\\\n\t\u{1}é")]), "c": .array([])])
        let pretty = String(decoding: try JSONPlist.encode(value), as: UTF8.self)
        #expect(pretty == "{\n  \"a\": [\n    1,\n    \"x\\\"\\\\\\n\\t\\u0001é\"\n  ],\n  \"b\": {},\n  \"c\": []\n}\n")
        let compact = String(decoding: try JSONPlist.encode(value, pretty: false), as: UTF8.self)
        #expect(compact == "{\"a\":[1,\"x\\\"\\\\\\n\\t\\u0001é\"],\"b\":{},\"c\":[]}\n")
        #expect(try json(pretty) == value)
        #expect(try json(compact) == value)
    }

    @Test("non-JSON types: UIDs, dates, data, sets")
    func nonJSONTypes() throws {
        #expect(try json(String(decoding: JSONPlist.encode(.uid(3)), as: UTF8.self)) == .uid(3))
        #expect(try JSONPlist.encode(.date(Date(timeIntervalSinceReferenceDate: 0))) == Array("\"2001-01-01T00:00:00Z\"\n".utf8))
        #expect(try JSONPlist.encode(.data(Data([0, 1, 2]))) == Array("\"AAEC\"\n".utf8))
        #expect(try JSONPlist.encode(.set([.int(1)]), pretty: false) == Array("[1]\n".utf8))
        for r in [Double.nan, .infinity, -.infinity] {
            expectPlistError(.badValue) { () throws(PlistError) -> [UInt8] in try JSONPlist.encode(.array([.real(r)])) }
        }
    }

    @Test("300 seeded random documents round-trip exactly")
    func randomRoundTrip() throws {
        var generator = ValueGenerator(seed: 0x15_0A, options: .json)
        for i in 0..<300 {
            let value = generator.value()
            for pretty in [true, false] {
                let back = try JSONPlist.decode(JSONPlist.encode(value, pretty: pretty))
                #expect(identical(back, value), "document \(i): \(value) came back as \(back)")
            }
        }
    }

    @Test("nesting: 500 deep is fine, 600 deep is refused")
    func depth() throws {
        let ok = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(throws: Never.self) { try json(ok) }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        expectJSONError(.syntax, deep, line: 1)
    }
}

extension JSONPlistTests {
    @Test("integers are written as String writes them, extremes included; keys in String order")
    func integersAndKeyOrder() throws {
        var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, .max, .min, .max - 1, .min + 1]
        var rng: UInt64 = 3
        for _ in 0..<500 {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            values.append(Int64(bitPattern: rng) >> (rng % 63))
        }
        for v in values {
            #expect(try JSONPlist.encode(.int(v), pretty: false) == Array("\(v)\n".utf8))
        }
        for u in [UInt64.max, 0, 12_345_678_901_234_567_890] {
            #expect(try JSONPlist.encode(.uint(u), pretty: false) == Array("\(u)\n".utf8))
        }
        let keys = ["b", "a", "B", "é", "e", "aa", "a b", "Z", "ß", "10", "9"]
        let text = String(decoding: try JSONPlist.encode(.dict(Dictionary(uniqueKeysWithValues: keys.map { ($0, .int(1)) })), pretty: false), as: UTF8.self)
        let order = keys.sorted().map { "\"\($0)\":1" }.joined(separator: ",")
        #expect(text == "{" + order + "}\n")
        #expect(String(decoding: try JSONPlist.encode(.string("a\"b\\c\nd\u{1}"), pretty: false), as: UTF8.self) == #""a\"b\\c\nd\u0001""# + "\n")
    }
}
