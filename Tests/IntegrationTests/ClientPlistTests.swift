import FolioTestSupport
import FolioPlist
import FolioSupport
import Foundation
import Testing

@Suite("folio plist")
struct ClientPlistTests {
    let folio = Harness.binary("folio")

    @Test("convert round-trips binary → XML → JSON → binary, and print shows the value")
    func convertAndPrint() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let value: PlistValue = .dict([
            "title": .string("Sonnet XVIII ’"), "number": .int(18), "ratio": .real(1.5), "ok": .bool(true),
            "lines": .array([.string("a"), .string("b")]), "big": .uint(UInt64.max), "neg": .int(-5),
        ])
        try Data(BinaryPlist.encode(value)).write(to: URL(fileURLWithPath: dir + "/in.plist"))
        #expect(try Harness.run(folio, ["plist", "convert", "--to", "xml", dir + "/in.plist", dir + "/x.plist"]).status == 0)
        #expect(String(decoding: try FileIO.read(dir + "/x.plist"), as: UTF8.self).contains("<key>title</key>"))
        #expect(try Harness.run(folio, ["plist", "convert", "--to", "json", dir + "/x.plist", dir + "/j.json"]).status == 0)
        #expect(try Harness.run(folio, ["plist", "convert", "--to", "binary", dir + "/j.json", dir + "/b.plist"]).status == 0)
        #expect(try BinaryPlist.decode(try FileIO.read(dir + "/b.plist")) == value)

        let p = try Harness.run(folio, ["plist", "print", dir + "/b.plist"])
        #expect(p.status == 0)
        #expect(p.stdout.contains("\"number\" => 18"))
        #expect(p.stdout.contains("0 => \"a\""))
        let j = try Harness.run(folio, ["plist", "print", "--json", dir + "/b.plist"])
        #expect(try JSONPlist.decode(j.stdoutBytes) == value)
    }

    @Test("a JSON integer beyond 64 bits is refused where it is; one up to 2^64-1 is kept exactly")
    func integersBeyond64Bits() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        try FileIO.writeAtomically(Array("{\n  \"id\": 1,\n  \"big\": 12345678901234567890123\n}\n".utf8), to: dir + "/big.json")
        for args in [["plist", "print", dir + "/big.json"], ["plist", "convert", "--to", "binary", dir + "/big.json", dir + "/out.plist"]] {
            let out = try Harness.run(folio, args)
            #expect(out.status == 1, "\(args): \(out.status) \(out.stdout)")
            #expect(out.stderr.contains("big.json"), "\(out.stderr)")
            #expect(out.stderr.contains("at line 3, column 10"), "line:col: \(out.stderr)")
            #expect(out.stderr.contains("integer 12345678901234567890123 does not fit in 64 bits; write it as a string or a real"), "\(out.stderr)")
            #expect(out.stdout.isEmpty)
        }
        #expect(!FileIO.exists(dir + "/out.plist"))
        let negative = dir + "/neg.json"
        try FileIO.writeAtomically(Array("[-9223372036854775809]".utf8), to: negative)
        #expect(try Harness.run(folio, ["plist", "print", negative]).stderr.contains("does not fit in 64 bits"))
        // [2^63, 2^64): kept as an unsigned integer through binary and back.
        try FileIO.writeAtomically(Array("{\"u\": 18446744073709551615, \"v\": 9223372036854775808}".utf8), to: dir + "/u.json")
        #expect(try Harness.run(folio, ["plist", "convert", "--to", "binary", dir + "/u.json", dir + "/u.plist"]).status == 0)
        #expect(try BinaryPlist.decode(try FileIO.read(dir + "/u.plist")) == .dict(["u": .uint(UInt64.max), "v": .uint(1 << 63)]))
        let back = try Harness.run(folio, ["plist", "print", "--json", dir + "/u.plist"])
        #expect(back.stdout.contains("18446744073709551615") && back.stdout.contains("9223372036854775808"), "\(back.stdout)")
    }

    @Test("a malformed file prints one clear error line and exits 1")
    func malformed() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        var bytes = BinaryPlist.encode(.array([.string("x"), .int(1)]))
        bytes[bytes.count - 32 + 6] = 9  // offset size 9 is out of range
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/bad.plist"))
        let r = try Harness.run(folio, ["plist", "print", dir + "/bad.plist"])
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("folio: error: \(dir)/bad.plist: bplist: trailer offset size 9") == true, "\(r.stderr)")
        #expect(r.stdout.isEmpty)

        try Data("<plist><dict><key>a</key></dict>".utf8).write(to: URL(fileURLWithPath: dir + "/bad.xml"))
        let x = try Harness.run(folio, ["plist", "convert", "--to", "json", dir + "/bad.xml", dir + "/out.json"])
        #expect(x.status == 1)
        #expect(x.stderr.contains("line 1"), "\(x.stderr)")
        #expect(!FileIO.exists(dir + "/out.json"))

        let missing = try Harness.run(folio, ["plist", "print", dir + "/nope.plist"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("No such file"))
    }

    @Test("CPython's invalid vectors (dates of ±Infinity and NaN, a lone UTF-16 surrogate): one error line, exit 1, never a signal")
    func invalidVectors() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        var cases: [(String, [UInt8], String)] = []
        for (name, seconds) in [("inf", Double.infinity), ("-inf", -Double.infinity), ("nan", Double.nan)] {
            cases.append((name, BinaryPlist.encode(.dict(["d": .date(Date(timeIntervalSinceReferenceDate: seconds))])), "not a usable date"))
        }
        // "\u{D800}" alone, as bplist00 UTF-16: marker 0x61, one unit; offset table; trailer.
        let lone: [UInt8] = Array("bplist00".utf8) + [0x61, 0xD8, 0x00, 0x08]
            + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 11]
        cases.append(("lone-surrogate", lone, "unpaired surrogate"))
        for (name, bytes, reason) in cases {
            let file = dir + "/\(name).plist"
            try FileIO.writeAtomically(bytes, to: file)
            for args in [["plist", "print", file], ["plist", "print", "--json", file], ["plist", "convert", "--to", "xml", file, dir + "/out.xml"]] {
                let r = try Harness.run(folio, args)
                #expect(r.status == 1, "\(name) \(args): exit \(r.status) \(r.stderr)")
                let lines = r.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines[0].hasPrefix("folio: error: \(file)") && lines[0].contains(reason), "\(name): \(r.stderr)")
                #expect(!FileIO.exists(dir + "/out.xml"))
            }
        }
    }
}
