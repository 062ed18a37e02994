import FolioLocalization
import FolioPlist

/// A parser for Xcode String Catalogs (`.xcstrings`): JSON with a `sourceLanguage` and a `strings` object that
/// maps each key to its `localizations`, each a `stringUnit`, plural or device `variations`, and `substitutions`.
///
/// Every locale that appears becomes one section (in order of first appearance). A `stringUnit` in state `new`
/// or with an empty value yields a message without a value; keys with `"shouldTranslate": false` are read for
/// the source language only. In substitution variants, Xcode's `%arg` placeholder for the count is rewritten to
/// `%` plus the substitution's `formatSpecifier` (e.g. `%lld`), as in a `.stringsdict` variable. Plural
/// categories are only checked for being CLDR category names; the Builder checks them against the locale.
package enum XCStringsFile {
    /// Parses `bytes` (UTF-8, optional byte order mark), returning every well-formed message and every problem
    /// found, in file order. Messages with an error are left out of their section.
    package static func parse(_ bytes: [UInt8]) -> ParsedCatalogFile {
        let lines = LineIndex(bytes)
        var reader = JSONReader(bytes: bytes, lines: lines)
        let root: JSONNode
        do throws(CatalogDiagnostic) {
            root = try reader.document()
        } catch {
            return ParsedCatalogFile(errors: [error])
        }
        var walker = Walker(lines: lines)
        walker.errors = reader.duplicates
        walker.run(root)
        let errors = walker.errors.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        let warnings = walker.warnings.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        return ParsedCatalogFile(
            sourceLanguage: walker.sourceLanguage, sections: walker.sections, errors: errors, warnings: warnings)
    }

    // MARK: Positions

    /// Maps byte offsets to 1-based lines and character columns, in logarithmic time per lookup.
    struct LineIndex {
        /// The input.
        let bytes: [UInt8]
        /// The byte offset at which each line starts.
        let starts: [Int]
        /// Whether the input starts with a UTF-8 byte order mark (not counted as a column).
        let bom: Bool

        /// Indexes `bytes`.
        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            var starts = [0]
            for (i, b) in bytes.enumerated() where b == 0x0A { starts.append(i + 1) }
            self.starts = starts
            bom = bytes.starts(with: [0xEF, 0xBB, 0xBF])
        }

        /// The line and column of byte offset `offset`.
        func position(_ offset: Int) -> (line: Int, column: Int) {
            let offset = min(max(0, offset), bytes.count)
            var lo = 0, hi = starts.count - 1
            while lo < hi {
                let mid = (lo + hi + 1) / 2
                if starts[mid] <= offset { lo = mid } else { hi = mid - 1 }
            }
            var column = 1
            var i = starts[lo]
            if lo == 0, bom { i = min(3, offset) }
            while i < offset {
                if bytes[i] & 0xC0 != 0x80 { column += 1 }
                i += 1
            }
            return (lo + 1, column)
        }

        /// `offset` as `line:column`.
        func describe(_ offset: Int) -> String {
            let p = position(offset)
            return "\(p.line):\(p.column)"
        }
    }

    // MARK: JSON

    /// A JSON value with the byte offset where it starts.
    struct JSONNode {
        /// The kinds of JSON value.
        enum Kind {
            /// An object's members in file order (duplicates dropped, the first kept).
            case object([JSONMember])
            /// An array's elements.
            case array([JSONNode])
            /// A string, escapes resolved.
            case string(String)
            /// A number, as written.
            case number(String)
            /// `true` or `false`.
            case bool(Bool)
            /// `null`.
            case null
        }

        /// What the value is.
        var kind: Kind
        /// The byte offset of its first character.
        var offset: Int

        /// The members, if this is an object.
        var members: [JSONMember]? {
            if case .object(let m) = kind { return m }
            return nil
        }

        /// The text, if this is a string.
        var string: String? {
            if case .string(let s) = kind { return s }
            return nil
        }

        /// The member named `name`, if this is an object that has one.
        func member(_ name: String) -> JSONMember? {
            members?.first { $0.key == name }
        }

        /// The value's kind in words, with an article, for messages.
        var typeName: String {
            switch kind {
            case .object: return "an object"
            case .array: return "an array"
            case .string: return "a string"
            case .number: return "a number"
            case .bool: return "a boolean"
            case .null: return "null"
            }
        }
    }

    /// One `"key": value` member of a JSON object.
    struct JSONMember {
        /// The key, escapes resolved.
        var key: String
        /// The byte offset of the key's opening quote.
        var keyOffset: Int
        /// The value.
        var value: JSONNode
    }

    /// A strict RFC 8259 reader that keeps every value's offset, built on `JSONPlist.Parser`'s string and
    /// number scanning. Syntax errors stop it; duplicate keys are collected and reading goes on.
    struct JSONReader {
        /// The underlying scanner.
        var parser: JSONPlist.Parser
        /// The line index, for messages.
        let lines: LineIndex
        /// One error per repeated key.
        var duplicates: [CatalogDiagnostic] = []

        /// Prepares to read `bytes`.
        init(bytes: [UInt8], lines: LineIndex) {
            parser = JSONPlist.Parser(bytes: bytes)
            parser.integersMayRound = true  // numbers are only skipped here
            self.lines = lines
        }

        /// A syntax error at `offset` (default: the current position).
        func fail(_ detail: String, at offset: Int? = nil) -> CatalogDiagnostic {
            let p = lines.position(offset ?? parser.i)
            return CatalogDiagnostic(line: p.line, column: p.column, message: "invalid JSON: \(detail); fix the syntax at this position")
        }

        /// Converts a scanner error into a diagnostic.
        func fail(_ error: PlistError) -> CatalogDiagnostic {
            var detail = error.message
            if detail.hasPrefix("json: ") { detail.removeFirst(6) }
            return fail(detail, at: error.offset ?? parser.i)
        }

        /// Reads the whole input as one JSON value.
        mutating func document() throws(CatalogDiagnostic) -> JSONNode {
            parser.skipBOM()
            parser.skipSpace()
            let node = try value(depth: 0)
            parser.skipSpace()
            guard parser.i == parser.bytes.count else { throw fail("unexpected text after the JSON value") }
            return node
        }

        /// Reads one value at the current position.
        mutating func value(depth: Int) throws(CatalogDiagnostic) -> JSONNode {
            guard depth < BinaryPlist.maxDepth else { throw fail("values nest deeper than \(BinaryPlist.maxDepth) levels") }
            let bytes = parser.bytes
            let start = parser.i
            guard start < bytes.count else { throw fail("unexpected end of input, expected a value") }
            func literal(_ word: String) -> Bool {
                let u = Array(word.utf8)
                return start + u.count <= bytes.count && Array(bytes[start..<(start + u.count)]) == u
            }
            switch bytes[start] {
            case UInt8(ascii: "{"):
                parser.i += 1
                var members: [JSONMember] = []
                var seen: [String: Int] = [:]
                parser.skipSpace()
                if parser.i < bytes.count, bytes[parser.i] == UInt8(ascii: "}") {
                    parser.i += 1
                    return JSONNode(kind: .object(members), offset: start)
                }
                while true {
                    parser.skipSpace()
                    let keyAt = parser.i
                    guard keyAt < bytes.count, bytes[keyAt] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                    let key: String
                    do throws(PlistError) { key = try parser.parseString() } catch { throw fail(error) }
                    parser.skipSpace()
                    guard parser.i < bytes.count, bytes[parser.i] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
                    parser.i += 1
                    parser.skipSpace()
                    let v = try value(depth: depth + 1)
                    if let first = seen[key] {
                        let p = lines.position(keyAt)
                        duplicates.append(CatalogDiagnostic(
                            line: p.line, column: p.column,
                            message: "duplicate key \"\(key)\" at \(lines.describe(keyAt)); it is already defined at \(lines.describe(first)) in the same object; remove or merge one of them"))
                    } else {
                        seen[key] = keyAt
                        members.append(JSONMember(key: key, keyOffset: keyAt, value: v))
                    }
                    parser.skipSpace()
                    guard parser.i < bytes.count else { throw fail("unterminated object", at: start) }
                    if bytes[parser.i] == UInt8(ascii: ",") { parser.i += 1; continue }
                    if bytes[parser.i] == UInt8(ascii: "}") { parser.i += 1; break }
                    throw fail("expected ',' or '}' in an object")
                }
                return JSONNode(kind: .object(members), offset: start)
            case UInt8(ascii: "["):
                parser.i += 1
                var items: [JSONNode] = []
                parser.skipSpace()
                if parser.i < bytes.count, bytes[parser.i] == UInt8(ascii: "]") {
                    parser.i += 1
                    return JSONNode(kind: .array(items), offset: start)
                }
                while true {
                    parser.skipSpace()
                    items.append(try value(depth: depth + 1))
                    parser.skipSpace()
                    guard parser.i < bytes.count else { throw fail("unterminated array", at: start) }
                    if bytes[parser.i] == UInt8(ascii: ",") { parser.i += 1; continue }
                    if bytes[parser.i] == UInt8(ascii: "]") { parser.i += 1; break }
                    throw fail("expected ',' or ']' in an array")
                }
                return JSONNode(kind: .array(items), offset: start)
            case UInt8(ascii: "\""):
                do throws(PlistError) { return JSONNode(kind: .string(try parser.parseString()), offset: start) } catch { throw fail(error) }
            case UInt8(ascii: "t") where literal("true"):
                parser.i += 4
                return JSONNode(kind: .bool(true), offset: start)
            case UInt8(ascii: "f") where literal("false"):
                parser.i += 5
                return JSONNode(kind: .bool(false), offset: start)
            case UInt8(ascii: "n") where literal("null"):
                parser.i += 4
                return JSONNode(kind: .null, offset: start)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                do throws(PlistError) { _ = try parser.parseNumber() } catch { throw fail(error) }
                return JSONNode(kind: .number(String(decoding: bytes[start..<parser.i], as: UTF8.self)), offset: start)
            default:
                throw fail("expected a value")
            }
        }
    }

    // MARK: Catalog structure

    /// A read `stringUnit`.
    struct Unit {
        /// The value; nil when the state is `new` or the value is empty.
        var text: String?
        /// The state, if given.
        var state: String?
        /// Where the value string is (or the stringUnit, if it has none).
        var offset: Int
    }

    /// Walks the JSON tree, collecting sections, messages and diagnostics.
    struct Walker {
        /// The line index, for messages.
        let lines: LineIndex
        /// The catalog's `sourceLanguage`.
        var sourceLanguage: String?
        /// The sections, in order of each locale's first appearance.
        var sections: [CatalogLocaleSection] = []
        /// Each locale's index in `sections`.
        var sectionIndex: [String: Int] = [:]
        /// Errors found so far.
        var errors: [CatalogDiagnostic] = []
        /// Warnings found so far.
        var warnings: [CatalogDiagnostic] = []
        /// The substitution names of the localization being read, including ones with errors (already
        /// reported), so their tokens are not reported again.
        var declared: Set<String> = []

        /// Prepares a walk.
        init(lines: LineIndex) { self.lines = lines }

        /// Records an error at byte `offset`.
        mutating func error(_ offset: Int, _ message: String) {
            let p = lines.position(offset)
            errors.append(CatalogDiagnostic(line: p.line, column: p.column, message: message))
        }

        /// Records a warning at byte `offset`.
        mutating func warning(_ offset: Int, _ message: String) {
            let p = lines.position(offset)
            warnings.append(CatalogDiagnostic(line: p.line, column: p.column, message: message))
        }

        /// Reports `node` as having the wrong type; `what` names it, `expected` says what it should be.
        mutating func wrongType(_ node: JSONNode, _ what: String, _ expected: String) {
            error(node.offset, "\(what) must be \(expected), found \(node.typeName); change it to \(expected)")
        }

        /// The members of `node`, or nil (with an error) if it is not an object.
        mutating func object(_ node: JSONNode, _ what: String) -> [JSONMember]? {
            guard let m = node.members else {
                wrongType(node, what, "an object")
                return nil
            }
            return m
        }

        /// The text of optional string member `name` of `members`; reports a wrong type.
        mutating func optionalString(_ members: [JSONMember], _ name: String, _ what: String) -> String? {
            guard let m = members.first(where: { $0.key == name }) else { return nil }
            guard let s = m.value.string else {
                wrongType(m.value, "\"\(name)\" of \(what)", "a string")
                return nil
            }
            return s
        }

        /// Walks the document.
        mutating func run(_ root: JSONNode) {
            guard let top = object(root, "the root of a .xcstrings file") else { return }
            if let lang = top.first(where: { $0.key == "sourceLanguage" }) {
                if let s = lang.value.string { sourceLanguage = s } else { wrongType(lang.value, "\"sourceLanguage\"", "a string") }
            } else {
                error(root.offset, "the catalog has no \"sourceLanguage\"; add \"sourceLanguage\" : \"en\" naming the development language")
            }
            guard let strings = top.first(where: { $0.key == "strings" }) else {
                error(root.offset, "the catalog has no \"strings\" object; add \"strings\" : { } holding the keys")
                return
            }
            guard let entries = object(strings.value, "\"strings\"") else { return }
            for entry in entries { self.entry(entry) }
        }

        /// Reads one key's entry.
        mutating func entry(_ entry: JSONMember) {
            let key = entry.key
            let what = "the entry \"\(key)\""
            guard let fields = object(entry.value, what) else { return }
            let comment = optionalString(fields, "comment", what)
            _ = optionalString(fields, "extractionState", what)
            var translate = true
            if let m = fields.first(where: { $0.key == "shouldTranslate" }) {
                if case .bool(let b) = m.value.kind { translate = b } else { wrongType(m.value, "\"shouldTranslate\" of \(what)", "true or false") }
            }
            guard let locs = fields.first(where: { $0.key == "localizations" }),
                let localizations = object(locs.value, "\"localizations\" of \(what)")
            else { return }
            let hasSource = localizations.contains { $0.key == sourceLanguage }
            for loc in localizations {
                let isSource = loc.key == sourceLanguage
                if !translate && !isSource { continue }
                guard var message = localization(key: key, loc) else { continue }
                message.comment = comment
                if !isSource && !hasSource { message.source = .string(key) }
                let index: Int
                if let i = sectionIndex[loc.key] {
                    index = i
                } else {
                    let p = lines.position(loc.keyOffset)
                    index = sections.count
                    sectionIndex[loc.key] = index
                    sections.append(CatalogLocaleSection(locale: loc.key, line: p.line, column: p.column, messages: []))
                }
                sections[index].messages.append(message)
            }
        }

        /// Reads one localization; nil if it has errors.
        mutating func localization(key: String, _ loc: JSONMember) -> CatalogMessage? {
            let what = "the \"\(loc.key)\" localization of \"\(key)\""
            guard let fields = object(loc.value, what) else { return nil }
            let errorCount = errors.count
            var substitutions: [String: (sub: PluralSubstitution, keyOffset: Int)] = [:]
            declared = []
            if let subs = fields.first(where: { $0.key == "substitutions" }),
                let members = object(subs.value, "\"substitutions\" of \(what)")
            {
                for m in members {
                    declared.insert(m.key)
                    if let sub = substitution(m, what) { substitutions[m.key] = (sub, m.keyOffset) }
                }
            }
            var used: Set<String> = []
            let unitMember = fields.first { $0.key == "stringUnit" }
            let variationsMember = fields.first { $0.key == "variations" }
            var value: CatalogValue?
            var state: String?
            var at = loc.keyOffset
            switch (unitMember, variationsMember) {
            case (let u?, nil):
                guard let unit = self.unit(u.value, "the stringUnit of \(what)") else { return nil }
                state = unit.state
                if unit.text != nil { at = unit.offset }
                value = resolve(unit, substitutions, &used, what)
            case (nil, let v?):
                guard let read = variations(v.value, substitutions, &used, what) else { return nil }
                value = read.0
                state = Self.combined(read.1)
            case (_?, let v?):
                error(v.keyOffset, "\(what) has both \"stringUnit\" and \"variations\"; keep only one of them")
                return nil
            case (nil, nil):
                error(loc.keyOffset, "\(what) has neither \"stringUnit\" nor \"variations\"; add a \"stringUnit\" with its \"value\", or remove the localization")
                return nil
            }
            for (name, s) in substitutions where !used.contains(name) {
                warning(s.keyOffset, "substitution \"\(name)\" of \(what) is not used by any %#@\(name)@ token; use it in the value or remove it")
            }
            guard errors.count == errorCount else { return nil }
            let p = lines.position(at)
            return CatalogMessage(key: key, value: value, state: state, line: p.line, column: p.column)
        }

        /// The one state to report for several units: the first that is not `translated`, else `translated`.
        static func combined(_ states: [String]) -> String? {
            states.first { $0 != "translated" } ?? states.first
        }

        /// Reads a `stringUnit`; nil if it has errors.
        mutating func unit(_ node: JSONNode, _ what: String) -> Unit? {
            guard let fields = object(node, what) else { return nil }
            let errorCount = errors.count
            let state = optionalString(fields, "state", what)
            guard let v = fields.first(where: { $0.key == "value" }) else {
                error(node.offset, "\(what) has no \"value\"; add \"value\" : \"…\" with the text")
                return nil
            }
            guard let text = v.value.string else {
                wrongType(v.value, "\"value\" of \(what)", "a string")
                return nil
            }
            guard errors.count == errorCount else { return nil }
            let usable = state != "new" && !text.isEmpty
            return Unit(text: usable ? text : nil, state: state, offset: v.value.offset)
        }

        /// The value of a unit: a string, or a format with substitutions when it has `%#@name@` tokens.
        mutating func resolve(
            _ unit: Unit, _ substitutions: [String: (sub: PluralSubstitution, keyOffset: Int)], _ used: inout Set<String>,
            _ what: String
        ) -> CatalogValue? {
            guard let text = unit.text else { return nil }
            let tokens = StringsDictFile.tokens(in: text)
            if tokens.isEmpty { return .string(text) }
            var variables: [String: PluralSubstitution] = [:]
            for token in tokens {
                used.insert(token.name)
                guard let s = substitutions[token.name] else {
                    if declared.contains(token.name) { continue }
                    error(unit.offset, "the value of \(what) uses \(token.text), but there is no substitution \"\(token.name)\"; add it under \"substitutions\" with its plural variations, or fix the name")
                    continue
                }
                var sub = s.sub
                if sub.argument == nil, let a = token.argument { sub.argument = a }
                variables[token.name] = sub
            }
            return .substitutions(format: text, variables: variables)
        }

        /// Reads a `variations` object (plural or device); nil if it has errors. Also returns the units' states.
        mutating func variations(
            _ node: JSONNode, _ substitutions: [String: (sub: PluralSubstitution, keyOffset: Int)],
            _ used: inout Set<String>, _ what: String
        ) -> (CatalogValue?, [String])? {
            guard let kinds = object(node, "\"variations\" of \(what)") else { return nil }
            guard kinds.count == 1 else {
                error(node.offset, "\"variations\" of \(what) must hold exactly one of \"plural\" or \"device\", found \(kinds.count) members; keep one")
                return nil
            }
            let kind = kinds[0]
            switch kind.key {
            case "plural":
                guard let read = plural(kind.value, what) else { return nil }
                return (read.0.isEmpty ? nil : .plural(read.0), read.1)
            case "device":
                guard let devices = object(kind.value, "the device variations of \(what)") else { return nil }
                var values: [String: CatalogValue] = [:]
                var states: [String] = []
                let errorCount = errors.count
                for d in devices {
                    let dwhat = "the \"\(d.key)\" device variation of \(what)"
                    guard let fields = object(d.value, dwhat) else { continue }
                    if let u = fields.first(where: { $0.key == "stringUnit" }) {
                        guard let unit = self.unit(u.value, "the stringUnit of \(dwhat)") else { continue }
                        if let s = unit.state { states.append(s) }
                        if let v = resolve(unit, substitutions, &used, dwhat) { values[d.key] = v }
                    } else if let v = fields.first(where: { $0.key == "variations" }) {
                        guard let inner = object(v.value, "\"variations\" of \(dwhat)") else { continue }
                        guard inner.count == 1, inner[0].key == "plural" else {
                            error(v.value.offset, "\"variations\" of \(dwhat) must hold only \"plural\"; device variations cannot nest other kinds")
                            continue
                        }
                        guard let read = plural(inner[0].value, dwhat) else { continue }
                        states += read.1
                        if !read.0.isEmpty { values[d.key] = .plural(read.0) }
                    } else {
                        error(d.keyOffset, "\(dwhat) has neither \"stringUnit\" nor plural \"variations\"; add a \"stringUnit\" with its \"value\"")
                    }
                }
                guard errors.count == errorCount else { return nil }
                return (values.isEmpty ? nil : .device(values), states)
            default:
                error(kind.keyOffset, "unsupported variation \"\(kind.key)\" in \(what); use \"plural\" or \"device\"")
                return nil
            }
        }

        /// Reads a `plural` object into variants (skipping `new` or empty units); nil if it has errors.
        mutating func plural(_ node: JSONNode, _ what: String) -> (PluralVariants, [String])? {
            guard let cases = object(node, "the plural variations of \(what)") else { return nil }
            let errorCount = errors.count
            var variants: PluralVariants = [:]
            var states: [String] = []
            for c in cases {
                guard let category = PluralCategory(rawValue: c.key) else {
                    error(c.keyOffset, "unknown plural category \"\(c.key)\" in \(what); use zero, one, two, few, many or other")
                    continue
                }
                let cwhat = "the \"\(c.key)\" plural variation of \(what)"
                guard let fields = object(c.value, cwhat) else { continue }
                guard let u = fields.first(where: { $0.key == "stringUnit" }) else {
                    error(c.value.offset, "\(cwhat) has no \"stringUnit\"; add \"stringUnit\" : { \"state\" : \"translated\", \"value\" : \"…\" }")
                    continue
                }
                guard let unit = self.unit(u.value, "the stringUnit of \(cwhat)") else { continue }
                if let s = unit.state { states.append(s) }
                if let t = unit.text { variants[category] = t }
            }
            guard errors.count == errorCount else { return nil }
            return (variants, states)
        }

        /// Reads one substitution; nil if it has errors.
        mutating func substitution(_ m: JSONMember, _ what: String) -> PluralSubstitution? {
            let swhat = "substitution \"\(m.key)\" of \(what)"
            guard let fields = object(m.value, swhat) else { return nil }
            let errorCount = errors.count
            var argument: Int?
            if let a = fields.first(where: { $0.key == "argNum" }) {
                if case .number(let n) = a.value.kind, let v = Int(n), v >= 1 {
                    argument = v
                } else {
                    wrongType(a.value, "\"argNum\" of \(swhat)", "a whole number from 1 up")
                }
            }
            let spec = optionalString(fields, "formatSpecifier", swhat)
            if spec == nil, !fields.contains(where: { $0.key == "formatSpecifier" }) {
                error(m.keyOffset, "\(swhat) has no \"formatSpecifier\"; add the count's printf conversion, such as \"formatSpecifier\" : \"lld\"")
            }
            guard let vars = fields.first(where: { $0.key == "variations" }),
                let kinds = vars.value.members, let pluralMember = kinds.first(where: { $0.key == "plural" })
            else {
                error(m.keyOffset, "\(swhat) has no plural variations; add \"variations\" : { \"plural\" : { \"one\" : …, \"other\" : … } }")
                return nil
            }
            guard let read = plural(pluralMember.value, swhat), errors.count == errorCount, let spec else { return nil }
            let placeholder = "%" + spec
            return PluralSubstitution(
                argument: argument, formatSpecifier: spec,
                variants: read.0.mapValues { $0.replacing("%arg", with: placeholder) })
        }
    }
}
