import FolioBuilder
import FolioPlist
import FolioTestSupport
import Foundation
import Testing

/// The content readers (JSON, YAML, TOML, plist, front matter): their rules and error positions, and
/// a differential test against Python's own readers.
@Suite("Structured content readers")
struct StructuredReaderTests {
    static func read(_ text: String, _ format: DataFormat) throws(ReadError) -> PlistValue {
        try StructuredReader.read(Array(text.utf8), format: format)
    }

    /// The error reading `text`, or nil when it reads.
    static func error(_ text: String, _ format: DataFormat) -> ReadError? {
        do { _ = try read(text, format); return nil } catch { return error }
    }

    static func expectError(
        _ text: String, _ format: DataFormat, at line: Int, _ column: Int, _ message: String,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        let e = error(text, format)
        #expect(e?.line == line && e?.column == column, "position of \(String(describing: e))", sourceLocation: sourceLocation)
        #expect(e?.message.contains(message) == true, "message of \(String(describing: e))", sourceLocation: sourceLocation)
    }

    // MARK: Formats and locations

    @Test func formatsOfFileNames() {
        #expect(StructuredReader.format(ofFileName: "a.json") == .json)
        #expect(StructuredReader.format(ofFileName: "b.YML") == .yaml)
        #expect(StructuredReader.format(ofFileName: "c.d.yaml") == .yaml)
        #expect(StructuredReader.format(ofFileName: "site.toml") == .toml)
        #expect(StructuredReader.format(ofFileName: "Info.plist") == .plist)
        #expect(StructuredReader.format(ofFileName: "notes.md") == nil)
        #expect(StructuredReader.format(ofFileName: ".json") == nil)
        #expect(StructuredReader.format(ofFileName: "json") == nil)
    }

    @Test func locatesPointers() {
        let json = Array("{\n  \"items\": [\n    {\"title\": \"a\"},\n    {\"title\": \"b\", \"a/b\": 1}\n  ]\n}".utf8)
        #expect(StructuredReader.locate("", in: json, format: .json) == .init(line: 1, column: 1))
        #expect(StructuredReader.locate("/items/1/title", in: json, format: .json) == .init(line: 4, column: 15))
        #expect(StructuredReader.locate("/items/1/a~1b", in: json, format: .json) == .init(line: 4, column: 27))
        #expect(StructuredReader.locate("/items/2", in: json, format: .json) == nil)
        #expect(StructuredReader.locate("items", in: json, format: .json) == nil)

        let yaml = Array("title: Hi\nitems:\n  - name: a\n  - name: b\n    tags: [x, y]\n".utf8)
        #expect(StructuredReader.locate("/title", in: yaml, format: .yaml) == .init(line: 1, column: 8))
        #expect(StructuredReader.locate("/items/1/name", in: yaml, format: .yaml) == .init(line: 4, column: 11))
        #expect(StructuredReader.locate("/items/1/tags/1", in: yaml, format: .yaml) == .init(line: 5, column: 15))
        #expect(StructuredReader.locate("/nope", in: yaml, format: .yaml) == nil)

        let toml = Array("title = \"Hi\"\n\n[owner]\nname = \"Ann\"\n\n[[items]]\nname = \"a\"\n\n[[items]]\n  name = \"b\"\n  tags = [1, 2]\n".utf8)
        #expect(StructuredReader.locate("/owner/name", in: toml, format: .toml) == .init(line: 4, column: 1))
        #expect(StructuredReader.locate("/owner", in: toml, format: .toml) == .init(line: 3, column: 1))
        #expect(StructuredReader.locate("/items/1/name", in: toml, format: .toml) == .init(line: 10, column: 3))
        #expect(StructuredReader.locate("/items/1/tags/0", in: toml, format: .toml) == .init(line: 11, column: 3))
    }

    // MARK: JSON

