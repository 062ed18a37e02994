import FolioPlist

/// The common shape of front matter, read without composing a YAML node tree: a block mapping
/// of simple keys to one-line scalars, flow sequences of scalars (`tags: [a, b]`) or block
/// sequences of one-line scalars.
///
/// Anything else (nesting, anchors, aliases, tags, block or multi-line scalars, escapes, tabs,
/// duplicate keys, nulls, several documents) gives nil, and the caller reads the text with Yams,
/// the general implementation. Plain scalars resolve through the same ``YAMLScalars/plain``, so
/// the two differ only in how they cut the text; the tests and the `yaml-simple` fuzz target
/// check that whatever this reads, Yams reads the same. It exists for speed: 10,000 posts'
/// front matter took about a third of a build through libyaml and the node tree.
package enum SimpleYAML {
    /// The mapping `bytes` holds, or nil when it is not of the simple shape (or is empty).
    package static func mapping(_ bytes: ArraySlice<UInt8>) -> [String: PlistValue]? {
        guard printable(bytes) else { return nil }
        let lines = Lines(bytes)
        var dict: [String: PlistValue] = [:]
        var i = 0
        var started = false
        while i < lines.count {
            let line = lines[i]
            if isBlankOrComment(bytes, line) { i += 1; continue }
            // A document start marker may open the text, once.
            if !started, bytes[line].elementsEqual("---".utf8) { started = true; i += 1; continue }
            started = true
            guard let (key, rest) = keyAndRest(bytes, line), dict[key] == nil else { return nil }
            if isBlankOrComment(bytes, rest) {
                guard let (items, next) = blockSequence(bytes, lines, after: i) else { return nil }
                dict[key] = .array(items)
                i = next
                continue
            }
            guard let value = lineValue(bytes, rest) else { return nil }
            dict[key] = value
            i += 1
        }
        return dict.isEmpty ? nil : dict
    }

    package static func mapping(_ bytes: [UInt8]) -> [String: PlistValue]? { mapping(bytes[...]) }

    // MARK: - Lines

    /// The lines of a text, without their line breaks (`\n` or `\r\n`).
    struct Lines {
        private var ranges: [Range<Int>] = []
        init(_ bytes: ArraySlice<UInt8>) {
            var start = bytes.startIndex
            while start < bytes.endIndex {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.endIndex
                let textEnd = end > start && bytes[end - 1] == 0x0D ? end - 1 : end
                ranges.append(start..<textEnd)
                start = end + 1
            }
        }
        var count: Int { ranges.count }
        subscript(i: Int) -> Range<Int> { ranges[i] }
    }

    /// Whether every character is printable for YAML and no character is a line break other
    /// than `\n` or `\r\n` (tabs count as not printable here: they are allowed in places YAML
    /// decides, left to Yams).
    static func printable(_ bytes: ArraySlice<UInt8>) -> Bool {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b < 0x20 {
                guard b == 0x0A || (b == 0x0D && i + 1 < bytes.endIndex && bytes[i + 1] == 0x0A) else { return false }
            } else if b == 0x7F {
                return false
            } else if b == 0xC2 {  // U+0080...U+009F: C1 controls, NEL a line break
                guard i + 1 < bytes.endIndex, bytes[i + 1] >= 0xA0 else { return false }
            } else if b == 0xE2, i + 2 < bytes.endIndex, bytes[i + 1] == 0x80, bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9 {
                return false  // line and paragraph separators
            } else if b == 0xEF, i + 2 < bytes.endIndex,
                (bytes[i + 1] == 0xBF && bytes[i + 2] >= 0xBE) || (bytes[i + 1] == 0xBB && bytes[i + 2] == 0xBF)
            {
                return false  // U+FFFE, U+FFFF, and a byte-order mark (Yams takes it off at the start)
            }
            i += 1
        }
        return true
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 }

    static func skipSpaces(_ bytes: ArraySlice<UInt8>, _ i: Int, _ end: Int) -> Int {
        var i = i
        while i < end, bytes[i] == 0x20 { i += 1 }
        return i
    }

    static func isBlankOrComment(_ bytes: ArraySlice<UInt8>, _ range: Range<Int>) -> Bool {
        let i = skipSpaces(bytes, range.lowerBound, range.upperBound)
        return i == range.upperBound || bytes[i] == UInt8(ascii: "#")
    }

    // MARK: - Mapping lines

    static func isKeyByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
            || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
    }

    /// `key: rest` at the start of a line: the key, and the range after the colon.
    static func keyAndRest(_ bytes: ArraySlice<UInt8>, _ line: Range<Int>) -> (String, Range<Int>)? {
        var i = line.lowerBound
        guard i < line.upperBound, isKeyByte(bytes[i]), bytes[i] != UInt8(ascii: "-"), bytes[i] != UInt8(ascii: ".") else { return nil }
        while i < line.upperBound, isKeyByte(bytes[i]) { i += 1 }
        guard i < line.upperBound, bytes[i] == UInt8(ascii: ":"), i + 1 == line.upperBound || isSpace(bytes[i + 1]) else { return nil }
        return (String(decoding: bytes[line.lowerBound..<i], as: UTF8.self), (i + 1)..<line.upperBound)
    }

    /// The value of `key: …` written on its line.
    static func lineValue(_ bytes: ArraySlice<UInt8>, _ rest: Range<Int>) -> PlistValue? {
        let start = skipSpaces(bytes, rest.lowerBound, rest.upperBound)
        if bytes[start] == UInt8(ascii: "[") {
            guard let (items, end) = flowSequence(bytes, start, rest.upperBound), endsLine(bytes, end, rest.upperBound) else {
                return nil
            }
            return .array(items)
        }
        return lineScalar(bytes, start..<rest.upperBound)
    }

    /// A scalar that takes the rest of a line (with an optional comment).
    static func lineScalar(_ bytes: ArraySlice<UInt8>, _ range: Range<Int>) -> PlistValue? {
        let first = bytes[range.lowerBound]
        if first == UInt8(ascii: "\"") || first == UInt8(ascii: "'") {
            guard let (text, end) = quoted(bytes, range.lowerBound, range.upperBound), endsLine(bytes, end, range.upperBound) else { return nil }
            return .string(text)
        }
        guard let text = plain(bytes, range, flow: false) else { return nil }
        return resolve(text.text)
    }

    /// The items of a block sequence under the key on line `index`, and the line after it; nil
    /// when there is none (the key's value is null) or an item is not a one-line scalar.
    static func blockSequence(_ bytes: ArraySlice<UInt8>, _ lines: Lines, after index: Int) -> ([PlistValue], Int)? {
        var items: [PlistValue] = []
        var indent: Int?
        var j = index + 1
        while j < lines.count {
            let line = lines[j]
            if isBlankOrComment(bytes, line) { j += 1; continue }
            let dash = skipSpaces(bytes, line.lowerBound, line.upperBound)
            guard bytes[dash] == UInt8(ascii: "-"), dash + 1 == line.upperBound || isSpace(bytes[dash + 1]) else { break }
            let column = dash - line.lowerBound
            guard indent == nil || indent == column else { return nil }
            indent = column
            let start = skipSpaces(bytes, dash + 1, line.upperBound)
            guard start < line.upperBound, bytes[start] != UInt8(ascii: "#"),
                let item = lineScalar(bytes, start..<line.upperBound)
            else { return nil }
            items.append(item)
            j += 1
        }
        return items.isEmpty ? nil : (items, j)
    }

    /// Whether only spaces, or spaces and a comment, follow `i`.
    static func endsLine(_ bytes: ArraySlice<UInt8>, _ i: Int, _ end: Int) -> Bool {
        let j = skipSpaces(bytes, i, end)
        return j == end || (j > i && bytes[j] == UInt8(ascii: "#"))
    }

    // MARK: - Scalars

    /// A quoted scalar without escapes (`"…"` without a backslash, `'…'` without a doubled quote)
    /// on one line, and the index after its closing quote.
    static func quoted(_ bytes: ArraySlice<UInt8>, _ start: Int, _ end: Int) -> (String, Int)? {
        let quote = bytes[start]
        var i = start + 1
        while i < end, bytes[i] != quote {
            if quote == UInt8(ascii: "\""), bytes[i] == UInt8(ascii: "\\") { return nil }
            i += 1
        }
        guard i < end else { return nil }
        if quote == UInt8(ascii: "'"), i + 1 < end, bytes[i + 1] == quote { return nil }
        return (String(decoding: bytes[(start + 1)..<i], as: UTF8.self), i + 1)
    }

    /// Characters that cannot start a plain scalar here (YAML's indicators).
    static func isIndicator(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "-"), UInt8(ascii: "?"), UInt8(ascii: ":"), UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"),
            UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "#"), UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"),
            UInt8(ascii: "|"), UInt8(ascii: ">"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "%"), UInt8(ascii: "@"),
            UInt8(ascii: "`"):
            return true
        default: return false
        }
    }

    /// A plain scalar starting at `range.lowerBound`: in a block, up to the end of the line or a
    /// comment; in a flow sequence, up to `,` or `]`. Its text and where it stopped.
    static func plain(_ bytes: ArraySlice<UInt8>, _ range: Range<Int>, flow: Bool) -> (text: String, end: Int)? {
        let start = range.lowerBound
        let first = bytes[start]
        // `-` may open a negative number; every other indicator leaves the scalar to Yams.
        if isIndicator(first) {
            guard first == UInt8(ascii: "-"), start + 1 < range.upperBound,
                (0x30...0x39).contains(bytes[start + 1]) || bytes[start + 1] == UInt8(ascii: ".")
            else { return nil }
        }
        var i = start
        var last = start  // one past the last non-space byte
        while i < range.upperBound {
            let b = bytes[i]
            if b == UInt8(ascii: "#"), i > start, isSpace(bytes[i - 1]) { break }
            if b == UInt8(ascii: ":"), i + 1 == range.upperBound || isSpace(bytes[i + 1]) || flow { return nil }
            if flow {
                if b == UInt8(ascii: ",") || b == UInt8(ascii: "]") { break }
                if b == UInt8(ascii: "[") || b == UInt8(ascii: "{") || b == UInt8(ascii: "}") || b == UInt8(ascii: "#") { return nil }
            }
            if !isSpace(b) { last = i + 1 }
            i += 1
        }
        guard last > start else { return nil }
        return (String(decoding: bytes[start..<last], as: UTF8.self), i)
    }

    /// `[a, "b", 'c']` starting at `start`: its items and the index after `]`.
    static func flowSequence(_ bytes: ArraySlice<UInt8>, _ start: Int, _ end: Int) -> ([PlistValue], Int)? {
        var items: [PlistValue] = []
        var i = skipSpaces(bytes, start + 1, end)
        if i < end, bytes[i] == UInt8(ascii: "]") { return (items, i + 1) }
        while i < end {
            let item: PlistValue?
            if bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") {
                guard let (text, after) = quoted(bytes, i, end) else { return nil }
                item = .string(text)
                i = skipSpaces(bytes, after, end)
            } else {
                guard let (text, after) = plain(bytes, i..<end, flow: true) else { return nil }
                item = resolve(text)
                i = after
            }
            guard let item, i < end else { return nil }
            items.append(item)
            if bytes[i] == UInt8(ascii: "]") { return (items, i + 1) }
            guard bytes[i] == UInt8(ascii: ",") else { return nil }
            i = skipSpaces(bytes, i + 1, end)
            // A trailing comma, or an empty item, is left to Yams.
            guard i < end, bytes[i] != UInt8(ascii: "]"), bytes[i] != UInt8(ascii: ",") else { return nil }
        }
        return nil
    }

    /// A plain scalar's value by the core schema; nil for a null (Yams's path reads it as the
    /// file's rule says) and where it is an error (an integer beyond 64 bits), which Yams's path
    /// reports with its position.
    static func resolve(_ text: String) -> PlistValue? {
        guard !YAMLScalars.nulls.contains(text) else { return nil }
        return try? YAMLScalars.plain(text, at: SourceLocation(line: 1, column: 1))
    }
}
