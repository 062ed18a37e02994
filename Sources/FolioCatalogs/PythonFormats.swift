import FolioLocalization

// Python's two format languages, as gettext's `python-format` and `python-brace-format` flags declare
// them, checked the way `msgfmt -c` checks them: a translation against its msgid.

/// Python's `%` operator: `%(name)s` (a mapping) or `%s` `%d` (a tuple), `%%` a literal percent.
package enum PythonPercentFormat {
    /// What a directive converts, as far as it matters at run time.
    package enum Kind: Equatable, Sendable {
        /// `%d %i %u %o %x %X`: a number.
        case integer
        /// `%e %E %f %F %g %G`: a number.
        case float
        /// `%c`: a character or a code point.
        case character
        /// `%s %r %a`: anything.
        case any

        /// Whether a value the source passes for `self` can be formatted by `other`.
        func accepts(_ other: Kind) -> Bool {
            other == .any || self == other || (self != .any && self != .character && other != .character)
        }
    }

    /// The directives of one string: by name, or in order.
    package enum Directives: Equatable, Sendable {
        case named([String: Kind])
        case positional([Kind])
        case none
    }

    /// The directives of `s`; throws a message for what Python would refuse (`%y`, a lone `%`,
    /// named and unnamed mixed, `*` with a name).
    package static func parse(_ s: String) throws(FormatMismatch) -> Directives {
        let b = Array(s.utf8)
        var named: [String: Kind] = [:]
        var positional: [Kind] = []
        var i = 0
        while i < b.count {
            guard b[i] == UInt8(ascii: "%") else { i += 1; continue }
            let start = i
            i += 1
            var name: String?
            if i < b.count, b[i] == UInt8(ascii: "(") {
                var depth = 1
                let nameStart = i + 1
                i += 1
                while i < b.count, depth > 0 {
                    if b[i] == UInt8(ascii: "(") { depth += 1 } else if b[i] == UInt8(ascii: ")") { depth -= 1 }
                    i += 1
                }
                guard depth == 0 else { throw FormatMismatch(message: "unterminated \"%(\" name") }
                name = String(decoding: b[nameStart..<(i - 1)], as: UTF8.self)
            }
            while i < b.count, "#0- +".utf8.contains(b[i]) { i += 1 }
            var stars = 0
            if i < b.count, b[i] == UInt8(ascii: "*") { stars += 1; i += 1 } else {
                while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
            }
            if i < b.count, b[i] == UInt8(ascii: ".") {
                i += 1
                if i < b.count, b[i] == UInt8(ascii: "*") { stars += 1; i += 1 } else {
                    while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
                }
            }
            if i < b.count, "hlL".utf8.contains(b[i]) { i += 1 }
            guard i < b.count else {
                throw FormatMismatch(message: "incomplete directive \"\(String(decoding: b[start...], as: UTF8.self))\" at the end")
            }
            let c = b[i]
            i += 1
            let kind: Kind?
            switch c {
            case UInt8(ascii: "%"): kind = nil
            case UInt8(ascii: "d"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "o"), UInt8(ascii: "x"), UInt8(ascii: "X"):
                kind = .integer
            case UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "g"), UInt8(ascii: "G"):
                kind = .float
            case UInt8(ascii: "c"): kind = .character
            case UInt8(ascii: "s"), UInt8(ascii: "r"), UInt8(ascii: "a"): kind = .any
            default:
                let shown = String(decoding: b[start..<min(i, b.count)], as: UTF8.self)
                throw FormatMismatch(message: "invalid directive \"\(shown)\" (Python raises ValueError)")
            }
            guard let kind else { continue }  // `%%`, or a width on a literal percent
            if let name {
                guard stars == 0 else { throw FormatMismatch(message: "\"*\" cannot be used with the named directive %(\(name))") }
                if let earlier = named[name], !earlier.accepts(kind) && !kind.accepts(earlier) {
                    throw FormatMismatch(message: "%(\(name)) is used as two different types")
                }
                named[name] = named[name] ?? kind
            } else {
                positional += Array(repeating: .integer, count: stars) + [kind]
            }
            guard named.isEmpty || positional.isEmpty else {
                throw FormatMismatch(message: "named (%(name)s) and unnamed (%s) directives are mixed (Python raises TypeError)")
            }
        }
        if !named.isEmpty { return .named(named) }
        return positional.isEmpty ? .none : .positional(positional)
    }

    /// Why `translation` cannot be formatted with the arguments `source` is formatted with, or nil.
    /// A source Python would refuse is not compared (as msgfmt). With `allowFewer` (plural forms other
    /// than the last), arguments may be left out.
    package static func compare(source: String, translation: String, allowFewer: Bool) -> FormatMismatch? {
        guard let ours = try? parse(source) else { return nil }
        let theirs: Directives
        do throws(FormatMismatch) { theirs = try parse(translation) } catch {
            return FormatMismatch(message: "the translation is not a valid python-format string: \(error.message)")
        }
        switch (ours, theirs) {
        case (.none, .none): return nil
        case (.named(let a), .named(let b)):
            for name in b.keys.sorted() {
                guard let kind = a[name] else {
                    return FormatMismatch(message: "the translation uses %(\(name)), which the source does not have (Python raises KeyError)")
                }
                if !kind.accepts(b[name]!) {
                    return FormatMismatch(message: "%(\(name)) is formatted as \(b[name]!) in the translation but as \(kind) in the source")
                }
            }
            let missing = a.keys.filter { b[$0] == nil }.sorted()
            if !missing.isEmpty && !allowFewer {
                return FormatMismatch(message: "the translation leaves out \(missing.map { "%(\($0))" }.joined(separator: ", "))", isOmission: true)
            }
            return nil
        case (.named(let a), .none):
            return allowFewer ? nil : FormatMismatch(message: "the translation leaves out \(a.keys.sorted().map { "%(\($0))" }.joined(separator: ", "))", isOmission: true)
        case (.positional(let a), .positional(let b)):
            if b.count > a.count || (b.count < a.count && !allowFewer) {
                return FormatMismatch(message: "the translation has \(b.count) directive(s), the source \(a.count) (Python raises TypeError when they differ)")
            }
            for (k, (x, y)) in zip(a, b).enumerated() where !x.accepts(y) {
                return FormatMismatch(message: "directive \(k + 1) is \(y) in the translation but \(x) in the source")
            }
            return nil
        case (.positional, .none):
            return allowFewer ? nil : FormatMismatch(message: "the translation has no directive but the source has (Python raises TypeError: not all arguments converted)")
        case (.none, _):
            return FormatMismatch(message: "the translation has directives but the source has none")
        case (.named, .positional), (.positional, .named):
            return FormatMismatch(message: "the source and the translation differ in named (%(name)s) and unnamed (%s) directives")
        }
    }
}