    @Test func jsonKeepsNumberKinds() throws {
        let v = try Self.read(#"{"i": 1, "r": 1.0, "e": 1e300, "z": -0.0, "u": 18446744073709551615, "m": -9223372036854775808, "uid": {"CF$UID": 1}}"#, .json)
        #expect(v["i"] == .int(1))
        #expect(v["r"] == .real(1.0))
        #expect(v["e"] == .real(1e300))
        #expect(v["z"]?.doubleValue?.sign == .minus)
        #expect(v["u"] == .uint(.max))
        #expect(v["m"] == .int(.min))
        #expect(v["uid"] == .dict(["CF$UID": .int(1)]))
        #expect(try StructuredReader.read([0xEF, 0xBB, 0xBF] + Array("[true]".utf8), format: .json) == .array([.bool(true)]))
    }

    @Test func jsonErrors() {
        Self.expectError("{\"n\": 123456789012345678901234}", .json, at: 1, 7,
                         "the integer 123456789012345678901234 does not fit in 64 bits; write it as a string or a real")
        Self.expectError("[-9223372036854775809]", .json, at: 1, 2, "does not fit in 64 bits")
        Self.expectError("{\"a\": 1,\n \"a\": 2}", .json, at: 2, 2, "the key \"a\" appears twice in one object; keep one")
        Self.expectError("{\"a\": 1,}", .json, at: 1, 9, "a comma before '}' is not allowed")
        Self.expectError("[1, 2,]", .json, at: 1, 7, "a comma before ']' is not allowed")
        Self.expectError("{\"a\": 1}\n{}", .json, at: 2, 1, "unexpected text after the JSON value")
        Self.expectError("  ", .json, at: 1, 3, "the file is empty")
        Self.expectError("{\"é\": tru}", .json, at: 1, 7, "expected a value")
        Self.expectError("[\n  \"unterminated]", .json, at: 2, 3, "unterminated string")
        Self.expectError("{\"a\": [1, 2}", .json, at: 1, 12, "expected ',' or ']'")
        Self.expectError(String(repeating: "[", count: 600), .json, at: 1, 501, "nest deeper than 500")
        let bad: [UInt8] = Array("{\"a\":\n \"x".utf8) + [0xFF] + Array("\"}".utf8)
        #expect(throws: ReadError(line: 2, column: 4, message: "the file is not valid UTF-8; save it as UTF-8")) {
            try StructuredReader.read(bad, format: .json)
        }
        #expect(ReadError(line: 3, column: 4, message: "m").description == "3:4: m")
    }

    // MARK: YAML

    @Test func yamlScalarsFollowTheCoreSchema() throws {
        let v = try Self.read("""
            a: yes
            b: off
            c: True
            d: 0o17
            e: 0x1F
            f: -12
            g: 1e3
            h: .inf
            i: -.Inf
            j: .nan
            k: 012
            l: "123"
            m: !!str 123
            n: !!float 2
            o: 2024-03-01
            p: 2024-03-01T09:30:00+02:00
            q: 2001-12-14 21:59:43.10 -5
            r: !!binary aGVsbG8=
            s: '2024-03-01'
            t: 18446744073709551615
            u: 1.
            v: !!timestamp 2024-03-01t09:30:00.5Z
            w: 1:30
            """, .yaml)
        #expect(v["a"] == .string("yes") && v["b"] == .string("off") && v["c"] == .bool(true))
        #expect(v["d"] == .int(15) && v["e"] == .int(31) && v["f"] == .int(-12) && v["k"] == .int(12))
        #expect(v["g"] == .real(1000) && v["h"] == .real(.infinity) && v["i"] == .real(-.infinity))
        #expect(v["j"]?.doubleValue?.isNaN == true)
        #expect(v["l"] == .string("123") && v["m"] == .string("123") && v["n"] == .real(2))
        #expect(v["o"] == .date(Date(timeIntervalSince1970: 1_709_251_200)))
        #expect(v["p"] == .date(Date(timeIntervalSince1970: 1_709_251_200 + 7.5 * 3600)))
        #expect(v["q"] == .date(Date(timeIntervalSince1970: 1_008_385_183.1)))
        #expect(v["r"] == .data(Data("hello".utf8)) && v["s"] == .string("2024-03-01"))
        #expect(v["t"] == .uint(.max) && v["u"] == .real(1))
        #expect(v["v"] == .date(Date(timeIntervalSince1970: 1_709_285_400.5)))
        #expect(v["w"] == .string("1:30"))
    }

