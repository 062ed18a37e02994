import Foundation
import Testing

@testable import FolioPlist
@testable import FolioPlistXML
@testable import FolioSupport
@testable import FolioToolSupport

/// Python's reading of a plist, reduced to JSON that loses nothing: every scalar as a tagged string
/// (reals as their IEEE bit pattern, dates as microseconds since 2001), containers as tagged JSON.
private let pythonTagScript = #"""
    import datetime, json, plistlib, struct, sys

    EPOCH = datetime.datetime(2001, 1, 1)

    def tag(v):
        if isinstance(v, bool):
            return ["bool", "true" if v else "false"]
        if isinstance(v, plistlib.UID):
            return ["uid", str(v.data)]
        if isinstance(v, int):
            return ["int", str(v)]
        if isinstance(v, float):
            return ["real", struct.pack(">d", v).hex()]
        if isinstance(v, datetime.datetime):
            return ["date", str((v - EPOCH) // datetime.timedelta(microseconds=1))]
        if isinstance(v, bytes):
            return ["data", v.hex()]
        if isinstance(v, str):
            return ["string", v]
        if isinstance(v, list):
            return ["array", [tag(x) for x in v]]
        if isinstance(v, dict):
            return ["dict", {k: tag(x) for k, x in v.items()}]
        raise TypeError(type(v))

    out = []
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            out.append(tag(plistlib.load(f, fmt=plistlib.FMT_BINARY)))
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)
    """#

/// The same reduction as `pythonTagScript`, applied to the value we wrote.
private func pythonTagged(_ v: PlistValue) -> PlistValue {
    func tag(_ name: String, _ payload: PlistValue) -> PlistValue { .array([.string(name), payload]) }
    switch v {
    case .bool(let b): return tag("bool", .string(b ? "true" : "false"))
    case .int(let i): return tag("int", .string(String(i)))
    case .uint(let u): return tag("int", .string(String(u)))
    case .real(let r): return tag("real", .string(hex(bigEndianBytes(r.bitPattern, width: 8))))
    case .date(let d): return tag("date", .string(String(Int64((d.timeIntervalSinceReferenceDate * 1e6).rounded()))))
    case .data(let d): return tag("data", .string(hex(d)))
    case .string(let s): return tag("string", .string(s))
    case .uid(let u): return tag("uid", .string(String(u)))
    case .array(let a), .set(let a): return tag("array", .array(a.map(pythonTagged)))
    case .dict(let d): return tag("dict", .dict(d.mapValues(pythonTagged)))
    }
}

/// What Python's plistlib writes in `pythonWriteScript`, as we expect to read it.
private func pythonRichValue(binary: Bool) -> PlistValue {
    var value: [String: PlistValue] = [
        "ints": .array([
            .int(0), .int(1), .int(255), .int(256), .int(65535), .int(65536), .int(0xFFFF_FFFF), .int(0x1_0000_0000),
            .int(.max), .uint(1 << 63), .uint(.max), .int(-1), .int(-255), .int(.min),
        ]),
        "reals": .array([.real(0.5), .real(-0.0), .real(0.1), .real(1e300), .real(.leastNonzeroMagnitude), .real(.infinity), .real(-.infinity), .real(3.0), .real(-2.75)]),
        "bools": .array([.bool(true), .bool(false)]),
        "dates": .array([
            .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: -992_490_140)),
            .date(Date(timeIntervalSinceReferenceDate: 730_902_615)),
        ]),
        "data": .array([.data(Data()), .data(Data((0..<20).flatMap { _ in [UInt8(0x00), 0xFF] })), .data(Data(0...255))]),
        "strings": .array([
            .string(""), .string("plain ascii"), .string("Ünïcödé"), .string("𝄞 clef"), .string("日本語のテキスト"),
            .string("emoji 👨‍👩‍👧"), .string("a & b < c > d"), .string("fifteen chars!!"), .string("tab\tnewline\n"),
        ]),
        "nested": .dict([
            "level1": .dict(["level2": .dict(["level3": .array([.int(1), .array([.int(2), .array([.int(3), .dict(["deep": .string("yes")])])])])])]),
            "empty array": .array([]), "empty dict": .dict([:]),
        ]),
        "unicode key ü": .string("value"),
        "": .string("empty key"),
    ]
    if binary {
        value["uid"] = .uid(7)
        value["big_uid"] = .uid((1 << 32) + 5)
    }
    return .dict(value)
}

private let pythonWriteScript = #"""
    import datetime, plistlib, sys

    value = {
        "ints": [0, 1, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, -1, -255, -2**63],
        "reals": [0.5, -0.0, 0.1, 1e300, 5e-324, float("inf"), float("-inf"), 3.0, -2.75],
        "bools": [True, False],
        "dates": [datetime.datetime(2001, 1, 1), datetime.datetime(1969, 7, 20, 20, 17, 40),
                  datetime.datetime(2024, 2, 29, 12, 30, 15)],
        "data": [b"", b"\x00\xff" * 20, bytes(range(256))],
        "strings": ["", "plain ascii", "Ünïcödé", "𝄞 clef", "日本語のテキスト", "emoji 👨‍👩‍👧",
                    "a & b < c > d", "fifteen chars!!", "tab\tnewline\n"],
        "nested": {"level1": {"level2": {"level3": [1, [2, [3, {"deep": "yes"}]]]}},
                   "empty array": [], "empty dict": {}},
        "unicode key ü": "value",
        "": "empty key",
    }
    binary = dict(value, uid=plistlib.UID(7), big_uid=plistlib.UID(2**32 + 5))
    with open(sys.argv[1] + "/python.bplist", "wb") as f:
        plistlib.dump(binary, f, fmt=plistlib.FMT_BINARY)
    with open(sys.argv[1] + "/python.xml", "wb") as f:
        plistlib.dump(value, f, fmt=plistlib.FMT_XML)
    """#

/// A document with every type Python and libplist can carry (no sets).
private let ourRichValue: PlistValue = .dict([
    "bool": .bool(true), "false": .bool(false), "int": .int(-42), "max": .int(.max), "min": .int(.min),
    "uint": .uint(.max), "widths": .array([.int(255), .int(256), .int(65536), .int(0x1_0000_0000)]),
    "real": .real(0.1), "huge": .real(1e300), "tiny": .real(.leastNonzeroMagnitude), "inf": .real(.infinity),
    "date": .date(Date(timeIntervalSinceReferenceDate: 86400)), "old": .date(Date(timeIntervalSinceReferenceDate: -992_490_140)),
    "data": .data(Data(repeating: 0xAB, count: 20)), "empty data": .data(Data()),
    "string": .string("Grüße, 世界 🌍 𝄞"), "ascii": .string(String(repeating: "x", count: 15)), "": .string(""),
    "uid": .uid(12), "big uid": .uid(70_000),
    "array": .array([.array([]), .dict([:]), .array([.int(1), .array([.int(2), .array([.int(3)])])])]),
    "dict": .dict(["nested": .dict(["deeper": .dict(["deepest": .string("here & <there>")])])]),
    "ünïcödé key": .string("value"),
])

@Suite("Cross-checks with Python's plistlib, libplist's plistutil and Foundation")
struct CrossCheckTests {
    // MARK: Our writer, their readers

    @Test("Python's plistlib reads what we write", .enabled(if: ExternalTool.python3 != nil))
    func pythonReadsOurBinary() throws {
        var generator = ValueGenerator(seed: 0xB17_2_5EED, options: .python)
        let values = [ourRichValue, BinaryWriterTests.document(objects: 256), BinaryWriterTests.document(objects: 70_000)]
            + (0..<80).map { _ in generator.value() }
        try withTemporaryDirectory("python-reads") { dir in
            var paths: [String] = []
            for (i, value) in values.enumerated() {
                let url = dir.appendingPathComponent("doc\(i).bplist")
                try writeFile(BinaryPlist.encode(value), url)
                paths.append(url.path)
            }
            let output = dir.appendingPathComponent("tagged.json")
            _ = try runPython(pythonTagScript, [output.path] + paths, in: dir)
            let tagged = try #require(try JSONPlist.decode(readFile(output)).arrayValue)
            try #require(tagged.count == values.count)
            for (i, (value, seen)) in zip(values, tagged).enumerated() {
                #expect(identical(seen, pythonTagged(value)), "document \(i): Python read \(seen), we wrote \(value)")
            }
        }
    }

    @Test("plistutil converts what we write to XML, and our XML reader gets the same value back",
          .enabled(if: ExternalTool.plistutil != nil))
    func plistutilReadsOurBinary() throws {
        let plistutil = try #require(ExternalTool.plistutil)
        var generator = ValueGenerator(seed: 0x9115_7071, options: .plistutil)
        let values = [ourRichValue, BinaryWriterTests.document(objects: 300)] + (0..<40).map { _ in generator.value() }
        try withTemporaryDirectory("plistutil-reads") { dir in
            for (i, value) in values.enumerated() {
                let input = dir.appendingPathComponent("in\(i).bplist")
                let output = dir.appendingPathComponent("out\(i).xml")
                try writeFile(BinaryPlist.encode(value), input)
                let result = try runTool(plistutil, ["-i", input.path, "-o", output.path, "-f", "xml"], in: dir)
                #expect(result.status == 0, "\(result.stderr)")
                let xml = try readFile(output)
                // plistutil signals failure with an empty plist and exit status 0: check the content.
                #expect(String(decoding: xml, as: UTF8.self).contains("<plist"), "document \(i): \(result.stderr)")
                let back = try XMLPlist.decode(xml)
                #expect(identical(back, normalisedForXML(value)), "document \(i): plistutil made \(back) of \(value)")
            }
        }
    }

    // MARK: Their writers, our readers

    @Test("we read the binary and XML Python's plistlib writes", .enabled(if: ExternalTool.python3 != nil))
    func weReadPython() throws {
        try withTemporaryDirectory("read-python") { dir in
            _ = try runPython(pythonWriteScript, [dir.path], in: dir)
            let binary = try BinaryPlist.decode(readFile(dir.appendingPathComponent("python.bplist")))
            #expect(identical(binary, pythonRichValue(binary: true)), "\(binary)")
            let xml = try XMLPlist.decode(readFile(dir.appendingPathComponent("python.xml")))
            #expect(identical(xml, pythonRichValue(binary: false)), "\(xml)")
            // The sniffing entry point gets both right too.
            #expect(try PlistValue.decodeAnyFormat(readFile(dir.appendingPathComponent("python.xml"))) == xml)
            #expect(try PlistValue.decodeAnyFormat(readFile(dir.appendingPathComponent("python.bplist"))) == binary)
        }
    }

    @Test("we read what plistutil makes of Python's XML", .enabled(if: ExternalTool.python3 != nil && ExternalTool.plistutil != nil))
    func weReadPlistutilBinary() throws {
        let plistutil = try #require(ExternalTool.plistutil)
        try withTemporaryDirectory("read-plistutil") { dir in
            _ = try runPython(pythonWriteScript, [dir.path], in: dir)
            let output = dir.appendingPathComponent("libplist.bplist")
            let result = try runTool(plistutil, ["-i", dir.appendingPathComponent("python.xml").path, "-o", output.path, "-f", "bin"], in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let bytes = try readFile(output)
            try #require(bytes.starts(with: Array("bplist00".utf8)), "plistutil wrote \(bytes.count) bytes: \(result.stderr)")
            let value = try BinaryPlist.decode(bytes)
            #expect(identical(value, pythonRichValue(binary: false)), "\(value)")
        }
    }

    // MARK: Foundation, in process

    @Test("Foundation's PropertyListSerialization reads what we write, at every width boundary",
          arguments: [255, 256, 257, 65535, 65536, 65537])
    func foundationReadsOurBinary(objects: Int) throws {
        let encoded = BinaryPlist.encode(BinaryWriterTests.document(objects: objects))
        let decoded = try? PropertyListSerialization.propertyList(from: Data(encoded), options: [], format: nil)
        #expect((decoded as? [Any])?.count == objects - 1, "Foundation rejected our \(objects)-object document: \(Trailer(encoded))")
    }

    @Test("Foundation reads our documents whose offset table crosses 256 and 65536 bytes",
          arguments: [200, 244, 250, 300, 65_520, 65_540])
    func foundationReadsOffsetBoundaries(dataCount: Int) throws {
        let encoded = BinaryPlist.encode(.array([.data(Data(repeating: 1, count: dataCount))]))
        let decoded = try? PropertyListSerialization.propertyList(from: Data(encoded), options: [], format: nil)
        #expect(((decoded as? [Any])?.first as? Data)?.count == dataCount, "Foundation rejected \(Trailer(encoded))")
    }

    @Test("Foundation reads our rich document")
    func foundationReadsRichValue() throws {
        var value = ourRichValue.dictValue ?? [:]
        value["uid"] = nil
        value["big uid"] = nil
        let encoded = BinaryPlist.encode(.dict(value))
        let decoded = try #require(try PropertyListSerialization.propertyList(from: Data(encoded), options: [], format: nil) as? [String: Any])
        #expect(decoded.count == value.count)
        #expect(decoded["string"] as? String == "Grüße, 世界 🌍 𝄞")
        #expect((decoded["data"] as? Data)?.count == 20)
        #expect((decoded["date"] as? Date) == Date(timeIntervalSinceReferenceDate: 86400))
        #expect((decoded["real"] as? Double) == 0.1)
    }

    @Test("we read what Foundation's PropertyListSerialization writes")
    func weReadFoundation() throws {
        let object: [String: Any] = [
            "int": 42, "negative": -7, "real": 2.5, "string": "Grüße 𝄞", "ascii": "plain",
            "date": Date(timeIntervalSinceReferenceDate: 1234.5), "data": Data([1, 2, 3]),
            "array": [1, "two", 3.5] as [Any], "dict": ["k": "v"],
            "many": (0..<300).map { "item \($0)" },
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        let value = try BinaryPlist.decode(data)
        let expected: PlistValue = .dict([
            "int": .int(42), "negative": .int(-7), "real": .real(2.5), "string": .string("Grüße 𝄞"), "ascii": .string("plain"),
            "date": .date(Date(timeIntervalSinceReferenceDate: 1234.5)), "data": .data(Data([1, 2, 3])),
            "array": .array([.int(1), .string("two"), .real(3.5)]), "dict": .dict(["k": .string("v")]),
            "many": .array((0..<300).map { .string("item \($0)") }),
        ])
        #expect(identical(value, expected), "\(value)")
    }

    // MARK: gzip

    @Test("Python's gzip reads our gzip, and we read Python's", .enabled(if: ExternalTool.python3 != nil))
    func gzipInterop() throws {
        let original = Array((0..<50_000).map { UInt8(truncatingIfNeeded: $0 * 7 / 3) })
        try withTemporaryDirectory("gzip") { dir in
            try writeFile(try Gzip.compress(original), dir.appendingPathComponent("ours.gz"))
            try writeFile(original, dir.appendingPathComponent("original"))
            _ = try runPython(
                """
                import gzip, sys
                d = sys.argv[1]
                original = open(d + "/original", "rb").read()
                assert gzip.decompress(open(d + "/ours.gz", "rb").read()) == original, "mismatch"
                open(d + "/python.gz", "wb").write(gzip.compress(original, compresslevel=6, mtime=0))
                """, [dir.path], in: dir)
            let theirs = try readFile(dir.appendingPathComponent("python.gz"))
            #expect(try Gzip.decompress(theirs, maxSize: original.count) == original)
        }
    }
}
