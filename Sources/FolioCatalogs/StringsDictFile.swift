import CLibXML2
import FolioLocalization
import FolioPlist
import FolioPlistXML

/// A parser for Apple `.stringsdict` files: XML property lists whose root dictionary maps each key to a
/// dictionary with an `NSStringLocalizedFormatKey` format and one plural-rule dictionary per `%#@name@` variable.
///
/// The file is read through libxml2 without network access, DTD loading or entity substitution, and within
/// libxml2's default nesting limit. Plural categories are only checked for being CLDR category names; whether
/// they suit the locale, and whether `other` is present, is the Builder's business.
package enum StringsDictFile {
    /// The spec type every variable dictionary must declare.
    static let pluralRuleType = "NSStringPluralRuleType"
    /// The key of an entry's format string.
    static let formatKey = "NSStringLocalizedFormatKey"
    /// The key of a variable's spec type.
    static let specTypeKey = "NSStringFormatSpecTypeKey"
    /// The key of a variable's printf conversion.
    static let valueTypeKey = "NSStringFormatValueTypeKey"
    /// The valid category names, for messages.
    static let categoryList = "zero, one, two, few, many or other"

    /// Initialises libxml2 once.
    private static let initialised: Bool = LibXML2Setup.initialised

    /// Parses `bytes`, returning one section (locale `""`, position 1:1) with every well-formed entry, and every
    /// problem found, in file order. Entries with an error are left out of the section; the section is empty when
    /// the XML itself is malformed.
    package static func parse(_ bytes: [UInt8]) -> ParsedCatalogFile {
        _ = initialised
        guard let ctxt = xmlNewParserCtxt() else {
            return ParsedCatalogFile(sections: [CatalogLocaleSection(locale: "", messages: [])], errors: [CatalogDiagnostic(line: 1, column: 1, message: "cannot create an XML parser")])
        }
        defer { xmlFreeParserCtxt(ctxt) }
        // libxml2 keeps only the last error, which after a tag mismatch is a less helpful "premature end of data";
        // a structured error handler on this context's own SAX handler records the first one instead.
        let first = FirstError()
        if let sax = ctxt.pointee.sax, ctxt.pointee.userData == UnsafeMutableRawPointer(ctxt) {
            ctxt.pointee._private = Unmanaged.passUnretained(first).toOpaque()
            sax.pointee.serror = { userData, error in
                guard let userData, let error else { return }
                let ctxt = userData.assumingMemoryBound(to: xmlParserCtxt.self)
                guard let box = ctxt.pointee._private else { return }
                let first = Unmanaged<FirstError>.fromOpaque(box).takeUnretainedValue()
                guard first.message == nil, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
                first.message = error.pointee.message.map { String(cString: $0) } ?? "malformed XML"
                first.line = Int(error.pointee.line)
                first.column = Int(error.pointee.int2)
            }
        }
        // No XML_PARSE_NOENT (entities stay references), no DTDLOAD (no external DTD), NONET (no network), and no
        // HUGE, so libxml2's own depth and size limits apply. BIG_LINES keeps line numbers past 65535 exact.
        let options = Int32(
            XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
                | XML_PARSE_BIG_LINES.rawValue)
        let doc: xmlDocPtr? = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { chars in
                xmlCtxtReadMemory(ctxt, chars.baseAddress, Int32(clamping: chars.count), nil, nil, options)
            }
        }
        withExtendedLifetime(first) {}
        guard let doc else {
            var line = 1, column = 1
            var detail = "malformed XML"
            if let message = first.message {
                detail = message.trimmingWhitespace()
                line = max(1, first.line)
                column = max(1, first.column)
            } else if let err = xmlCtxtGetLastError(ctxt) {
                if let m = err.pointee.message {
                    detail = String(cString: m).trimmingWhitespace()
                }
                line = max(1, Int(err.pointee.line))
                column = max(1, Int(err.pointee.int2))
            }
            return ParsedCatalogFile(sections: [CatalogLocaleSection(locale: "", messages: [])], errors: [CatalogDiagnostic(
                line: line, column: column,
                message: "not a well-formed XML property list: \(detail); fix the XML at this position")])
        }
        defer { xmlFreeDoc(doc) }
        var reader = Reader(positions: ElementPositions(doc: doc, bytes: bytes))
        reader.run(doc)
        let errors = reader.errors.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        let warnings = reader.warnings.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        return ParsedCatalogFile(
            sections: [CatalogLocaleSection(locale: "", messages: reader.messages)], errors: errors, warnings: warnings)
    }

    /// The first error libxml2 reports while parsing, filled in by the structured error handler.
    private final class FirstError {
        /// The error's text, once there is one.
        var message: String?
        /// Its 1-based line (0 when unknown).
        var line = 0
        /// Its 1-based column (0 when unknown).
        var column = 0
    }

    // MARK: Format tokens

    /// One `%#@name@` (or positional `%N$#@name@`) token of a format string.
    struct Token: Equatable {
        /// The variable name between the `@`s.
        var name: String
        /// The 1-based argument position, when the token is positional.
        var argument: Int?
        /// The token's text exactly as written.
        var text: String
    }

    /// The `%#@name@` tokens of `format`, in order; `%%` is skipped as an escaped percent sign.
    static func tokens(in format: String) -> [Token] {
        let s = Array(format.unicodeScalars)
        var out: [Token] = []
        var i = 0
        while i < s.count {
            guard s[i] == "%" else { i += 1; continue }
            if i + 1 < s.count, s[i + 1] == "%" { i += 2; continue }
            var j = i + 1
            var digits = 0
            var argument: Int?
            while j < s.count, s[j].value >= 48, s[j].value <= 57 {
                digits = min(digits * 10 + Int(s[j].value - 48), 1_000_000)
                j += 1
            }
            if j > i + 1 {
                guard j < s.count, s[j] == "$" else { i = j; continue }
                argument = digits
                j += 1
            }
            guard j + 1 < s.count, s[j] == "#", s[j + 1] == "@" else { i += 1; continue }
            var k = j + 2
            while k < s.count, s[k] != "@" { k += 1 }
            guard k < s.count, k > j + 2 else { i += 1; continue }
            var name = String.UnicodeScalarView()
            name.append(contentsOf: s[(j + 2)..<k])
            var text = String.UnicodeScalarView()
            text.append(contentsOf: s[i...k])
            out.append(Token(name: String(name), argument: argument, text: String(text)))
            i = k + 1
        }
        return out
    }

    // MARK: Positions

    /// The line and column of each element's start tag. libxml2 only records lines, so the start tags are found
    /// by a light scan of the (UTF-8) source and matched to the elements in document order; if the scan and the
    /// tree disagree (unusual encodings, odd DTDs), columns fall back to 1 with libxml2's line.
    struct ElementPositions {
        /// Each element's position.
        private var map: [xmlNodePtr: (line: Int, column: Int)] = [:]

        /// Matches the elements of `doc` to the start tags in `bytes`.
        init(doc: xmlDocPtr, bytes: [UInt8]) {
            var elements: [xmlNodePtr] = []
            if let root = xmlDocGetRootElement(doc) { Self.collect(root, into: &elements) }
            var body = bytes
            if body.starts(with: [0xEF, 0xBB, 0xBF]) { body.removeFirst(3) }
            guard !body.starts(with: [0xFF, 0xFE]), !body.starts(with: [0xFE, 0xFF]), !body.prefix(4).contains(0),
                UTF8Validation.firstInvalidOffset(body) == nil
            else { return }
            let offsets = Self.startTags(body)
            guard offsets.count == elements.count else { return }
            let positions = Self.positions(of: offsets, in: body)
            for (node, p) in zip(elements, positions) where Int(xmlGetLineNo(node)) != p.line { return }
            for (node, p) in zip(elements, positions) { map[node] = p }
        }

        /// The elements under and including `node`, in document order (entity content is not part of the tree walk).
        private static func collect(_ root: xmlNodePtr, into out: inout [xmlNodePtr]) {
            // Pre-order walk over element nodes by child/next/parent links (no per-node arrays).
            func firstElement(_ start: xmlNodePtr?) -> xmlNodePtr? {
                var c = start
                while let k = c, k.pointee.type != XML_ELEMENT_NODE { c = k.pointee.next }
                return c
            }
            var node: xmlNodePtr? = root
            while let n = node {
                out.append(n)
                if let child = firstElement(n.pointee.children) {
                    node = child
                    continue
                }
                node = nil
                var up: xmlNodePtr? = n
                while let u = up, u != root {
                    if let sibling = firstElement(u.pointee.next) {
                        node = sibling
                        break
                    }
                    up = u.pointee.parent
                }
            }
        }

        /// Byte offsets of every start (or empty-element) tag, skipping comments, CDATA, PIs and declarations.
        private static func startTags(_ b: [UInt8]) -> [Int] {
            var out: [Int] = []
            var i = 0
            let n = b.count
            // Byte comparisons without allocating (this scan runs over every '<' of the file).
            func matches(_ u: StaticString, at k: Int) -> Bool {
                let count = u.utf8CodeUnitCount
                guard k + count <= n else { return false }
                let p = u.utf8Start
                for j in 0..<count where b[k + j] != p[j] { return false }
                return true
            }
            func starts(_ u: StaticString, at k: Int) -> Bool { matches(u, at: k) }
            func skip(past u: StaticString, from k: Int) -> Int {
                var k = k
                let first = u.utf8Start[0]
                while k + u.utf8CodeUnitCount <= n {
                    if b[k] == first, matches(u, at: k) { return k + u.utf8CodeUnitCount }
                    k += 1
                }
                return n
            }
            while i < n {
                guard b[i] == UInt8(ascii: "<") else { i += 1; continue }
                if starts("<!--", at: i) {
                    i = skip(past: "-->", from: i + 4)
                } else if starts("<![CDATA[", at: i) {
                    i = skip(past: "]]>", from: i + 9)
                } else if starts("<?", at: i) {
                    i = skip(past: "?>", from: i + 2)
                } else if starts("<!", at: i) {
                    // A declaration such as <!DOCTYPE …>, possibly with an internal subset in brackets.
                    var k = i + 2
                    var depth = 0
                    var quote: UInt8 = 0
                    while k < n {
                        let c = b[k]
                        if quote != 0 {
                            if c == quote { quote = 0 }
                        } else if c == 0x22 || c == 0x27 {
                            quote = c
                        } else if c == UInt8(ascii: "[") {
                            depth += 1
                        } else if c == UInt8(ascii: "]") {
                            depth -= 1
                        } else if c == UInt8(ascii: "<"), starts("<!--", at: k) {
                            k = skip(past: "-->", from: k + 4) - 1
                        } else if c == UInt8(ascii: ">"), depth <= 0 {
                            break
                        }
                        k += 1
                    }
                    i = k + 1
                } else if starts("</", at: i) {
                    i = skip(past: ">", from: i + 2)
                } else {
                    out.append(i)
                    var k = i + 1
                    var quote: UInt8 = 0
                    while k < n {
                        let c = b[k]
                        if quote != 0 {
                            if c == quote { quote = 0 }
                        } else if c == 0x22 || c == 0x27 {
                            quote = c
                        } else if c == UInt8(ascii: ">") {
                            break
                        }
                        k += 1
                    }
                    i = k + 1
                }
            }
            return out
        }

        /// The 1-based line and character column of each of the ascending `offsets`, in one pass.
        private static func positions(of offsets: [Int], in b: [UInt8]) -> [(line: Int, column: Int)] {
            var out: [(line: Int, column: Int)] = []
            out.reserveCapacity(offsets.count)
            var line = 1, column = 1, i = 0
            for target in offsets {
                while i < target {
                    if b[i] == 0x0A { line += 1; column = 1 } else if b[i] & 0xC0 != 0x80 { column += 1 }
                    i += 1
                }
                out.append((line, column))
            }
            return out
        }

        /// Where `node`'s start tag is.
        func position(_ node: xmlNodePtr) -> (line: Int, column: Int) {
            if let p = map[node] { return p }
            return (max(1, Int(xmlGetLineNo(node))), 1)
        }
    }

    // MARK: Reading

    /// One `<key>` and its value element inside a `<dict>`.
    struct Pair {
        /// The `<key>` element.
        var keyNode: xmlNodePtr
        /// The key's text.
        var key: String
        /// The value element.
        var value: xmlNodePtr
    }

    /// Walks the document tree, collecting messages and diagnostics.
    struct Reader {
        /// Where each element starts.
        let positions: ElementPositions
        /// The messages read so far, in file order.
        var messages: [CatalogMessage] = []
        /// Errors found so far.
        var errors: [CatalogDiagnostic] = []
        /// Warnings found so far.
        var warnings: [CatalogDiagnostic] = []

        /// Prepares a walk.
        init(positions: ElementPositions) { self.positions = positions }

        /// The element name of `node`.
        func name(_ node: xmlNodePtr) -> String {
            node.pointee.name.map { String(cString: $0) } ?? ""
        }

        /// Where `node` starts, as `line:column`.
        func at(_ node: xmlNodePtr) -> String {
            let p = positions.position(node)
            return "\(p.line):\(p.column)"
        }

        /// Records an error at `node`.
        mutating func error(_ node: xmlNodePtr, _ message: String) {
            let p = positions.position(node)
            errors.append(CatalogDiagnostic(line: p.line, column: p.column, message: message))
        }

        /// Records a warning at `node`.
        mutating func warning(_ node: xmlNodePtr, _ message: String) {
            let p = positions.position(node)
            warnings.append(CatalogDiagnostic(line: p.line, column: p.column, message: message))
        }

        /// The element children of `node`, reporting stray text between them.
        mutating func elements(_ node: xmlNodePtr) -> [xmlNodePtr] {
            var out: [xmlNodePtr] = []
            var child = node.pointee.children
            var reported = false
            while let c = child {
                switch c.pointee.type {
                case XML_ELEMENT_NODE: out.append(c)
                case XML_TEXT_NODE, XML_CDATA_SECTION_NODE, XML_ENTITY_REF_NODE:
                    var blank = c.pointee.type != XML_ENTITY_REF_NODE
                    var p = c.pointee.content
                    while blank, let q = p, q.pointee != 0 {
                        if !(q.pointee == 0x20 || q.pointee == 0x09 || q.pointee == 0x0A || q.pointee == 0x0D) { blank = false }
                        p = q + 1
                    }
                    if !blank && !reported {
                        reported = true
                        error(node, "unexpected text inside <\(name(node))>; a <\(name(node))> holds only elements, so remove the text or wrap it in <string>")
                    }
                default: break
                }
                child = c.pointee.next
            }
            return out
        }

        /// The text of a `<key>` or `<string>` element, or nil (with an error) if it holds anything but text.
        mutating func text(_ node: xmlNodePtr) -> String? {
            var bytes: [UInt8] = []
            var child = node.pointee.children
            while let c = child {
                switch c.pointee.type {
                case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                    if var p = c.pointee.content {
                        while p.pointee != 0 { bytes.append(p.pointee); p += 1 }
                    }
                case XML_COMMENT_NODE, XML_PI_NODE: break
                case XML_ENTITY_REF_NODE:
                    error(node, "<\(name(node))> uses an entity reference, which .stringsdict files do not support; write the text itself or a character reference such as &#233;")
                    return nil
                default:
                    error(node, "<\(name(node))> must hold only text, but it holds <\(name(c))>; remove the nested element")
                    return nil
                }
                child = c.pointee.next
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// The key/value pairs of a `<dict>`, reporting malformed layout and duplicate keys (the first one wins).
        mutating func pairs(_ dict: xmlNodePtr, context: String) -> [Pair] {
            let children = elements(dict)
            var out: [Pair] = []
            var seen: [String: xmlNodePtr] = [:]
            var i = 0
            while i < children.count {
                let k = children[i]
                guard name(k) == "key" else {
                    error(k, "expected <key> in \(context), found <\(name(k))>; every value in a <dict> must follow its own <key>")
                    i += 1
                    continue
                }
                guard i + 1 < children.count else {
                    error(k, "<key> in \(context) has no value; add the value element after it or remove the key")
                    break
                }
                let v = children[i + 1]
                i += 2
                guard let key = text(k) else { continue }
                if name(v) == "key" {
                    error(v, "<key>\(key)</key> in \(context) is followed by another <key> instead of its value; add the value")
                    i -= 1
                    continue
                }
                if let first = seen[key] {
                    error(k, "duplicate key \"\(key)\" in \(context) at \(at(k)); it is already defined at \(at(first)); remove or rename one of them")
                    continue
                }
                seen[key] = k
                out.append(Pair(keyNode: k, key: key, value: v))
            }
            return out
        }

        /// Walks the document from its root element.
        mutating func run(_ doc: xmlDocPtr) {
            guard let top = xmlDocGetRootElement(doc) else {
                errors.append(CatalogDiagnostic(line: 1, column: 1, message: "not a well-formed XML property list: the document has no root element; start it with <plist version=\"1.0\"><dict>"))
                return
            }
            var root = top
            if name(top) == "plist" {
                let children = elements(top)
                guard children.count == 1 else {
                    error(top, "<plist> must hold exactly one <dict>, found \(children.count) elements; put all entries in a single root <dict>")
                    return
                }
                root = children[0]
            }
            guard name(root) == "dict" else {
                error(root, "the root of a .stringsdict must be a <dict> mapping each key to its entry, found <\(name(root))>; wrap the entries in <dict>")
                return
            }
            for entry in pairs(root, context: "the root <dict>") {
                if let message = self.entry(entry) { messages.append(message) }
            }
        }

        /// Reads one root entry; nil if it has errors.
        mutating func entry(_ entry: Pair) -> CatalogMessage? {
            let key = entry.key
            guard name(entry.value) == "dict" else {
                error(entry.value, "entry \"\(key)\" must be a <dict> with \(formatKey) and its variables, found <\(name(entry.value))>; plain strings belong in a .strings file")
                return nil
            }
            let errorCount = errors.count
            let fields = pairs(entry.value, context: "entry \"\(key)\"")
            guard let formatPair = fields.first(where: { $0.key == formatKey }) else {
                error(entry.keyNode, "entry \"\(key)\" has no \(formatKey); add <key>\(formatKey)</key> with a format such as <string>%#@count@</string>")
                return nil
            }
            guard name(formatPair.value) == "string" else {
                error(formatPair.value, "\(formatKey) of \"\(key)\" must be a <string>, found <\(name(formatPair.value))>; write the format as <string>…</string>")
                return nil
            }
            guard let format = text(formatPair.value) else { return nil }
            let tokens = StringsDictFile.tokens(in: format)
            var variables: [String: PluralSubstitution] = [:]
            for token in tokens where variables[token.name] == nil {
                guard let v = fields.first(where: { $0.key == token.name && $0.key != formatKey }) else {
                    error(formatPair.value, "the format of \"\(key)\" uses \(token.text), but the entry has no \"\(token.name)\" variable; add <key>\(token.name)</key> with a <dict> of its plural variants, or fix the name")
                    continue
                }
                if var sub = variable(v, entryKey: key) {
                    sub.argument = token.argument
                    variables[token.name] = sub
                }
            }
            let used = Set(tokens.map(\.name))
            for field in fields where field.key != formatKey && !used.contains(field.key) {
                warning(field.keyNode, "\"\(field.key)\" in entry \"\(key)\" is not used by its \(formatKey) \"\(format)\"; add %#@\(field.key)@ to the format or remove it")
            }
            guard errors.count == errorCount else { return nil }
            let p = positions.position(entry.keyNode)
            let value: CatalogValue
            if tokens.count == 1, format == tokens[0].text, tokens[0].argument ?? 1 == 1, let only = variables[tokens[0].name] {
                value = .plural(only.variants)
            } else {
                value = .substitutions(format: format, variables: variables)
            }
            return CatalogMessage(key: key, value: value, line: p.line, column: p.column)
        }

        /// Reads one variable dictionary; nil if it has errors.
        mutating func variable(_ pair: Pair, entryKey: String) -> PluralSubstitution? {
            let context = "variable \"\(pair.key)\" of \"\(entryKey)\""
            guard name(pair.value) == "dict" else {
                error(pair.value, "\(context) must be a <dict> with \(specTypeKey), \(valueTypeKey) and plural variants, found <\(name(pair.value))>")
                return nil
            }
            let errorCount = errors.count
            var specType: String?
            var valueType: String?
            var variants: PluralVariants = [:]
            for field in pairs(pair.value, context: context) {
                switch field.key {
                case specTypeKey, valueTypeKey:
                    guard name(field.value) == "string" else {
                        error(field.value, "\(field.key) of \(context) must be a <string>, found <\(name(field.value))>")
                        continue
                    }
                    guard let s = text(field.value) else { continue }
                    if field.key == specTypeKey {
                        specType = s
                        if s != pluralRuleType {
                            error(field.value, "\(context) has \(specTypeKey) \"\(s)\", which is not supported; only \(pluralRuleType) is, so write <string>\(pluralRuleType)</string>")
                        }
                    } else {
                        valueType = s
                        if s.isEmpty {
                            error(field.value, "\(valueTypeKey) of \(context) is empty; write the count's printf conversion without %, such as d, lld or u")
                        }
                    }
                default:
                    guard let category = PluralCategory(rawValue: field.key) else {
                        error(field.keyNode, "unknown plural category \"\(field.key)\" in \(context); use zero, one, two, few, many or other")
                        continue
                    }
                    guard name(field.value) == "string" else {
                        error(field.value, "the \"\(field.key)\" variant of \(context) must be a <string>, found <\(name(field.value))>; write the text as <string>…</string>")
                        continue
                    }
                    if let s = text(field.value) { variants[category] = s }
                }
            }
            if specType == nil {
                error(pair.keyNode, "\(context) has no \(specTypeKey); add <key>\(specTypeKey)</key><string>\(pluralRuleType)</string>")
            }
            if valueType == nil {
                error(pair.keyNode, "\(context) has no \(valueTypeKey); add <key>\(valueTypeKey)</key> with the count's printf conversion, such as <string>d</string>")
            }
            guard errors.count == errorCount, let valueType else { return nil }
            return PluralSubstitution(argument: nil, formatSpecifier: valueType, variants: variants)
        }
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    fileprivate func trimmingWhitespace() -> String {
        let scalars = Array(unicodeScalars)
        func blank(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" || c == "\n" || c == "\r" }
        guard let first = scalars.firstIndex(where: { !blank($0) }), let last = scalars.lastIndex(where: { !blank($0) }) else {
            return ""
        }
        var v = String.UnicodeScalarView()
        v.append(contentsOf: scalars[first...last])
        return String(v)
    }
}