    @Test func yamlStructure() throws {
        let v = try Self.read("""
            defaults: &d {lang: en, draft: false}
            post:
              <<: *d
              draft: true
              tags: &t [a, b]
            again: *t
            1: one
            """, .yaml)
        #expect(v["post"] == .dict(["lang": .string("en"), "draft": .bool(true), "tags": .array([.string("a"), .string("b")])]))
        #expect(v["again"] == .array([.string("a"), .string("b")]))
        #expect(v["1"] == .string("one"))
    }

    @Test func yamlErrors() {
        Self.expectError("a: 1\n---\nb: 2\n", .yaml, at: 2, 1, "several YAML documents in one file; keep one (split them into files)")
        Self.expectError("a: 1\n? [x]\n: 2\n", .yaml, at: 2, 3, "a mapping key must be plain text")
        Self.expectError("a: 1\nb: 2\na: 3\n", .yaml, at: 1, 1, "the key \"a\" appears more than once in this mapping; keep one")
        Self.expectError("1: a\n\"1\": b\n", .yaml, at: 1, 1, "the key \"1\" appears more than once")
        Self.expectError("a: 1\nb: [1, 2\nc: 3\n", .yaml, at: 3, 2, "fix the YAML syntax here")
        Self.expectError("a: b: c\n", .yaml, at: 1, 5, "mapping values are not allowed")
        Self.expectError("", .yaml, at: 1, 1, "the file holds no YAML document")
        Self.expectError("# only a comment\n", .yaml, at: 1, 1, "the file holds no YAML document")
        Self.expectError("n: 123456789012345678901234\n", .yaml, at: 1, 4, "the integer 123456789012345678901234 does not fit in 64 bits; write it as a string or a real")
        Self.expectError("n: 0x1FFFFFFFFFFFFFFFF\n", .yaml, at: 1, 4, "does not fit in 64 bits")
        Self.expectError("d: 2024-02-30\n", .yaml, at: 1, 4, "2024-02-30 looks like a date but is not a valid one")
        Self.expectError("n: !!int twelve\n", .yaml, at: 1, 4, "\"twelve\" is not an integer as its tag !!int says")
        Self.expectError("x: !!binary '***'\n", .yaml, at: 1, 4, "is not base64")
        Self.expectError("x: !color red\n", .yaml, at: 1, 4, "the tag !color has no property-list form")
        Self.expectError("x: *nowhere\n", .yaml, at: 1, 4, "found undefined alias")
        Self.expectError(String(repeating: "[", count: 600), .yaml, at: 1, 500, "nest deeper than 500")
        Self.expectError(String(repeating: "- ", count: 600) + "x", .yaml, at: 1, 999, "nest deeper than 500")
        let lol = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + (1...7).map { "\(Character(Unicode.Scalar(UInt8(97 + $0)))): &\(Character(Unicode.Scalar(UInt8(97 + $0)))) [" + Array(repeating: "*\(Character(Unicode.Scalar(UInt8(96 + $0))))", count: 10).joined(separator: ", ") + "]" }.joined(separator: "\n")
        Self.expectError(lol, .yaml, at: 1, 8, "aliases expand to more than 101460 values; use fewer aliases")
    }

    // MARK: TOML

