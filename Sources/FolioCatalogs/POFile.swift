import FolioLocalization
import FolioToolSupport

/// One message from a GNU gettext `.po` file.
package struct POEntry: Equatable, Sendable {
    /// The `msgctxt`, if any.
    package var context: String?
    /// The `msgid`.
    package var id: String
    /// The `msgid_plural`, if the entry is a plural one.
    package var idPlural: String?
    /// The `msgstr`, or `msgstr[0]`…`msgstr[n]` in order for plural entries.
    package var translations: [String]
    /// Whether the entry carries the `fuzzy` flag (msgfmt drops such entries).
    package var fuzzy: Bool
    /// The format its `#,` flags declare (`c-format`, `python-format`, …); ``FormatLanguage/unchecked``
    /// when none does, as `msgfmt -c` checks only flagged entries.
    package var format: FormatLanguage
    /// Translator (`# `) and extracted (`#.`) comments, in file order. (Source references,
    /// `#:` lines, point into the app's code and are not kept: nothing is published from them.)
    package var comments: [String]
    /// The 1-based line of the entry's first keyword.
    package var line: Int

    /// Creates an entry.
    package init(
        context: String? = nil, id: String, idPlural: String? = nil, translations: [String], fuzzy: Bool = false,
        format: FormatLanguage = .unchecked, comments: [String] = [], line: Int
    ) {
        self.format = format
        self.context = context
        self.id = id
        self.idPlural = idPlural
        self.translations = translations
        self.fuzzy = fuzzy
        self.comments = comments
        self.line = line
    }
}

