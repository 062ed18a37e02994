import FolioTestSupport
import Testing

@testable import FolioCatalogs
@testable import FolioLocalization

/// Large `.po` files are parsed in parts at once; these tests hold that to exactly what one pass
/// over the file gives, for good files and damaged ones.
@Suite struct POParallelTests {
    /// A catalog of `entries` entries after a header: comments, flags, msgctxt, plurals and
    /// multi-line strings, with CRLF line ends on some lines.
    static func catalog(entries: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        var text = """
            # A generated catalog.
            msgid ""
            msgstr ""
            "Language: ru\\n"
            "Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\\n"


            """
        for i in 0..<entries {
            let eol = rng.chance(0.1) ? "\r\n" : "\n"
            text += "#: Sources/App/File\(i % 7).swift:\(i + 1)" + eol
            if rng.chance(0.2) { text += "# note \(i)" + eol }
            if rng.chance(0.1) { text += "#, fuzzy, c-format" + eol }
            if rng.chance(0.05) { text += "msgctxt \"menu\"" + eol }
            if rng.chance(0.2) {
                text += "msgid \"%d file [\(i)]\"\(eol)msgid_plural \"%d files [\(i)]\"\(eol)"
                text += "msgstr[0] \"%d файл\"\(eol)msgstr[1] \"%d файла\"\(eol)msgstr[2] \"%d файлов\"\(eol)"
            } else if rng.chance(0.2) {
                text += "msgid \"\"\(eol)\"line one [\(i)]\\n\"\(eol)\"line two\"\(eol)msgstr \"\"\(eol)\"строка\\n\"\(eol)\"вторая\"\(eol)"
            } else {
                text += "msgid \"Text \(i)\"\(eol)msgstr \"Текст \(i)\"\(eol)"
            }
            text += rng.chance(0.05) ? "\n\n" : "\n"
            if rng.chance(0.02) { text += "#~ msgid \"gone \(i)\"\n#~ msgstr \"нет\"\n\n" }
        }
        return Array(text.utf8)
    }

    static func onePass(_ bytes: [UInt8]) -> (POFile, [CatalogDiagnostic]) {
        POFile.parse(bytes, segments: 1, minimumSize: .max)
    }

    @Test("a good catalog is really cut into parts, and the parts give what one pass gives")
    func splitsAndAgrees() {
        let bytes = Self.catalog(entries: 3000, seed: 1)
        for segments in [2, 3, 7] {
            let starts = POFile.segmentStarts(bytes, count: segments)
            #expect(starts.count == segments, "\(starts)")
            for start in starts.dropFirst() {
                #expect(bytes[start - 1] == 0x0A)
                #expect(POFile.startsEntry(bytes, at: start))
            }
            #expect(POFile.parseSegments(bytes, starts) != nil, "a clean file is parsed in parts")
            let (file, diagnostics) = POFile.parse(bytes, segments: segments, minimumSize: 0)
            let (expected, expectedDiagnostics) = Self.onePass(bytes)
            #expect(diagnostics.isEmpty && expectedDiagnostics.isEmpty)
            #expect(file.entries.count > 2500)
            #expect(file == expected)
        }
    }

    @Test("a problem in any part, a key two parts define, a header in a later part: the same as one pass")
    func fallsBackToOnePass() {
        let bytes = Self.catalog(entries: 600, seed: 2)
        let text = String(decoding: bytes, as: UTF8.self)
        let variants = [
            // A duplicate of an entry from the first part, near the end.
            text + "\nmsgid \"Text 3\"\nmsgstr \"again\"\n",
            // A second header.
            text + "\nmsgid \"\"\nmsgstr \"Language: fr\\n\"\n",
            // An error in the last part.
            text + "\nmsgid \"broken\nmsgstr \"x\"\n",
            // An entry cut by a blank line, whose msgstr opens the next part.
            text + "\nmsgid \"split\"\n\nmsgstr \"x\"\n",
            // Invalid UTF-8 late in the file.
            text + "\nmsgid \"bad\"\nmsgstr \"\u{FFFD}\"\n",
        ]
        for (n, variant) in variants.enumerated() {
            var bytes = Array(variant.utf8)
            if n == 4 { bytes[bytes.count - 5] = 0xFF }
            for segments in [2, 4] {
                let (file, diagnostics) = POFile.parse(bytes, segments: segments, minimumSize: 0)
                let (expected, expectedDiagnostics) = Self.onePass(bytes)
                #expect(file == expected, "variant \(n), \(segments) parts")
                #expect(diagnostics == expectedDiagnostics, "variant \(n), \(segments) parts")
            }
            // All but the blank line inside an entry are errors (one pass reads across it).
            #expect(Self.onePass(bytes).1.isEmpty == (n == 3), "variant \(n)")
        }
    }

    @Test("seeded damage anywhere: the parts agree with one pass, entries and diagnostics")
    func randomDamageAgrees() {
        var rng = SplitMix64(seed: 0x5E6)
        let base = Self.catalog(entries: 200, seed: 3)
        let specials: [UInt8] = Array("\"\\#~,:\n\n msgidstrctxt_plural[]0".utf8) + [0xFF]
        for _ in 0..<300 {
            var bytes = base
            for _ in 0..<rng.int(1...4) {
                let at = rng.int(0...(bytes.count - 1))
                switch rng.int(0...2) {
                case 0: bytes[at] = rng.pick(specials)
                case 1: bytes.insert(rng.pick(specials), at: at)
                default: bytes.remove(at: at)
                }
            }
            let segments = rng.int(2...6)
            let (file, diagnostics) = POFile.parse(bytes, segments: segments, minimumSize: 0)
            let (expected, expectedDiagnostics) = Self.onePass(bytes)
            #expect(file == expected)
            #expect(diagnostics == expectedDiagnostics)
        }
    }
}