    @Test func tomlValues() throws {
        let v = try Self.read("""
            odt = 1979-05-27T07:32:00-08:00
            ldt = 1979-05-27T07:32:00.5
            ld = 1979-05-27
            lt = 07:32:00.250
            lt0 = 07:32:00
            big = 9223372036854775807
            f = -0.0
            [[fruit]]
            name = "apple"
            [[fruit.variety]]
            name = "red delicious"
            [[fruit]]
            name = "banana"
            """, .toml)
        #expect(v["odt"] == .date(Date(timeIntervalSince1970: 296_667_120)))
        #expect(v["ldt"] == .date(Date(timeIntervalSince1970: 296_638_320.5)))
        #expect(v["ld"] == .date(Date(timeIntervalSince1970: 296_611_200)))
        #expect(v["lt"] == .string("07:32:00.25") && v["lt0"] == .string("07:32:00"))
        #expect(v["big"] == .int(.max) && v["f"]?.doubleValue?.sign == .minus)
        #expect(v["fruit"]?.arrayValue?.count == 2)
        #expect(v["fruit"]?.arrayValue?.first?["variety"] == .array([.dict(["name": .string("red delicious")])]))
    }

    @Test func tomlErrors() {
        Self.expectError("a = 1\nb = \n", .toml, at: 2, 5, "fix the TOML syntax here")
        Self.expectError("a = 1\na = 2\n", .toml, at: 2, 5, "fix the TOML syntax here")
        Self.expectError("n = 99999999999999999999\n", .toml, at: 1, 25, "is not representable in 64 bits")
        Self.expectError("a = \"x\u{0}\"\n", .toml, at: 1, 7, "a NUL character is not allowed in TOML")
        // toml++ asserts against these (found by fuzzing): refused before it sees them.
        Self.expectError("[)fcoXn\"\n", .toml, at: 1, 2, "a table header needs a key, such as [table] or [[items]]")
        Self.expectError("a = 1\n[[ ]]\n", .toml, at: 2, 4, "a table header needs a key")
        Self.expectError("d = 2024-03-01Ta9:30:00\n", .toml, at: 1, 16, "a date-time needs a full time after its date")
        Self.expectError("d = [1979-05-27 2]\n", .toml, at: 1, 17, "a date-time needs a full time after its date")
        Self.expectError("languages = [\"en\", }\n", .toml, at: 1, 20, "this closes nothing open here; close with ]")
        Self.expectError("date = 2024-03-01T\u{10}9:30:00\n", .toml, at: 1, 19, "the control character U+0010 is not allowed in TOML")
    }

    // MARK: Property lists