/// A parsed GNU gettext `.po` file: its header, its live (non-obsolete) entries and its plural rule.
package struct POFile: Equatable, Sendable {
    /// The header entry (`msgid ""`) as `Name: value` pairs.
    package var header: [String: String]
    /// Every non-obsolete entry other than the header, fuzzy ones included, in file order.
    package var entries: [POEntry]
    /// The parsed `Plural-Forms` header, if present and well-formed.
    package var pluralForms: PluralFormsExpression?

    /// Creates a file from its parts.
    package init(header: [String: String] = [:], entries: [POEntry] = [], pluralForms: PluralFormsExpression? = nil) {
        self.header = header
        self.entries = entries
        self.pluralForms = pluralForms
    }

    /// Files at least this large are parsed in segments on all cores (see ``parse(_:segments:minimumSize:)``).
    package static let parallelThreshold = 128 * 1024

    /// Parses UTF-8 `bytes` (optional BOM), returning what could be read and every problem found, in file order.
    package static func parse(_ bytes: [UInt8]) -> (POFile, [CatalogDiagnostic]) {
        parse(bytes, segments: Parallel.cores, minimumSize: parallelThreshold)
    }

    /// Like ``parse(_:)``, with the split made explicit (tests force it on small files).
    ///
    /// A file of at least `minimumSize` bytes is cut into up to `segments` parts, each at a blank
    /// line that follows an entry's last string and precedes a comment, `msgctxt` or `msgid`, and
    /// the parts are parsed at once. That is only done when it gives exactly what one pass gives: a
    /// part that reports any problem, a key that two parts both define, or a header outside the
    /// first part sends the whole file through one pass, which then reports every problem in order.
    package static func parse(_ bytes: [UInt8], segments: Int, minimumSize: Int) -> (POFile, [CatalogDiagnostic]) {
        var body = bytes
        if body.count >= 3, body[0] == 0xEF, body[1] == 0xBB, body[2] == 0xBF { body.removeFirst(3) }
        if segments > 1, body.count >= minimumSize {
            let starts = segmentStarts(body, count: segments)
            if starts.count > 1, let file = parseSegments(body, starts) { return (file, []) }
        }
        return parseOnePass(body)
    }

    /// One pass over the whole body (BOM already removed).
    static func parseOnePass(_ body: [UInt8]) -> (POFile, [CatalogDiagnostic]) {
        if let bad = UTF8Validation.firstInvalidOffset(body) {
            let (line, column) = UTF8Validation.position(of: bad, in: body)
            return (POFile(), [CatalogDiagnostic(
                line: line, column: column,
                message: "invalid UTF-8 byte 0x\(StringsFile.hex(UInt32(body[bad]), 2)); convert the file to UTF-8 (msgconv --to-code=UTF-8)")])
        }
        var parser = POParser()
        parser.run(body, 0..<body.count, firstLine: 1)
        let diagnostics = parser.diagnostics.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        return (parser.file, diagnostics)
    }

    /// Byte offsets where the parts start (the first is 0), each at the start of a line.
    static func segmentStarts(_ body: [UInt8], count: Int) -> [Int] {
        var starts = [0]
        for k in 1..<count {
            var i = max(body.count * k / count, starts.last! + 1)
            // The next boundary at or after i: a blank line after a string line, before a
            // comment or a keyword line that starts an entry.
            while i < body.count {
                guard let nl = body[i...].firstIndex(of: 0x0A) else { i = body.count; break }
                let blank = nl + 1
                guard let after = body[blank...].firstIndex(of: 0x0A) else { i = body.count; break }
                if isBlank(body[blank..<after]), endsEntryString(body, lineEndingAt: nl), startsEntry(body, at: after + 1) {
                    starts.append(after + 1)
                    i = after + 1
                    break
                }
                i = blank
            }
            if i >= body.count { break }
        }
        return starts
    }

    static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    /// Whether the line ending at `nl` is a quoted string or a keyword line (so the entry has text).
    static func endsEntryString(_ body: [UInt8], lineEndingAt nl: Int) -> Bool {
        var start = nl
        while start > 0, body[start - 1] != 0x0A { start -= 1 }
        while start < nl, body[start] == 0x20 || body[start] == 0x09 { start += 1 }
        guard start < nl else { return false }
        return body[start] == UInt8(ascii: "\"") || body[start..<nl].starts(with: "msgstr".utf8)
    }

    /// Whether the line at `start` is a comment (not obsolete `#~`), `msgctxt` or `msgid` (not `msgid_plural`).
    static func startsEntry(_ body: [UInt8], at start: Int) -> Bool {
        guard start < body.count else { return false }
        let rest = body[start...]
        if rest.first == UInt8(ascii: "#") { return !rest.dropFirst().starts(with: [UInt8(ascii: "~")]) }
        for keyword in ["msgctxt", "msgid"] where rest.starts(with: keyword.utf8) {
            let next = rest.dropFirst(keyword.utf8.count).first
            return next == 0x20 || next == 0x09 || next == UInt8(ascii: "\"")
        }
        return false
    }

    /// Parses the parts at once and joins them, or nil when one pass must decide (see ``parse(_:segments:minimumSize:)``).
    static func parseSegments(_ body: [UInt8], _ starts: [Int]) -> POFile? {
        let ranges = starts.indices.map { starts[$0]..<(($0 + 1 < starts.count) ? starts[$0 + 1] : body.count) }
        let parsed: [POParser?] = Parallel.map(Array(ranges.enumerated())) { index, range in
            if UTF8Validation.firstInvalidOffset(body[range]) != nil { return nil }
            var firstLine = 1
            if range.lowerBound > 0 {
                firstLine += body.withUnsafeBufferPointer { buf in
                    var n = 0
                    for b in buf[0..<range.lowerBound] where b == 0x0A { n += 1 }
                    return n
                }
            }
            var parser = POParser()
            parser.run(body, range, firstLine: firstLine)
            guard parser.diagnostics.isEmpty, index == 0 || !parser.sawHeader else { return nil }
            return parser
        }
        guard !parsed.contains(where: { $0 == nil }) else { return nil }
        let parts = parsed.map { $0! }
        var file = parts[0].file
        var seen = parts[0].seen
        file.entries.reserveCapacity(parts.reduce(0) { $0 + $1.file.entries.count })
        for part in parts.dropFirst() {
            for key in part.seen.keys where seen[key] != nil { return nil }
            seen.merge(part.seen) { a, _ in a }
            file.entries += part.file.entries
        }
        return file
    }
}