/// Python's `str.format`: `{name}`, `{0}`, `{}`, `{name.attr}`, `{0[key]}`, `{x!r:>10}`; `{{`/`}}` literals.
package enum PythonBraceFormat {
    /// The fields of one string by their argument: a name or a number (automatic `{}` fields are numbered).
    package struct Fields: Equatable, Sendable {
        package var names: Set<String> = []
        package var automatic = false
    }

    /// The fields of `s`; throws what Python's `str.format` would raise for.
    package static func parse(_ s: String) throws(FormatMismatch) -> Fields {
        let b = Array(s.utf8)
        var fields = Fields()
        var manual = false
        var next = 0
        var i = 0
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "}") {
                guard i + 1 < b.count, b[i + 1] == c else { throw FormatMismatch(message: "single '}' (Python raises ValueError; write }} for a brace)") }
                i += 2
                continue
            }
            guard c == UInt8(ascii: "{") else { i += 1; continue }
            if i + 1 < b.count, b[i + 1] == c { i += 2; continue }
            // The field up to its matching '}', one nested level allowed in the format spec.
            var depth = 1
            var j = i + 1
            while j < b.count, depth > 0 {
                if b[j] == UInt8(ascii: "{") { depth += 1 } else if b[j] == UInt8(ascii: "}") { depth -= 1 }
                j += 1
            }
            guard depth == 0 else { throw FormatMismatch(message: "unterminated '{' field (Python raises ValueError; write {{ for a brace)") }
            let body = b[(i + 1)..<(j - 1)]
            let nameEnd = body.firstIndex { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "!") || $0 == UInt8(ascii: ":") } ?? body.endIndex
            let name = String(decoding: body[..<nameEnd], as: UTF8.self)
            if name.isEmpty {
                guard !manual else { throw FormatMismatch(message: "automatic {} and numbered {0} fields are mixed (Python raises ValueError)") }
                fields.automatic = true
                fields.names.insert(String(next))
                next += 1
            } else {
                if name.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                    guard !fields.automatic else { throw FormatMismatch(message: "automatic {} and numbered {0} fields are mixed (Python raises ValueError)") }
                    manual = true
                }
                fields.names.insert(name)
            }
            i = j
        }
        return fields
    }

    /// Why `translation` cannot be formatted with `source`'s arguments, or nil; a source Python would
    /// refuse is not compared (as msgfmt).
    package static func compare(source: String, translation: String, allowFewer: Bool) -> FormatMismatch? {
        guard let ours = try? parse(source) else { return nil }
        let theirs: Fields
        do throws(FormatMismatch) { theirs = try parse(translation) } catch {
            return FormatMismatch(message: "the translation is not a valid python-brace-format string: \(error.message)")
        }
        if let extra = theirs.names.subtracting(ours.names).sorted().first {
            return FormatMismatch(message: "the translation uses {\(extra)}, which the source does not have (Python raises KeyError or IndexError)")
        }
        let missing = ours.names.subtracting(theirs.names).sorted()
        if !missing.isEmpty && !allowFewer {
            return FormatMismatch(message: "the translation leaves out \(missing.map { "{\($0)}" }.joined(separator: ", "))", isOmission: true)
        }
        return nil
    }
}

extension FormatMismatch: Error {}