    @Test func plists() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>a</key><integer>1</integer></dict></plist>
            """
        #expect(try Self.read(xml, .plist) == .dict(["a": .int(1)]))
        #expect(try StructuredReader.read(BinaryPlist.encode(.array([.real(1.5)])), format: .plist) == .array([.real(1.5)]))
        let e = Self.error("<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<dict><key>a</key></dict></plist>", .plist)
        #expect(e != nil && e!.line >= 1 && !e!.message.isEmpty)
        let j = Self.error("{\"a\":\n null}", .plist)
        #expect(j?.line == 2 && j?.column == 2)
        let b = Self.error("bplist00 broken", .plist)
        #expect(b?.line == 1 && b?.message.contains("byte offset") == true)
    }

    // MARK: Front matter

    @Test func frontMatterForms() throws {
        let yaml = try FrontMatter.split(Array("---\ntitle: Hello\ntags: [a, b]\n---\n# Hello\n\nText.\n".utf8))
        #expect(yaml.matter == ["title": .string("Hello"), "tags": .array([.string("a"), .string("b")])])
        #expect(yaml.matterFormat == .yaml && yaml.body == "# Hello\n\nText.\n" && yaml.bodyLine == 5)

        let toml = try FrontMatter.split(Array("\u{FEFF}+++\r\ntitle = \"Hi\"\r\ndate = 2024-03-01\r\n+++\r\nBody\r\n".utf8))
        #expect(toml.matter["title"] == .string("Hi") && toml.matter["date"] == .date(Date(timeIntervalSince1970: 1_709_251_200)))
        #expect(toml.matterFormat == .toml && toml.body == "Body\r\n" && toml.bodyLine == 5)

        let dots = try FrontMatter.split(Array("---\r\na: 1\r\n...\r\nx".utf8))
        #expect(dots.matter == ["a": .int(1)] && dots.body == "x" && dots.bodyLine == 4)

        let empty = try FrontMatter.split(Array("---\n---\n".utf8))
        #expect(empty.matter.isEmpty && empty.matterFormat == .yaml && empty.body == "" && empty.bodyLine == 3)

        let none = try FrontMatter.split(Array("# Title\n---\nnot: matter\n".utf8))
        #expect(none.matter.isEmpty && none.matterFormat == nil && none.body == "# Title\n---\nnot: matter\n" && none.bodyLine == 1)

        let file = Array("---\ntitle: Hello\nauthor:\n  name: Ann\n---\nBody\n".utf8)
        #expect(FrontMatter.locate("/author/name", in: file) == .init(line: 4, column: 9))
        #expect(FrontMatter.locate("", in: file) == .init(line: 2, column: 1))
        #expect(FrontMatter.locate("/title", in: Array("+++\nx = 1\ntitle = \"a\"\n+++\n".utf8)) == .init(line: 3, column: 1))
    }

    @Test func frontMatterErrors() {
        func expect(_ text: String, at line: Int, _ column: Int, _ message: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            do {
                _ = try FrontMatter.split(Array(text.utf8))
                Issue.record("no error", sourceLocation: sourceLocation)
            } catch {
                #expect(error.line == line && error.column == column, "\(error)", sourceLocation: sourceLocation)
                #expect(error.message.contains(message), "\(error)", sourceLocation: sourceLocation)
            }
        }
        expect("---\ntitle: Hello\n\nBody\n", at: 1, 1, "the front matter opened here with --- is never closed; add a line --- after it")
        expect("+++\ntitle = 1\n", at: 1, 1, "add a line +++ after it")
        expect("---\n- a\n- b\n---\n", at: 2, 1, "the front matter is an array, not a mapping")
        expect("---\ntitle: [a\n---\n", at: 3, 1, "fix the YAML syntax here")
        expect("+++\ntitle = \n+++\n", at: 2, 9, "fix the TOML syntax here")
    }
}

// MARK: - Differential test against Python

/// Every document read by our readers and by Python's (`json`, `tomllib`, PyYAML's `safe_load`),
/// both converted to one canonical JSON text. PyYAML reads YAML 1.1, ours YAML 1.2: the YAML
/// documents keep to what both versions read alike (no yes/no/on/off, no 0o/012 octals, reals
/// with a dot and a signed exponent, no sexagesimals, string keys but for `1:`).
@Suite("Structured readers against Python")
struct StructuredReaderDifferentialTests {
    static let python = #"""
import base64, datetime, json, sys, tomllib, yaml

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

def iso(d):
    if not isinstance(d, datetime.datetime):
        d = datetime.datetime(d.year, d.month, d.day)
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    ms = round((d - EPOCH) / datetime.timedelta(milliseconds=1))
    whole = EPOCH + datetime.timedelta(milliseconds=ms - ms % 1000)
    return whole.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)

def canon(v):
    if v is None: return ["null", None]
    if isinstance(v, bool): return ["bool", v]
    if isinstance(v, int): return ["int", str(v)]
    if isinstance(v, float): return ["real", repr(v)]
    if isinstance(v, str): return ["string", v]
    if isinstance(v, (bytes, bytearray)): return ["data", base64.b64encode(v).decode()]
    if isinstance(v, (datetime.datetime, datetime.date)): return ["date", iso(v)]
    if isinstance(v, datetime.time):
        s = v.isoformat()
        return ["string", s.rstrip("0") if "." in s else s]
    if isinstance(v, list): return ["array", [canon(x) for x in v]]
    if isinstance(v, dict): return ["dict", {str(k): canon(x) for k, x in v.items()}]
    raise TypeError(type(v).__name__)

