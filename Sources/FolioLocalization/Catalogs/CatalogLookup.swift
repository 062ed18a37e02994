// Picking and filling in a localized string: the locale chain (requested locale, its CLDR parents,
// the development language), the value's plural form, and printf-style arguments.

/// The catalogs that answer for one requested locale, most specific first, and the rules to render their values.
public struct CatalogLookup: Sendable {
    /// One catalog with its plural rules prepared.
    struct Prepared: Sendable {
        let catalog: CompiledCatalog
        let plural: PluralRules
        let gettext: PluralFormsExpression?
    }

    private let chain: [Prepared]

    /// The device variant picked from device-specific values ("mac" for a command-line tool).
    public var device: String

    /// Prepares a chain of catalogs (most specific first, the development language last).
    public init(chain: [CompiledCatalog], device: String = "mac") {
        self.chain = chain.map { catalog in
            let tag = LocaleTag(catalog.locale)
            let plural = tag.map { PluralRules(tag: $0) } ?? PluralRules(locale: "root")!
            let gettext = catalog.pluralForms.flatMap { try? PluralFormsExpression($0) }
            return Prepared(catalog: catalog, plural: plural, gettext: gettext)
        }
        self.device = device
    }

    /// The locales of the chain, in order.
    public var locales: [String] { chain.map(\.catalog.locale) }

    /// Every key any catalog of the chain defines, sorted.
    public var keys: [String] {
        var all = Set<String>()
        for p in chain { all.formUnion(p.catalog.strings.keys) }
        return all.sorted()
    }

    /// The value of `key` and the locale that has it (the first catalog in the chain that does).
    public func value(for key: String) -> (value: CatalogValue, locale: String)? {
        for p in chain { if let v = p.catalog.strings[key] { return (v, p.catalog.locale) } }
        return nil
    }

    /// The string for `key` with `arguments` filled in (the first integer argument is the count that
    /// picks a plural form), and the locale that answered; nil when no catalog has the key.
    public func string(for key: String, arguments: [FormatArgument] = []) -> (text: String, locale: String)? {
        for p in chain {
            if let v = p.catalog.strings[key] { return (render(v, with: p, arguments: arguments), p.catalog.locale) }
        }
        return nil
    }

    /// The text `key` stands for, unformatted (printf specifiers left as written), and the locale that
    /// answered: the plural form `count` picks (CLDR category or gettext form), or for a value that does
    /// not vary by count the value itself; a substitution format with its variables' chosen text in place.
    /// What gettext's `gettext`/`ngettext` return for a catalog's msgid; nil when no catalog has the key.
    public func text(for key: String, count: Int? = nil) -> (text: String, locale: String)? {
        for p in chain {
            guard let v = p.catalog.strings[key] else { continue }
            return (unformatted(v, with: p, count: count), p.catalog.locale)
        }
        return nil
    }

    private func unformatted(_ value: CatalogValue, with p: Prepared, count: Int?) -> String {
        switch value {
        case .string(let s):
            return s
        case .plural(let variants):
            return pick(variants, count: count, rules: p.plural)
        case .gettextPlural(let forms):
            return forms[gettextIndex(forms, count: count ?? 0, with: p)]
        case .device(let devices):
            guard let v = devices[device] ?? devices["other"] ?? devices.sorted(by: { $0.key < $1.key }).first?.value else {
                return ""
            }
            return unformatted(v, with: p, count: count)
        case .substitutions(let format, let variables):
            // Each `%#@name@` (or `%1$#@name@`) token becomes its variable's text for `count`.
            guard let specs = try? FormatSpecifier.parse(format) else { return format }
            var out = ""
            var rest = Substring(format)
            var copied = 0
            for spec in specs {
                guard let name = spec.variable, let variable = variables[name] else { continue }
                out += rest.prefix(spec.offset - copied)
                rest = rest.dropFirst(spec.offset - copied + spec.text.count)
                copied = spec.offset + spec.text.count
                out += pick(variable.variants, count: count, rules: p.plural)
            }
            return out + rest
        }
    }

    /// The gettext form `count` picks: the catalog's `Plural-Forms` (an index past the forms takes the
    /// last), else the Germanic rule gettext falls back to.
    private func gettextIndex(_ forms: [String], count n: Int, with p: Prepared) -> Int {
        let index = p.gettext.map { Int(clamping: $0.index(for: UInt64(max(0, n)))) } ?? (n == 1 ? 0 : forms.count - 1)
        return min(max(0, index), forms.count - 1)
    }

