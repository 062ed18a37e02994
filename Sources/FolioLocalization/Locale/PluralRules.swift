// CLDR cardinal plural rules (Unicode TR35, "Language Plural Rules"):
// operands from a decimal string, a parser for the rule syntax, and a
// per-locale evaluator built once from the generated `CLDRData` tables.

/// A CLDR plural category.
public enum PluralCategory: String, Sendable, CaseIterable, Hashable {
    /// The category for zero, in languages that distinguish it (e.g. Arabic, Latvian).
    case zero
    /// The category for one or numbers that behave like it (e.g. 1 in English, 21 in Russian).
    case one
    /// The category for two or numbers that behave like it (e.g. Arabic, Slovenian).
    case two
    /// The category for a few, e.g. 2–4 in Czech or 3–10 in Arabic.
    case few
    /// The category for many, e.g. 5–20 in Russian or 11–99 in Arabic.
    case many
    /// The general category every locale has, used when no other rule matches.
    case other
}

/// An error thrown when a plural rule's text is not valid CLDR rule syntax.
package struct PluralRuleError: Error, Equatable, CustomStringConvertible {
    /// What went wrong and where, in words.
    package let message: String

    /// A readable description of the error.
    package var description: String { "invalid plural rule: \(message)" }
}

/// A non-negative integer kept as its decimal digits, so arbitrarily long input never overflows.
package struct PluralDigits: Sendable, Hashable {
    /// The digits, most significant first, without leading zeros (empty means zero).
    package let digits: [UInt8]

    /// Makes a value from ASCII decimal digits (leading zeros are dropped).
    package init<S: Sequence>(_ ascii: S) where S.Element == UInt8 {
        digits = Array(ascii.map { $0 &- 48 }.drop(while: { $0 == 0 }))
    }

    /// The value as a `UInt64`, or nil when it does not fit.
    package var value: UInt64? {
        var result: UInt64 = 0
        for d in digits {
            let (m, o1) = result.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            result = a
        }
        return result
    }

    /// The value modulo `m` (which must be non-zero), computed exactly digit by digit.
    package func remainder(dividingBy m: UInt64) -> UInt64 {
        var r: UInt64 = 0
        for d in digits {
            // r < m, so r * 10 + 9 overflows only for m near UInt64.max; use full-width arithmetic.
            let (high, low) = r.multipliedFullWidth(by: 10)
            let (sum, carry) = low.addingReportingOverflow(UInt64(d))
            r = m.dividingFullWidth((high + (carry ? 1 : 0), sum)).remainder
        }
        return r
    }
}

/// The plural operands of a decimal number as TR35 defines them (n, i, v, w, f, t, plus c/e).
package struct PluralOperands: Sendable, Hashable {
    /// i: the integer digits of n.
    package let i: PluralDigits
    /// f: the visible fraction digits, with trailing zeros, as an integer.
    package let f: PluralDigits
    /// t: the visible fraction digits, without trailing zeros, as an integer.
    package let t: PluralDigits
    /// v: the number of visible fraction digits, with trailing zeros.
    package let v: Int
    /// w: the number of visible fraction digits, without trailing zeros.
    package let w: Int
    /// c/e: the compact decimal exponent (always 0 here; compact notation is not parsed).
    package let e: Int

    /// Parses a plain decimal string such as "1", "1.0", "1.50" or "-3"; nil if it is not one.
    package init?(_ text: String) {
        var bytes = Array(text.utf8)
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            bytes.removeFirst()
        }
        let isDigit: (UInt8) -> Bool = { $0 >= 48 && $0 <= 57 }
        let intPart: ArraySlice<UInt8>
        var fracPart: ArraySlice<UInt8> = []
        if let dot = bytes.firstIndex(of: UInt8(ascii: ".")) {
            intPart = bytes[..<dot]
            fracPart = bytes[(dot + 1)...]
            if fracPart.isEmpty { return nil }
        } else {
            intPart = bytes[...]
        }
        guard !intPart.isEmpty, intPart.allSatisfy(isDigit), fracPart.allSatisfy(isDigit) else { return nil }
        let trimmed = fracPart.reversed().drop(while: { $0 == UInt8(ascii: "0") }).reversed()
        i = PluralDigits(intPart)
        f = PluralDigits(fracPart)
        t = PluralDigits(trimmed)
        v = fracPart.count
        w = trimmed.count
        e = 0
    }

    /// The operands of an integer (v = w = f = t = 0).
    package init(_ n: Int) {
        i = PluralDigits(String(n.magnitude).utf8)
        f = PluralDigits([UInt8]())
        t = f
        v = 0
        w = 0
        e = 0
    }
}