out = []
for doc in json.load(sys.stdin):
    try:
        text = doc["text"]
        if doc["format"] == "json":
            v = json.loads(text, parse_constant=lambda c: float(c))
        elif doc["format"] == "toml":
            v = tomllib.loads(text)
        else:
            v = yaml.safe_load(text)
        out.append(json.dumps(canon(v), sort_keys=True, ensure_ascii=True, separators=(",", ":")))
    except Exception as e:
        out.append("error: %s" % e)
json.dump(out, sys.stdout)
"""#

    /// Our value in the Python script's canonical form.
    static func canonical(_ value: PlistValue) -> String {
        func pair(_ tag: String, _ payload: String) -> String { "[\(quoted(tag)),\(payload)]" }
        switch value {
        case .bool(let b): return pair("bool", b ? "true" : "false")
        case .int(let i): return pair("int", quoted(String(i)))
        case .uint(let u), .uid(let u): return pair("int", quoted(String(u)))
        case .real(let r): return pair("real", quoted(r.isNaN ? "nan" : r.description))
        case .string where value.isNull: return pair("null", "null")
        case .string(let s): return pair("string", quoted(s))
        case .data(let d): return pair("data", quoted(d.base64EncodedString()))
        case .date(let d): return pair("date", quoted(iso(d)))
        case .array(let items), .set(let items): return pair("array", "[" + items.map(canonical).joined(separator: ",") + "]")
        case .dict(let dict):
            let keys = dict.keys.sorted { Array($0.unicodeScalars.map(\.value)).lexicographicallyPrecedes($1.unicodeScalars.map(\.value)) }
            return pair("dict", "{" + keys.map { "\(quoted($0)):\(canonical(dict[$0]!))" }.joined(separator: ",") + "}")
        }
    }

    /// A date as ISO 8601 in UTC to the millisecond.
    static func iso(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let seconds = ms - ((ms % 1000) + 1000) % 1000
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        let text = formatter.string(from: Date(timeIntervalSince1970: Double(seconds / 1000)))
        let fraction = String(ms - seconds + 1000).dropFirst()
        return text.dropLast() + "." + fraction + "Z"
    }

    /// A string as Python's `json.dumps(..., ensure_ascii=True)` writes it.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for unit in s.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x20...0x7E: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out + "\""
    }

    /// Python's canonical text for each document.
    static func pythonCanonical(_ docs: [(DataFormat, String)]) throws -> [String] {
        let input = try JSONSerialization.data(withJSONObject: docs.map { ["format": $0.0.rawValue, "text": $0.1] })
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", python]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitForExit()
        return try #require(try JSONSerialization.jsonObject(with: output) as? [String])
    }

    @Test("our readers agree with Python's on every document")
    func agreesWithPython() throws {
        let docs = DifferentialDocuments.all
        #expect(docs.count >= 30)
        let expected = try Self.pythonCanonical(docs)
        try #require(expected.count == docs.count)
        for (n, (format, text)) in docs.enumerated() {
            #expect(!expected[n].hasPrefix("error"), "Python failed on document \(n): \(expected[n])")
            let ours: String
            do { ours = Self.canonical(try StructuredReader.read(Array(text.utf8), format: format)) } catch {
                Issue.record("document \(n) (\(format)): \(error)")
                continue
            }
            #expect(ours == expected[n], "document \(n) (\(format)):\n\(text)")
        }
    }
}

/// Real-looking content sources for the differential test.
enum DifferentialDocuments {
    static let all: [(DataFormat, String)] = json + yaml + toml

    static let json: [(DataFormat, String)] = [
        (.json, #"{"title": "Sonnet 18", "author": "William Shakespeare", "year": 1609, "lines": 14}"#),
        (.json, #"{"items": [{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": []}], "total": 2, "next": false}"#),
        (.json, #"{"unicode": "Grüße, 世界 — ‘quotes’ 🎉 \u00e9\ud83d\ude00", "escapes": "tab\tnew\nline \"q\" \\ \/", "empty": ""}"#),
        (.json, #"{"big": 9223372036854775807, "bigger": 18446744073709551615, "neg": -9223372036854775808, "zero": -0}"#),
        (.json, #"{"reals": [1.0, -0.0, 1e300, 2.5e-308, 0.1, 123456789.125, 1E+2, 6.02214076e23, -1.5e-7]}"#),
        (.json, #"[{"CF$UID": 1}, {"nested": {"deeper": {"deepest": [[[1], [2, 3]], {}]}}}]"#),
        (.json, "{\n  \"menu\": {\n    \"id\": \"file\",\n    \"popup\": {\n      \"menuitem\": [\n        {\"value\": \"New\", \"onclick\": \"CreateDoc()\"},\n        {\"value\": \"Close\", \"onclick\": \"CloseDoc()\"}\n      ]\n    }\n  }\n}\n"),
        (.json, "{\"bom\": true, \"list\": [true, false, 0, 1, -1]}"),
        (.json, #""just a string""#),
        (.json, #"{"price": 19.99, "currency": "EUR", "stock": {"warehouse-1": 12, "warehouse/2": 0, "~tilde": 3}}"#),
        (.json, #"{"login": "octocat", "name": null, "company": null, "plan": {"space": null}, "labels": [null, "bug", null], "x": "null"}"#),
        (.json, "null"),
    ]

    static let yaml: [(DataFormat, String)] = [
        (.yaml, """
            title: A Midsummer Night's Dream
            author: William Shakespeare
            published: 1600
            acts: 5
            rating: 4.5
            draft: false
            """),
        (.yaml, """
            # Site settings
            site:
              name: Folio
              url: https://example.com/folio
              languages: [en, fr, de]
              social:
                - name: Mastodon
                  handle: "@folio@example.social"
                - name: GitHub
                  handle: folio
            """),
        (.yaml, """
            date: 2024-03-01
            updated: 2024-03-01T09:30:00Z
            local: 2024-03-01 09:30:00
            offset: 2024-03-01T09:30:00.250+02:00
            spaced: 2001-12-14 21:59:43.10 -5
            quoted: "2024-03-01"
            """),
        (.yaml, """
            defaults: &defaults
              layout: post
              comments: true
            first:
              <<: *defaults
              title: First
            second:
              <<: *defaults
              comments: false
            shared: &list [1, 2, 3]
            again: *list
            """),
        (.yaml, """
            description: |
              Line one
              Line two
            folded: >
              folded text
              continues here
            unicode: "Grüße \\u00e9 \\U0001F600 世界"
            single: 'it''s'
            plain: café au lait
            """),
        (.yaml, """
            numbers:
              int: 42
              negative: -17
              big: 9223372036854775807
              bigger: 18446744073709551615
              hex: 0xFF
              real: 3.14159
              exp: 1.0e+300
              tiny: 2.5e-308
              negzero: -0.0
              inf: .inf
              neginf: -.inf
            """),
        (.yaml, """
            - name: Alice
              roles: [admin, editor]
            - name: Bob
              roles: []
            - name: Carol
              roles:
                - viewer
            """),
        (.yaml, """
            booleans: [true, false, True, FALSE]
            nulls: [~, null, Null, NULL, !!null '', {empty: }]
            blank:
            strings: ["true", 'null', "123", "1.5"]
            tagged: !!str 2024-03-01
            number: !!float 3
            text: !!str 42
            binary: !!binary |
              R0lGODlhDAAMAIQAAP//9/X17unp5WZmZgAAAOfn515eXvPz7Y6OjuDg4J+fn5
              OTk6enp56enmleECcgggoBADs=
            """),
        (.yaml, """
            ---
            title: With a document start
            nested:
              a:
                b:
                  c:
                    d: deep
            ...
            """),
        (.yaml, """
            1: one
            key with spaces: value
            "quoted key": 2
            empty list: []
            empty map: {}
            flow: {a: 1, b: [x, y], c: {d: e}}
            """),
        (.yaml, """
            menu:
              - id: file
                items:
                  - {label: New, action: new}
                  - {label: Open, action: open}
              - id: edit
                items:
                  - {label: Copy, action: copy}
            """),
        (.yaml, "\u{FEFF}greeting: \"Hello, 世界 🎉\"\r\nfarewell: Adiós\r\n"),
    ]

    static let toml: [(DataFormat, String)] = [
        (.toml, """
            title = "TOML Example"

            [owner]
            name = "Tom Preston-Werner"
            dob = 1979-05-27T07:32:00-08:00

            [database]
            enabled = true
            ports = [ 8000, 8001, 8002 ]
            data = [ ["delta", "phi"], [3.14] ]
            temp_targets = { cpu = 79.5, case = 72.0 }
            """),
        (.toml, """
            [[products]]
            name = "Hammer"
            sku = 738594937

            [[products]]

            [[products]]
            name = "Nail"
            sku = 284758393
            color = "gray"
            """),
        (.toml, """
            [[fruits]]
            name = "apple"

            [fruits.physical]
            color = "red"
            shape = "round"

            [[fruits.varieties]]
            name = "red delicious"

            [[fruits.varieties]]
            name = "granny smith"

            [[fruits]]
            name = "banana"

            [[fruits.varieties]]
            name = "plantain"
            """),
        (.toml, """
            odt1 = 1979-05-27T07:32:00Z
            odt2 = 1979-05-27T00:32:00-07:00
            odt3 = 1979-05-27T00:32:00.999999-07:00
            ldt1 = 1979-05-27T07:32:00
            ldt2 = 1979-05-27T00:32:00.5
            ld1 = 1979-05-27
            lt1 = 07:32:00
            lt2 = 00:32:00.25
            """),
        (.toml, """
            int1 = +99
            int2 = 42
            int3 = 0
            int4 = -17
            int5 = 1_000
            hex1 = 0xDEADBEEF
            oct1 = 0o755
            bin1 = 0b11010110
            max = 9223372036854775807
            min = -9223372036854775808
            """),
        (.toml, """
            flt1 = +1.0
            flt2 = 3.1415
            flt3 = -0.01
            flt4 = 5e+22
            flt5 = 1e300
            flt6 = -2E-2
            flt7 = 6.626e-34
            flt8 = -0.0
            flt9 = 224_617.445_991_228
            sf1 = inf
            sf2 = -inf
            """),
        (.toml, #"""
            str = "I'm a string. \"You can quote me\". Name\tJos\u00E9\nLocation\tSF."
            str1 = """
            Roses are red
            Violets are blue"""
            winpath = 'C:\Users\nodejs\templates'
            regex = '<\i\c*\s*>'
            lines = '''
            The first newline is
            trimmed in raw strings.
            '''
            unicode = "Grüße, 世界 🎉"
            """#),
        (.toml, """
            name = "Orange"
            physical.color = "orange"
            physical.shape = "round"
            site."google.com" = true
            "quoted key" = 1
            'literal key' = 2
            3 = "three"
            """),
        (.toml, """
            # A site configuration
            [site]
            title = "Folio"
            base_url = "https://example.com"
            languages = ["en", "fr"]

            [site.params]
            show_toc = true
            max_items = 20

            [[site.menu]]
            name = "Home"
            weight = 1

            [[site.menu]]
            name = "About"
            weight = 2
            """),
        (.toml, """
            points = [ { x = 1, y = 2, z = 3 },
                       { x = 7, y = 8, z = 9 },
                       { x = 2, y = 4, z = 8 } ]
            nested_mixed = [ [ 1, 2 ], ["a", "b", "c"], [] ]
            mixed = [ 0.1, 0.2, 0.5, 1, 2, 5 ]
            """),
        (.toml, #"""
            notes = """
            [not a table]
            # not a comment, "quoted"
            """
            literal = '''
            [[nor this]]'''
            matrix = [
              [1, 2],
              [ 3, 4 ], # a comment [
              [],
            ]
            when = [2024-03-01T09:30:00Z, 1979-05-27 07:32:00]
            2024-03-01Tab = "a bare key that looks like a date"
            [ "spaced header" ]
            ok = true
            """#),
    ]
}
