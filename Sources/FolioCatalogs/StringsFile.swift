import FolioLocalization

/// One `"key" = "value";` pair from an Apple `.strings` file.
package struct StringsEntry: Equatable, Sendable {
    /// The key, with escapes resolved.
    package var key: String
    /// The value, with escapes resolved.
    package var value: String
    /// The last comment before the entry, trimmed, if any.
    package var comment: String?
    /// The 1-based line of the key.
    package var line: Int
    /// The 1-based column of the key.
    package var column: Int

    /// Creates an entry.
    package init(key: String, value: String, comment: String? = nil, line: Int, column: Int) {
        self.key = key
        self.value = value
        self.comment = comment
        self.line = line
        self.column = column
    }
}

/// A parser for Apple `.strings` files (UTF-8, or UTF-16 with a byte order mark).
package enum StringsFile {
    /// Parses `bytes`, returning every well-formed entry and every problem found, in file order.
    package static func parse(_ bytes: [UInt8]) -> (entries: [StringsEntry], diagnostics: [CatalogDiagnostic]) {
        let scalars: [Unicode.Scalar]
        switch decode(bytes) {
        case .success(let s): scalars = s
        case .failure(let d): return ([], [d])
        }
        var lexer = Lexer(scalars)
        lexer.run()
        var parser = Parser(tokens: lexer.tokens, diagnostics: lexer.diagnostics, truncated: lexer.truncated,
                            eofLine: lexer.line, eofColumn: lexer.column)
        parser.run()
        let diagnostics = parser.diagnostics.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        return (parser.entries, diagnostics)
    }

    // MARK: Decoding

    static func hex(_ v: UInt32, _ width: Int) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    static func decode(_ bytes: [UInt8]) -> Result<[Unicode.Scalar], CatalogDiagnostic> {
        if bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
            return decodeUTF16(Array(bytes[2...]), littleEndian: bytes[0] == 0xFF)
        }
        var body = bytes
        if body.count >= 3, body[0] == 0xEF, body[1] == 0xBB, body[2] == 0xBF { body.removeFirst(3) }
        if let bad = UTF8Validation.firstInvalidOffset(body) {
            let (line, column) = UTF8Validation.position(of: bad, in: body)
            return .failure(CatalogDiagnostic(
                line: line, column: column,
                message: "invalid UTF-8 byte 0x\(hex(UInt32(body[bad]), 2)); save the file as UTF-8 (or UTF-16 with a byte order mark)"))
        }
        return .success(Array(String(decoding: body, as: UTF8.self).unicodeScalars))
    }

    private static func decodeUTF16(_ body: [UInt8], littleEndian: Bool) -> Result<[Unicode.Scalar], CatalogDiagnostic> {
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(body.count / 2)
        var line = 1
        var column = 1
        func unit(_ k: Int) -> UInt16 {
            let a = UInt16(body[2 * k]), b = UInt16(body[2 * k + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        let count = body.count / 2
        var k = 0
        while k < count {
            let u = unit(k)
            var scalar: Unicode.Scalar?
            if u >= 0xD800 && u <= 0xDBFF {
                if k + 1 < count {
                    let l = unit(k + 1)
                    if l >= 0xDC00 && l <= 0xDFFF {
                        scalar = Unicode.Scalar(0x10000 + ((UInt32(u) - 0xD800) << 10) + (UInt32(l) - 0xDC00))
                        k += 1
                    }
                }
            } else if !(u >= 0xDC00 && u <= 0xDFFF) {
                scalar = Unicode.Scalar(u)
            }
            guard let s = scalar else {
                return .failure(CatalogDiagnostic(
                    line: line, column: column,
                    message: "unpaired UTF-16 surrogate 0x\(hex(UInt32(u), 4)); re-save the file as valid UTF-16 or UTF-8"))
            }
            out.append(s)
            if s == "\n" { line += 1; column = 1 } else { column += 1 }
            k += 1
        }
        if body.count % 2 != 0 {
            return .failure(CatalogDiagnostic(
                line: line, column: column,
                message: "UTF-16 file ends with half a code unit; re-save the file as valid UTF-16 or UTF-8"))
        }
        return .success(out)
    }

    // MARK: Lexing

    enum Kind: Equatable { case quoted, bare, equals, semicolon, other }

    struct Token {
        var kind: Kind
        var text: String
        var line: Int
        var column: Int
        var comment: String?
        var bad = false
    }

    static func isBare(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "a"..."z", "A"..."Z", "0"..."9", "_", ".", "-": return true
        default: return c.value >= 0x80 && c.properties.isAlphabetic
        }
    }

    struct Lexer {
        let s: [Unicode.Scalar]
        var i = 0
        var line = 1
        var column = 1
        var tokens: [Token] = []
        var diagnostics: [CatalogDiagnostic] = []
        var truncated = false
        var pendingComment: String?

        init(_ s: [Unicode.Scalar]) { self.s = s }

        func peek(_ k: Int = 0) -> Unicode.Scalar? { i + k < s.count ? s[i + k] : nil }

        mutating func advance() {
            if s[i] == "\n" { line += 1; column = 1 } else { column += 1 }
            i += 1
        }

        mutating func error(_ line: Int, _ column: Int, _ message: String) {
            diagnostics.append(CatalogDiagnostic(line: line, column: column, message: message))
        }

        mutating func run() {
            while let c = peek() {
                let l = line, col = column
                if c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{0B}" || c == "\u{0C}" || c == "\u{FEFF}" {
                    advance()
                } else if c == "/" && peek(1) == "*" {
                    advance(); advance()
                    var text = String.UnicodeScalarView()
                    var closed = false
                    while let d = peek() {
                        if d == "*" && peek(1) == "/" { advance(); advance(); closed = true; break }
                        text.append(d)
                        advance()
                    }
                    if !closed {
                        error(l, col, "unterminated comment: this /* is never closed; add */ to end it")
                        truncated = true
                        return
                    }
                    pendingComment = trimmed(String(text))
                } else if c == "/" && peek(1) == "/" {
                    advance(); advance()
                    var text = String.UnicodeScalarView()
                    while let d = peek(), d != "\n" { text.append(d); advance() }
                    pendingComment = trimmed(String(text))
                } else if c == "\"" {
                    guard lexString(l, col) else { truncated = true; return }
                } else if c == "=" || c == ";" {
                    advance()
                    emit(c == "=" ? .equals : .semicolon, String(c), l, col)
                } else if StringsFile.isBare(c) {
                    var text = String.UnicodeScalarView()
                    while let d = peek(), StringsFile.isBare(d) { text.append(d); advance() }
                    emit(.bare, String(text), l, col)
                } else {
                    advance()
                    emit(.other, String(c), l, col)
                }
            }
        }

        mutating func emit(_ kind: Kind, _ text: String, _ l: Int, _ col: Int, bad: Bool = false) {
            tokens.append(Token(kind: kind, text: text, line: l, column: col, comment: pendingComment, bad: bad))
            pendingComment = nil
        }

        func trimmed(_ t: String) -> String {
            let ws: Set<Character> = [" ", "\t", "\n", "\r"]
            var sub = Substring(t)
            while let f = sub.first, ws.contains(f) { sub.removeFirst() }
            while let f = sub.last, ws.contains(f) { sub.removeLast() }
            return String(sub)
        }

        /// Reads a quoted string; false if it is unterminated.
        mutating func lexString(_ l: Int, _ col: Int) -> Bool {
            advance()
            var out = String.UnicodeScalarView()
            var bad = false
            var pendingHigh: (value: UInt32, line: Int, column: Int)?
            func flushHigh(_ lexer: inout Lexer) {
                if let h = pendingHigh {
                    lexer.error(h.line, h.column, "unpaired surrogate \\U\(StringsFile.hex(h.value, 4)); follow it with a low surrogate \\UDC00-\\UDFFF or write the character itself")
                    bad = true
                    pendingHigh = nil
                }
            }
            while let c = peek() {
                if c == "\"" {
                    flushHigh(&self)
                    advance()
                    emit(.quoted, String(out), l, col, bad: bad)
                    return true
                }
                guard c == "\\" else {
                    flushHigh(&self)
                    out.append(c)
                    advance()
                    continue
                }
                let el = line, ec = column
                advance()
                guard let e = peek() else { break }
                advance()
                var simple: Unicode.Scalar?
                switch e {
                case "n": simple = "\n"
                case "t": simple = "\t"
                case "r": simple = "\r"
                case "\"": simple = "\""
                case "\\": simple = "\\"
                case "'": simple = "'"
                case "0"..."7":
                    var v = e.value - 48
                    var digits = 1
                    while digits < 3, let d = peek(), ("0"..."7").contains(d) { v = v * 8 + d.value - 48; advance(); digits += 1 }
                    simple = Unicode.Scalar(v)
                case "U", "u":
                    var v: UInt32 = 0
                    var digits = 0
                    while digits < 4, let d = peek(), let h = hexValue(d) { v = v * 16 + h; advance(); digits += 1 }
                    if digits == 0 {
                        error(el, ec, "\\\(e) must be followed by 1 to 4 hex digits, as in \\U00E9")
                        bad = true
                        continue
                    }
                    if v >= 0xD800 && v <= 0xDBFF {
                        flushHigh(&self)
                        pendingHigh = (v, el, ec)
                        continue
                    }
                    if v >= 0xDC00 && v <= 0xDFFF {
                        if let h = pendingHigh {
                            out.append(Unicode.Scalar(0x10000 + ((h.value - 0xD800) << 10) + (v - 0xDC00))!)
                            pendingHigh = nil
                        } else {
                            error(el, ec, "unpaired surrogate \\U\(StringsFile.hex(v, 4)); precede it with a high surrogate \\UD800-\\UDBFF or write the character itself")
                            bad = true
                        }
                        continue
                    }
                    simple = Unicode.Scalar(v)
                default:
                    error(el, ec, "unknown escape \\\(e); use one of \\n \\t \\r \\\" \\\\ \\' \\0, \\UXXXX or octal \\101, or write the character itself")
                    bad = true
                    flushHigh(&self)
                    out.append(e)
                    continue
                }
                flushHigh(&self)
                if let s = simple { out.append(s) }
            }
            error(l, col, "unterminated string: this \" is never closed; add a closing \"")
            return false
        }

        func hexValue(_ d: Unicode.Scalar) -> UInt32? {
            switch d {
            case "0"..."9": return d.value - 48
            case "a"..."f": return d.value - 87
            case "A"..."F": return d.value - 55
            default: return nil
            }
        }
    }

    // MARK: Parsing

    struct Parser {
        let tokens: [Token]
        var diagnostics: [CatalogDiagnostic]
        let truncated: Bool
        let eofLine: Int
        let eofColumn: Int
        var entries: [StringsEntry] = []
        var firstLine: [String: Int] = [:]
        var p = 0

        mutating func error(_ line: Int, _ column: Int, _ message: String) {
            diagnostics.append(CatalogDiagnostic(line: line, column: column, message: message))
        }

        /// Reports a problem at token `p`, or at the end of the file (unless lexing already failed there).
        mutating func errorHere(_ message: String) {
            if p < tokens.count {
                error(tokens[p].line, tokens[p].column, message)
            } else if !truncated {
                error(eofLine, eofColumn, message)
            }
        }

        func describe(_ k: Int) -> String {
            guard k < tokens.count else { return "the end of the file" }
            let t = tokens[k]
            switch t.kind {
            case .quoted: return "\"\(t.text)\""
            default: return "'\(t.text)'"
            }
        }

        mutating func skipToSemicolon() {
            while p < tokens.count, tokens[p].kind != .semicolon { p += 1 }
            p += 1
        }

        func isString(_ k: Int) -> Bool {
            k < tokens.count && (tokens[k].kind == .quoted || tokens[k].kind == .bare)
        }

        mutating func run() {
            while p < tokens.count {
                guard isString(p) else {
                    errorHere("expected a quoted key but found \(describe(p)); entries look like \"key\" = \"value\";")
                    skipToSemicolon()
                    continue
                }
                let key = tokens[p]
                p += 1
                let value: Token
                if p < tokens.count, tokens[p].kind == .semicolon {
                    value = key
                    p += 1
                } else if p < tokens.count, tokens[p].kind == .equals {
                    let eq = tokens[p]
                    p += 1
                    guard isString(p) else {
                        errorHere("expected a quoted value after '=' at line \(eq.line):\(eq.column) but found \(describe(p)); write \"\(key.text)\" = \"value\";")
                        skipToSemicolon()
                        continue
                    }
                    value = tokens[p]
                    p += 1
                    guard p < tokens.count, tokens[p].kind == .semicolon else {
                        errorHere("missing ';' after the value of \"\(key.text)\" (line \(value.line):\(value.column)); found \(describe(p)) instead; end each entry with ';'")
                        continue
                    }
                    p += 1
                } else {
                    errorHere("missing '=' after the key \"\(key.text)\" (line \(key.line):\(key.column)); found \(describe(p)) instead; write \"\(key.text)\" = \"value\";")
                    skipToSemicolon()
                    continue
                }
                if key.bad || value.bad { continue }
                if let first = firstLine[key.text] {
                    error(key.line, key.column, "duplicate key \"\(key.text)\": first defined at line \(first); remove or rename one of them")
                    continue
                }
                firstLine[key.text] = key.line
                entries.append(StringsEntry(key: key.text, value: value.text, comment: key.comment, line: key.line, column: key.column))
            }
        }
    }
}
