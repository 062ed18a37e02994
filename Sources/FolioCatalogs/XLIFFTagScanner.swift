import CLibXML2
import FolioLocalization
import FolioPlist
import Foundation

/// Start-tag positions found by scanning the raw bytes, so diagnostics can carry columns (libxml2 keeps
/// only lines). Valid only for ASCII-compatible encodings; otherwise `tags` is empty.
struct XLIFFTagScanner {
    /// One start tag: where `<` is and where the tag's `>` is.
    struct Tag {
        /// The byte offset of `<`.
        var start: Int
        /// The byte offset of the closing `>` (or the end of input).
        var end: Int
    }

    /// The input.
    let bytes: [UInt8]
    /// The offset the first line starts at (after a UTF-8 byte order mark).
    let origin: Int
    /// The offset each line starts at.
    private(set) var lineStarts: [Int] = []
    /// Every start tag in document order (empty when the encoding is not ASCII-compatible).
    private(set) var tags: [Tag] = []
    /// The offset of the first `<!ENTITY` inside a DOCTYPE, if any.
    private(set) var entityDeclaration: Int?

    /// Scans `bytes`.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        let bom = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
        origin = bom ? 3 : 0
        lineStarts = [origin]
        for (i, b) in bytes.enumerated() where b == 0x0A { lineStarts.append(i + 1) }
        // UTF-16/32 (with or without a byte order mark) and EBCDIC: no byte-level scan.
        if bytes.count >= 2, bytes[0] == 0xFE || bytes[0] == 0xFF || bytes[0] == 0x00 || bytes[1] == 0x00 || bytes[0] == 0x4C {
            return
        }
        scan()
    }

    /// Whether the bytes at `i` spell `s`.
    private func hasPrefix(_ s: String, at i: Int) -> Bool {
        var j = i
        for b in s.utf8 {
            guard j < bytes.count, bytes[j] == b else { return false }
            j += 1
        }
        return true
    }

    /// The offset just past the first `terminator` at or after `i` (or the end of input).
    private func skip(past terminator: String, from i: Int) -> Int {
        var j = i
        while j < bytes.count {
            if bytes[j] == terminator.utf8.first!, hasPrefix(terminator, at: j) { return j + terminator.utf8.count }
            j += 1
        }
        return bytes.count
    }

    /// Records every start tag and any entity declaration, skipping comments, CDATA, PIs and end tags.
    private mutating func scan() {
        var i = origin
        let n = bytes.count
        while i < n {
            guard bytes[i] == 0x3C else { i += 1; continue }  // <
            if hasPrefix("<!--", at: i) {
                i = skip(past: "-->", from: i + 4)
            } else if hasPrefix("<![CDATA[", at: i) {
                i = skip(past: "]]>", from: i + 9)
            } else if hasPrefix("<?", at: i) {
                i = skip(past: "?>", from: i + 2)
            } else if hasPrefix("<!", at: i) {
                i = skipDeclaration(from: i)
            } else if hasPrefix("</", at: i) {
                i = skip(past: ">", from: i + 2)
            } else {
                let end = tagEnd(from: i + 1)
                tags.append(Tag(start: i, end: end))
                i = end + 1
            }
        }
    }

    /// Skips `<!DOCTYPE …>` including an internal subset, noting any `<!ENTITY`.
    private mutating func skipDeclaration(from start: Int) -> Int {
        var i = start + 2
        var inSubset = false
        var quote: UInt8?
        while i < bytes.count {
            let b = bytes[i]
            if let q = quote {
                if b == q { quote = nil }
            } else if inSubset, hasPrefix("<!--", at: i) {
                i = skip(past: "-->", from: i + 4)
                continue
            } else if inSubset, hasPrefix("<!ENTITY", at: i) {
                if entityDeclaration == nil { entityDeclaration = i }
            } else if b == 0x22 || b == 0x27 {
                quote = b
            } else if b == 0x5B {  // [
                inSubset = true
            } else if b == 0x5D {  // ]
                inSubset = false
            } else if b == 0x3E, !inSubset {  // >
                return i + 1
            }
            i += 1
        }
        return bytes.count
    }

    /// The offset of the `>` closing a start tag whose name begins at `i` (quoted `>` skipped).
    private func tagEnd(from i: Int) -> Int {
        var j = i
        var quote: UInt8?
        while j < bytes.count {
            let b = bytes[j]
            if let q = quote {
                if b == q { quote = nil }
            } else if b == 0x22 || b == 0x27 {
                quote = b
            } else if b == 0x3E {
                return j
            }
            j += 1
        }
        return bytes.count
    }

    /// The 1-based line and character column of byte `offset`.
    func position(ofOffset offset: Int) -> (line: Int, column: Int) {
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        var column = 1
        var k = lineStarts[lo]
        while k < offset, k < bytes.count {
            if bytes[k] & 0xC0 != 0x80 { column += 1 }
            k += 1
        }
        return (lo + 1, column)
    }

    /// The 1-based line of byte `offset`.
    func line(ofOffset offset: Int) -> Int { position(ofOffset: offset).line }

    /// The offset of attribute `name` inside `tag`, if written there.
    func attributeOffset(_ name: String, in tag: Tag) -> Int? {
        let nameBytes = Array(name.utf8)
        var j = tag.start + 1
        var quote: UInt8?
        while j < tag.end {
            let b = bytes[j]
            if let q = quote {
                if b == q { quote = nil }
                j += 1
                continue
            }
            if b == 0x22 || b == 0x27 { quote = b; j += 1; continue }
            let prev = bytes[j - 1]
            if prev == 0x20 || prev == 0x09 || prev == 0x0A || prev == 0x0D, j + nameBytes.count <= tag.end,
                Array(bytes[j..<(j + nameBytes.count)]) == nameBytes
            {
                var k = j + nameBytes.count
                while k < tag.end, bytes[k] == 0x20 || bytes[k] == 0x09 || bytes[k] == 0x0A || bytes[k] == 0x0D { k += 1 }
                if k < tag.end, bytes[k] == 0x3D { return j }  // =
            }
            j += 1
        }
        return nil
    }
}