/// A parsed CLDR plural condition (`and`/`or` of relations) that can be evaluated against operands.
package struct PluralCondition: Sendable {
    enum Operand: Sendable { case n, i, v, w, f, t, e }

    struct Relation: Sendable {
        let operand: Operand
        let modulus: UInt64?
        let negated: Bool
        let within: Bool
        let ranges: [ClosedRange<UInt64>]
    }

    /// Disjunction of conjunctions of relations; empty means "always true".
    let alternatives: [[Relation]]

    /// Parses a condition in CLDR syntax; an empty text is the condition that always holds.
    package init(parsing text: String) throws {
        var parser = Parser(tokens: try Parser.tokenize(text))
        alternatives = try parser.parseCondition()
    }

    /// Whether the condition holds for the given operands.
    package func matches(_ operands: PluralOperands) -> Bool {
        if alternatives.isEmpty { return true }
        return alternatives.contains { relations in
            relations.allSatisfy { Self.evaluate($0, operands) }
        }
    }

    private static func evaluate(_ r: Relation, _ x: PluralOperands) -> Bool {
        // The operand's value: an integer part (nil when too large to matter) and whether it has a fraction.
        let integer: UInt64?
        var fractional = false
        func digitsValue(_ d: PluralDigits) -> UInt64? {
            if let m = r.modulus { return d.remainder(dividingBy: m) }
            return d.value
        }
        func countValue(_ c: Int) -> UInt64 {
            let u = UInt64(c)
            if let m = r.modulus { return u % m }
            return u
        }
        switch r.operand {
        case .n:
            integer = digitsValue(x.i)
            fractional = x.w > 0
        case .i: integer = digitsValue(x.i)
        case .f: integer = digitsValue(x.f)
        case .t: integer = digitsValue(x.t)
        case .v: integer = countValue(x.v)
        case .w: integer = countValue(x.w)
        case .e: integer = countValue(x.e)
        }
        let found: Bool
        if let value = integer {
            found = r.ranges.contains { range in
                if !fractional { return range.contains(value) }
                // A non-integer n lies only *within* a range, never *in* it.
                return r.within && value >= range.lowerBound && value < range.upperBound
            }
        } else {
            found = false  // Larger than any literal a rule can name.
        }
        return found != r.negated
    }

    private struct Parser {
        enum Token: Equatable { case word(String), number(UInt64), symbol(String) }

        var tokens: [Token]
        var index = 0

        static func tokenize(_ text: String) throws -> [Token] {
            var result: [Token] = []
            let bytes = Array(text.utf8)
            var k = 0
            while k < bytes.count {
                let b = bytes[k]
                switch b {
                case 0x20, 0x09, 0x0A, 0x0D:
                    k += 1
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    var value: UInt64 = 0
                    while k < bytes.count, bytes[k] >= 48, bytes[k] <= 57 {
                        let (m, o1) = value.multipliedReportingOverflow(by: 10)
                        let (a, o2) = m.addingReportingOverflow(UInt64(bytes[k] - 48))
                        if o1 || o2 { throw PluralRuleError(message: "number too large at offset \(k)") }
                        value = a
                        k += 1
                    }
                    result.append(.number(value))
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    var end = k
                    while end < bytes.count,
                        (bytes[end] | 0x20) >= UInt8(ascii: "a") && (bytes[end] | 0x20) <= UInt8(ascii: "z")
                    {
                        end += 1
                    }
                    result.append(.word(String(decoding: bytes[k..<end], as: UTF8.self).lowercased()))
                    k = end
                case UInt8(ascii: "="), UInt8(ascii: "%"), UInt8(ascii: ","):
                    result.append(.symbol(String(UnicodeScalar(b))))
                    k += 1
                case UInt8(ascii: "!"):
                    guard k + 1 < bytes.count, bytes[k + 1] == UInt8(ascii: "=") else {
                        throw PluralRuleError(message: "expected '!=' at offset \(k)")
                    }
                    result.append(.symbol("!="))
                    k += 2
                case UInt8(ascii: "."):
                    guard k + 1 < bytes.count, bytes[k + 1] == UInt8(ascii: ".") else {
                        throw PluralRuleError(message: "expected '..' at offset \(k)")
                    }
                    result.append(.symbol(".."))
                    k += 2
                default:
                    throw PluralRuleError(message: "unexpected character at offset \(k)")
                }
            }
            return result
        }

        var current: Token? { index < tokens.count ? tokens[index] : nil }

        mutating func accept(_ token: Token) -> Bool {
            if current == token {
                index += 1
                return true
            }
            return false
        }

        mutating func parseCondition() throws -> [[Relation]] {
            if tokens.isEmpty { return [] }
            var result = [try parseAnd()]
            while accept(.word("or")) { result.append(try parseAnd()) }
            if let extra = current { throw PluralRuleError(message: "unexpected \(extra) after condition") }
            return result
        }

        mutating func parseAnd() throws -> [Relation] {
            var result = [try parseRelation()]
            while accept(.word("and")) { result.append(try parseRelation()) }
            return result
        }

        mutating func parseRelation() throws -> Relation {
            guard case .word(let name)? = current else {
                throw PluralRuleError(message: "expected an operand, found \(describe(current))")
            }
            let operand: Operand
            switch name {
            case "n": operand = .n
            case "i": operand = .i
            case "v": operand = .v
            case "w": operand = .w
            case "f": operand = .f
            case "t": operand = .t
            case "e", "c": operand = .e
            default: throw PluralRuleError(message: "unknown operand '\(name)'")
            }
            index += 1
            var modulus: UInt64?
            if accept(.symbol("%")) || accept(.word("mod")) {
                guard case .number(let m)? = current, m > 0 else {
                    throw PluralRuleError(message: "expected a non-zero modulus, found \(describe(current))")
                }
                index += 1
                modulus = m
            }
            var negated = false
            var within = false
            if accept(.symbol("=")) {
            } else if accept(.symbol("!=")) {
                negated = true
            } else if accept(.word("is")) {
                negated = accept(.word("not"))
                let value = try parseValue()
                return Relation(
                    operand: operand, modulus: modulus, negated: negated, within: false, ranges: [value...value])
            } else {
                negated = accept(.word("not"))
                if accept(.word("within")) {
                    within = true
                } else if !accept(.word("in")) {
                    throw PluralRuleError(message: "expected a relation operator, found \(describe(current))")
                }
            }
            var ranges = [try parseRange()]
            while accept(.symbol(",")) { ranges.append(try parseRange()) }
            return Relation(operand: operand, modulus: modulus, negated: negated, within: within, ranges: ranges)
        }

        mutating func parseRange() throws -> ClosedRange<UInt64> {
            let low = try parseValue()
            guard accept(.symbol("..")) else { return low...low }
            let high = try parseValue()
            guard low <= high else { throw PluralRuleError(message: "empty range \(low)..\(high)") }
            return low...high
        }

        mutating func parseValue() throws -> UInt64 {
            guard case .number(let value)? = current else {
                throw PluralRuleError(message: "expected a number, found \(describe(current))")
            }
            index += 1
            return value
        }

        func describe(_ token: Token?) -> String {
            switch token {
            case nil: return "end of rule"
            case .word(let w)?: return "'\(w)'"
            case .number(let n)?: return "'\(n)'"
            case .symbol(let s)?: return "'\(s)'"
            }
        }
    }
}