/// A keyword that starts a line of an entry.
enum Keyword: Equatable {
    case msgctxt, msgid, msgidPlural, msgstr, msgstrIndex(Int), unknown

    init(_ word: ArraySlice<UInt8>) {
        if word.elementsEqual("msgid".utf8) { self = .msgid }
        else if word.elementsEqual("msgstr".utf8) { self = .msgstr }
        else if word.elementsEqual("msgid_plural".utf8) { self = .msgidPlural }
        else if word.elementsEqual("msgctxt".utf8) { self = .msgctxt }
        else if word.starts(with: "msgstr[".utf8), word.last == UInt8(ascii: "]"), word.count > 8, word.count <= 8 + 18 {
            // 1 to 18 decimal digits (no sign, no overflow).
            var n = 0
            for d in word.dropFirst(7).dropLast() {
                guard d >= 0x30, d <= 0x39 else { self = .unknown; return }
                n = n * 10 + Int(d - 0x30)
            }
            self = .msgstrIndex(n)
        } else {
            self = .unknown
        }
    }
}

/// An entry's identity: its msgctxt (absent and empty are different) and msgid.
struct EntryKey: Hashable, Sendable {
    var context: String?
    var id: String
}

struct POParser {
    enum State { case none, context, id, idPlural, str }
    enum Field { case context, id, idPlural, str(Int) }

    var file = POFile()
    var diagnostics: [CatalogDiagnostic] = []
    /// The line of each (msgctxt, msgid) read so far.
    var seen: [EntryKey: Int] = [:]
    /// Whether a header entry (`msgid ""`, no context) was read.
    var sawHeader = false

    // The entry being read.
    var state = State.none
    var broken = false
    var startLine = 0
    var idLine = 0
    var context: [UInt8]?
    var id: [UInt8] = []
    var idPlural: [UInt8]?
    var translations: [[UInt8]] = []
    /// Emptied translation buffers of earlier entries, reused so an entry allocates no new ones.
    var spareBuffers: [[UInt8]] = []
    var plural = false
    var fuzzy = false
    var format: FormatLanguage?
    var comments: [String] = []
    var field: Field?
    var fieldLine = 0
    /// Whether an octal or hex escape wrote raw bytes into the entry (so its UTF-8 must be checked).
    var byteEscapes = false