    /// The plural form `value` takes for `count` in `locale`'s rules, unformatted: a CLDR category name
    /// or a gettext form index; nil for values that do not vary by count.
    package func pluralChoice(for key: String, count: Int) -> String? {
        for p in chain {
            guard let v = p.catalog.strings[key] else { continue }
            switch v {
            case .plural: return p.plural.category(for: count).rawValue
            case .gettextPlural: return "form \(p.gettext?.index(for: UInt64(max(0, count))) ?? 0)"
            default: return nil
            }
        }
        return nil
    }

    private func count(_ arguments: [FormatArgument], at index: Int) -> Int? {
        guard index >= 0, index < arguments.count else { return nil }
        switch arguments[index] {
        case .int(let i): return Int(i)
        case .double(let d): return d.isFinite ? Int(d) : nil
        case .string(let s): return Int(s)
        }
    }

    /// The variant for `count`: its CLDR category's, else `other`. As in Foundation, a `zero` variant
    /// answers for 0 in every language, whether or not CLDR gives the language that category.
    private func pick(_ variants: PluralVariants, count: Int?, rules: PluralRules) -> String {
        guard let count else { return variants[.other] ?? "" }
        if count == 0, let zero = variants[.zero] { return zero }
        return variants[rules.category(for: count)] ?? variants[.other] ?? ""
    }

    private func render(_ value: CatalogValue, with p: Prepared, arguments: [FormatArgument]) -> String {
        switch value {
        case .string(let s):
            return FormatSpecifier.format(s, arguments)
        case .plural(let variants):
            return FormatSpecifier.format(pick(variants, count: count(arguments, at: 0), rules: p.plural), arguments)
        case .gettextPlural(let forms):
            return FormatSpecifier.format(forms[gettextIndex(forms, count: count(arguments, at: 0) ?? 0, with: p)], arguments)
        case .device(let devices):
            guard let v = devices[device] ?? devices["other"] ?? devices.sorted(by: { $0.key < $1.key }).first?.value else {
                return ""
            }
            return render(v, with: p, arguments: arguments)
        case .substitutions(let format, let variables):
            return renderSubstitutions(format, variables, rules: p.plural, arguments: arguments)
        }
    }

    /// Replaces each `%#@name@` (or `%2$#@name@`) with its variable's plural text for the argument it
    /// consumes, then formats the rest with the arguments the tokens did not consume.
    private func renderSubstitutions(
        _ format: String, _ variables: [String: PluralSubstitution], rules: PluralRules, arguments: [FormatArgument]
    ) -> String {
        guard let specs = try? FormatSpecifier.parse(format) else { return FormatSpecifier.format(format, arguments) }
        var out = ""
        var rest = Substring(format)
        var copied = 0  // characters of `format` already copied or replaced
        var consumed = Set<Int>()
        var nextArgument = 0
        for spec in specs {
            guard let name = spec.variable else {
                nextArgument += 1  // an ordinary specifier: it consumes the next argument
                continue
            }
            out += rest.prefix(spec.offset - copied)
            rest = rest.dropFirst(spec.offset - copied + spec.text.count)
            copied = spec.offset + spec.text.count
            let index = (spec.argument ?? variables[name]?.argument).map { $0 - 1 } ?? nextArgument
            nextArgument += 1
            guard let variable = variables[name] else {
                out += "%" + spec.text  // left as written, and printed so
                continue
            }
            consumed.insert(index)
            let text = pick(variable.variants, count: count(arguments, at: index), rules: rules)
            // A variant's sequential specifiers start at the variable's own argument (its count);
            // positional ones (`%2$@ followers`) read the call's arguments.
            let positional = (try? FormatSpecifier.parse(text))?.contains { $0.argument != nil } ?? false
            let own = index >= 0 && index < arguments.count ? Array(arguments[index...]) : []
            if positional, let specs = try? FormatSpecifier.parse(text) {
                for spec in specs { if let k = spec.argument { consumed.insert(k - 1) } }
            }
            out += FormatSpecifier.format(text, positional ? arguments : own).replacingPercents()
        }
        out += rest
        // Positional specifiers around the tokens (`%2$@の本 %#@books@`) name the call's arguments;
        // sequential ones take those the tokens did not consume, in order.
        if specs.contains(where: { $0.variable == nil && $0.argument != nil }) {
            return FormatSpecifier.format(out, arguments)
        }
        let remaining = arguments.enumerated().filter { !consumed.contains($0.offset) }.map(\.element)
        return FormatSpecifier.format(out, remaining)
    }
}

extension String {
    /// The string with every `%` doubled, so formatting it again prints it as is.
    fileprivate func replacingPercents() -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for c in unicodeScalars {
            if c == "%" { out += "%%" } else { out.unicodeScalars.append(c) }
        }
        return out
    }
}