/// The cardinal plural rules of one locale, from CLDR.
public struct PluralRules: Sendable {
    /// One locale group's parsed rules, in CLDR order, excluding `other`.
    struct Compiled: Sendable {
        let rules: [(PluralCategory, PluralCondition)]
        let categories: [PluralCategory]
    }

    /// Every CLDR rule group parsed once, keyed by lowercased hyphenated locale identifier.
    static let table: [String: Compiled] = {
        var result: [String: Compiled] = [:]
        for group in CLDRData.cardinalPluralRules {
            var rules: [(PluralCategory, PluralCondition)] = []
            var categories: [PluralCategory] = []
            for rule in group.rules {
                guard let category = PluralCategory(rawValue: rule.category) else { continue }
                categories.append(category)
                if category == .other { continue }
                // Generated data is validated by the tests; a rule that failed to parse would never match.
                if let condition = try? PluralCondition(parsing: rule.condition) {
                    rules.append((category, condition))
                }
            }
            if !categories.contains(.other) { categories.append(.other) }
            let compiled = Compiled(rules: rules, categories: categories)
            for locale in group.locales { result[locale.lowercased()] = compiled }
        }
        return result
    }()

    private let compiled: Compiled

    /// The locale identifier whose CLDR rules are used (e.g. "pt-PT", "ru", or "root").
    public let resolvedLocale: String