    /// Feeds the lines of `body[range]` (whole lines), numbering them from `firstLine`, then finishes.
    mutating func run(_ body: [UInt8], _ range: Range<Int>, firstLine: Int) {
        // Room for the entries of a typical catalog (one per ~150 bytes), so the tables grow rarely.
        seen.reserveCapacity(range.count / 150)
        file.entries.reserveCapacity(range.count / 150)
        var lineNumber = firstLine
        var start = range.lowerBound
        var line: [UInt8] = []
        line.reserveCapacity(256)
        while start <= range.upperBound {
            var end = start
            while end < range.upperBound, body[end] != 0x0A { end += 1 }
            // One buffer for every line: no allocation per line.
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: body[start..<end])
            if line.last == 0x0D { line.removeLast() }
            feed(line, lineNumber)
            lineNumber += 1
            start = end + 1
        }
        finish()
    }

    mutating func error(_ line: Int, _ column: Int, _ message: String) {
        diagnostics.append(CatalogDiagnostic(line: line, column: column, message: message))
    }

    /// The 1-based character column of byte `offset` in `line`.
    static func column(_ offset: Int, _ line: [UInt8]) -> Int {
        var col = 1
        for b in line[0..<min(offset, line.count)] where b & 0xC0 != 0x80 { col += 1 }
        return col
    }

    /// Reads a `#,` line's comma-separated flags (spaces around a flag allowed): `fuzzy`, and the
    /// first format flag (`c-format`, `no-python-format`, …), which decides how the entry is checked.
    mutating func readFlags(_ flags: ArraySlice<UInt8>) {
        var start = flags.startIndex
        while start <= flags.endIndex {
            var end = start
            while end < flags.endIndex, flags[end] != UInt8(ascii: ",") { end += 1 }
            let flag = Self.trimmed(flags[start..<end])
            if flag.elementsEqual("fuzzy".utf8) {
                fuzzy = true
            } else if format == nil, flag.elementsEqual("c-format".utf8) {
                format = .c  // the usual flag, without making a String of it
            } else if format == nil, flag.count > 7, let language = FormatLanguage(gettextFlag: Self.text(flag)) {
                format = language
            }
            start = end + 1
        }
    }

    static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var sub = bytes
        while let f = sub.first, f == 0x20 || f == 0x09 { sub.removeFirst() }
        while let l = sub.last, l == 0x20 || l == 0x09 { sub.removeLast() }
        return sub
    }

    static func trim(_ s: String) -> String {
        var sub = Substring(s)
        while let f = sub.first, f == " " || f == "\t" { sub.removeFirst() }
        while let f = sub.last, f == " " || f == "\t" { sub.removeLast() }
        return String(sub)
    }

    mutating func reset() {
        state = .none
        broken = false
        startLine = 0
        context = nil
        id.removeAll(keepingCapacity: true)
        idPlural = nil
        while var t = translations.popLast() {
            t.removeAll(keepingCapacity: true)
            spareBuffers.append(t)
        }
        plural = false
        fuzzy = false
        format = nil
        comments = []
        field = nil
        byteEscapes = false
    }

    mutating func feed(_ line: [UInt8], _ number: Int) {
        var i = 0
        while i < line.count, line[i] == 0x20 || line[i] == 0x09 { i += 1 }
        guard i < line.count else { return }
        if line[i] == UInt8(ascii: "#") {
            if state == .str { finish() }
            let kind = i + 1 < line.count ? line[i + 1] : 0x20
            let rest = line[min(i + 2, line.count)...]
            switch kind {
            case UInt8(ascii: "~"):
                // Obsolete entry: msgfmt ignores it, and so do we (including comments gathered for it).
                if state == .none { reset() }
            case UInt8(ascii: ","):
                readFlags(rest)
            case UInt8(ascii: ":"):
                break  // source references
            case UInt8(ascii: "."), 0x20, 0x09:
                comments.append(Self.text(Self.trimmed(rest)))
            case UInt8(ascii: "|"):
                break  // previous msgid, for translators only
            default:
                comments.append(Self.text(Self.trimmed(line[(i + 1)...])))
            }
            return
        }
        if line[i] == UInt8(ascii: "\"") {
            guard let f = field else {
                error(number, Self.column(i, line), "a string continuation with no keyword before it; start the entry with msgid \"…\"")
                abandon(number)
                return
            }
            if !read(line, from: i, number, into: f) { broken = true }
            return
        }
        var j = i
        while j < line.count, line[j] != 0x20, line[j] != 0x09, line[j] != UInt8(ascii: "\"") { j += 1 }
        let word = line[i..<j]
        let col = Self.column(i, line)
        let newField: Field
        switch Keyword(word) {
        case .msgctxt:
            if state == .str { finish() }
            guard state == .none else {
                outOfOrder(number, col, "msgctxt must come before msgid")
                return
            }
            state = .context
            newField = .context
            context = []
        case .msgid:
            if state == .str { finish() }
            if state == .id || state == .idPlural { finish() }
            state = .id
            newField = .id
            idLine = number
        case .msgidPlural:
            guard state == .id, !plural else {
                outOfOrder(number, col, state == .none || state == .context ? "msgid_plural must follow a msgid" : "msgid_plural must come right after msgid, before any msgstr")
                return
            }
            state = .idPlural
            plural = true
            idPlural = []
            newField = .idPlural
        case .msgstr:
            guard state == .id || state == .idPlural else {
                outOfOrder(number, col, state == .str ? "a second msgstr for the same msgid; remove one" : "msgstr before msgid; every entry starts with msgid \"…\"")
                return
            }
            if plural {
                error(number, col, "plural entry needs msgstr[0], msgstr[1], …, not a plain msgstr")
                broken = true
            }
            state = .str
            translations.append(spareBuffers.popLast() ?? [])
            newField = .str(0)
        case .unknown:
            error(number, col, "unknown keyword '\(Self.text(word))'; expected msgctxt, msgid, msgid_plural, msgstr, msgstr[n], a # comment or a quoted string")
            abandon(number)
            return
        case .msgstrIndex(let n):
            guard state == .idPlural || (state == .str && plural) else {
                outOfOrder(number, col, state == .id ? "msgstr[\(n)] needs a msgid_plural before it; use plain msgstr for a singular entry" : "msgstr[\(n)] before msgid; every entry starts with msgid \"…\"")
                return
            }
            guard n == translations.count else {
                if broken {
                    field = nil
                    return
                }
                error(number, col, "msgstr[\(n)] out of sequence: expected msgstr[\(translations.count)]; indices must run 0, 1, 2, … without gaps")
                broken = true
                state = .str
                field = nil
                return
            }
            state = .str
            translations.append(spareBuffers.popLast() ?? [])
            newField = .str(n)
        }
        if startLine == 0 { startLine = number }
        field = newField
        fieldLine = number
        var k = j
        while k < line.count, line[k] == 0x20 || line[k] == 0x09 { k += 1 }
        guard k < line.count, line[k] == UInt8(ascii: "\"") else {
            let keyword = Self.text(word)
            error(number, Self.column(k, line), "\(keyword) must be followed by a quoted string, as in \(keyword) \"\"")
            broken = true
            return
        }
        if !read(line, from: k, number, into: newField) { broken = true }
    }

    /// Marks the entry being read as broken so that the next msgctxt/msgid starts a fresh one.
    mutating func abandon(_ line: Int) {
        broken = true
        if state == .none {
            startLine = line
            state = .str
        }
        field = nil
    }

    mutating func outOfOrder(_ line: Int, _ col: Int, _ message: String) {
        if !broken { error(line, col, "keyword out of order: \(message)") }
        broken = true
        if state == .none { startLine = line }
        state = .str  // so the next msgctxt/msgid starts afresh
        field = nil
    }

    /// Reads the quoted strings at `start` onto the end of field `f`; false (after reporting)
    /// if they are malformed, which breaks the entry. The field's buffer is moved out while it
    /// is appended to, and back: no copy.
    mutating func read(_ line: [UInt8], from start: Int, _ number: Int, into f: Field) -> Bool {
        var buffer: [UInt8] = []
        switch f {
        case .context:
            buffer = context ?? []
            context = nil
        case .id: swap(&buffer, &id)
        case .idPlural:
            buffer = idPlural ?? []
            idPlural = nil
        case .str(let n): if n < translations.count { swap(&buffer, &translations[n]) }
        }
        let ok = readStrings(line, from: start, number, into: &buffer)
        switch f {
        case .context: context = buffer
        case .id: id = buffer
        case .idPlural: idPlural = buffer
        case .str(let n): if n < translations.count { translations[n] = buffer }
        }
        return ok
    }

    /// Reads one or more adjacent quoted strings starting at `start` onto the end of `out`;
    /// false (after reporting) if malformed.
    mutating func readStrings(_ line: [UInt8], from start: Int, _ number: Int, into out: inout [UInt8]) -> Bool {
        var i = start
        while true {
            while i < line.count, line[i] == 0x20 || line[i] == 0x09 { i += 1 }
            guard i < line.count else { return true }
            guard line[i] == UInt8(ascii: "\"") else {
                error(number, Self.column(i, line), "unexpected text after the closing quote; put each string in \"…\" and escape inner quotes as \\\"")
                return false
            }
            let open = i
            i += 1
            var closed = false
            while i < line.count {
                // Copy the run up to the next quote or backslash in one go.
                var j = i
                while j < line.count, line[j] != UInt8(ascii: "\""), line[j] != UInt8(ascii: "\\") { j += 1 }
                if j > i { out.append(contentsOf: line[i..<j]) }
                i = j
                guard i < line.count else { break }
                let c = line[i]
                if c == UInt8(ascii: "\"") { closed = true; i += 1; break }
                let escAt = i  // its column is worked out only for an error
                i += 1
                guard i < line.count else { break }
                let e = line[i]
                i += 1
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "a"): out.append(0x07)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "v"): out.append(0x0B)
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "?"): out.append(e)
                case UInt8(ascii: "0")...UInt8(ascii: "7"):
                    var v = Int(e - 48)
                    var digits = 1
                    while digits < 3, i < line.count, line[i] >= 0x30, line[i] <= 0x37 { v = v * 8 + Int(line[i] - 48); i += 1; digits += 1 }
                    out.append(UInt8(truncatingIfNeeded: v))
                    byteEscapes = true
                case UInt8(ascii: "x"):
                    var v = 0
                    var digits = 0
                    while digits < 2, i < line.count, let h = Self.hex(line[i]) { v = v * 16 + h; i += 1; digits += 1 }
                    guard digits > 0 else {
                        error(number, Self.column(escAt, line), "\\x must be followed by hex digits, as in \\x41")
                        return false
                    }
                    out.append(UInt8(v))
                    byteEscapes = true
                default:
                    error(number, Self.column(escAt, line), "unknown escape \\\(Self.text([e][...])); use \\n \\t \\\" \\\\ \\a \\b \\f \\v \\r, octal \\101 or hex \\x41")
                    return false
                }
            }
            guard closed else {
                error(number, Self.column(open, line), "malformed string: this \" is never closed on its line; add a closing \" (continue long strings on the next line with a new \"…\")")
                return false
            }
        }
    }

    static func hex(_ d: UInt8) -> Int? {
        switch d {
        case 0x30...0x39: return Int(d) - 0x30
        case 0x61...0x66: return Int(d) - 0x57
        case 0x41...0x46: return Int(d) - 0x37
        default: return nil
        }
    }

    /// Completes the entry being read, if any.
    mutating func finish() {
        defer { reset() }
        switch state {
        case .none:
            return
        case .context, .id, .idPlural:
            error(startLine, 1, "missing msgstr for the entry at line \(startLine); add msgstr \"\" (or msgstr[0] … for a plural entry)")
            return
        case .str:
            break
        }
        if broken { return }
        // The file is valid UTF-8 and the strings are cut at ASCII quotes and escapes, so only byte
        // escapes can make them invalid.
        if byteEscapes {
            let strings = [id] + (context.map { [$0] } ?? []) + (idPlural.map { [$0] } ?? []) + translations
            for s in strings where UTF8Validation.firstInvalidOffset(s) != nil {
                error(startLine, 1, "an escape in this entry produces invalid UTF-8; write the characters themselves instead of octal/hex byte escapes")
                return
            }
        }
        let idText = Self.text(id[...])
        let contextText = context.map { Self.text($0[...]) }
        let key = EntryKey(context: contextText, id: idText)
        // One hash lookup in the usual case: insert, and put the first line back on a duplicate.
        if let first = seen.updateValue(idLine, forKey: key) {
            seen[key] = first
            let ctx = contextText.map { " in msgctxt \"\($0)\"" } ?? ""
            error(idLine, 1, "duplicate msgid \"\(idText)\"\(ctx): first defined at line \(first); merge the two entries (msguniq)")
            return
        }
        let texts = translations.map { Self.text($0[...]) }
        if idText.isEmpty && contextText == nil {
            sawHeader = true
            for raw in (texts.first ?? "").split(separator: "\n") {
                guard let colon = raw.firstIndex(of: ":") else { continue }
                file.header[Self.trim(String(raw[..<colon]))] = Self.trim(String(raw[raw.index(after: colon)...]))
            }
            if let forms = file.header["Plural-Forms"] {
                switch Result<PluralFormsExpression, CatalogDiagnostic>(catching: { () throws(CatalogDiagnostic) in try PluralFormsExpression(forms) }) {
                case .success(let rule): file.pluralForms = rule
                case .failure(let problem):
                    error(startLine, 1, "invalid Plural-Forms header (column \(problem.column) of its value): \(problem.message)")
                }
            }
            return
        }
        file.entries.append(POEntry(
            context: contextText, id: idText, idPlural: idPlural.map { Self.text($0[...]) }, translations: texts,
            fuzzy: fuzzy, format: format ?? .unchecked, comments: comments, line: startLine))
    }
}