    /// Finds the rules for a locale identifier (BCP 47 or POSIX style), falling back through CLDR
    /// parent locales and truncation to the language, then to "root"; nil if there is no language subtag.
    public init?(locale: String) {
        var text = Substring(locale)
        if let cut = text.firstIndex(where: { $0 == "." || $0 == "@" }) { text = text[..<cut] }
        let subtags = text.split(separator: "_", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "-", omittingEmptySubsequences: false) }
            .map { $0.lowercased() }
        guard let language = subtags.first, (2...8).contains(language.count),
            language.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return nil }
        let parents = Self.lowercasedParents
        var candidate: String? = subtags.joined(separator: "-")
        while let tag = candidate {
            if let found = Self.table[tag] {
                compiled = found
                resolvedLocale = tag == "root" ? "root" : Self.displayName(tag)
                return
            }
            // Plural rules belong to the language: an explicit parent of "root" (e.g. sr-Latn, zh-Hant)
            // only cuts off inherited display data, so such tags truncate to their language instead.
            if let parent = parents[tag], parent != "root" {
                candidate = parent
            } else if let dash = tag.lastIndex(of: "-") {
                candidate = String(tag[..<dash])
            } else {
                candidate = tag == "root" ? nil : "root"
            }
        }
        guard let root = Self.table["root"] else { return nil }
        compiled = root
        resolvedLocale = "root"
    }

    /// The rules for a parsed locale tag, with the same fallback as ``init(locale:)``.
    public init(tag: LocaleTag) {
        if let rules = PluralRules(locale: tag.description) {
            self = rules
        } else {
            compiled = Compiled(rules: [], categories: [.other])
            resolvedLocale = "root"
        }
    }

    private static let lowercasedParents: [String: String] = {
        var result: [String: String] = [:]
        for (child, parent) in CLDRData.parentLocales { result[child.lowercased()] = parent.lowercased() }
        return result
    }()

    private static func displayName(_ lowercased: String) -> String {
        for group in CLDRData.cardinalPluralRules {
            if let match = group.locales.first(where: { $0.lowercased() == lowercased }) { return match }
        }
        return lowercased
    }

    /// The categories this locale distinguishes, in CLDR order, always ending with `other`.
    public var categories: [PluralCategory] { compiled.categories }

    /// The category of a decimal number written as a string ("1.0" keeps its visible zero);
    /// text that is not a plain decimal number gets `other`.
    public func category(for decimal: String) -> PluralCategory {
        guard let operands = PluralOperands(decimal) else { return .other }
        return category(for: operands)
    }

    /// The category of an integer.
    public func category(for n: Int) -> PluralCategory {
        category(for: PluralOperands(n))
    }

    /// The category for already computed operands.
    package func category(for operands: PluralOperands) -> PluralCategory {
        for (category, condition) in compiled.rules where condition.matches(operands) { return category }
        return .other
    }
}
