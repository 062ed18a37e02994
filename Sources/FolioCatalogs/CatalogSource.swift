import FolioLocalization

// What the catalog parsers produce: messages per locale, each a plain string or plural variants,
// with the source position the Builder's diagnostics point at. The Builder validates and merges
// these and compiles them into `CompiledCatalog`s.

/// How a message's placeholders are written, which decides how a translation is checked against its source.
public enum FormatLanguage: String, Sendable, CaseIterable {
    /// Foundation's `String(format:)`: printf with `%@`, positions `%1$@`, Apple's `%#@name@` (Apple catalogs).
    case apple
    /// C `printf` (gettext `c-format`; `objc-format` adds `%@` and is read as ``apple``).
    case c
    /// Python's `%` operator: `%(name)s` or `%s` (gettext `python-format`).
    case python
    /// Python's `str.format`: `{name}`, `{0}`, `{}` (gettext `python-brace-format`).
    case pythonBrace = "python-brace"
    /// Not checked: a gettext entry with no format flag, a `no-…-format` flag, or a format Folio does
    /// not check (`java-format`, `qt-format`, …), as `msgfmt -c` checks only flagged entries.
    case unchecked

    /// The language of a gettext `#,` flag (`c-format`, `possible-python-format`, `no-c-format`, …),
    /// or nil when the flag is not about a format.
    package init?(gettextFlag flag: some StringProtocol) {
        var name = Substring(flag)
        guard name.hasSuffix("-format") else { return nil }
        name = name.dropLast(7)
        if name.hasPrefix("no-") {
            self = .unchecked
            return
        }
        if name.hasPrefix("possible-") { name = name.dropFirst(9) }
        switch name {
        case "c": self = .c
        case "objc": self = .apple
        case "python": self = .python
        case "python-brace": self = .pythonBrace
        default: self = .unchecked
        }
    }
}

/// One key's entry in a source catalog for one locale.
public struct CatalogMessage: Equatable, Sendable {
    /// The lookup key (gettext: `msgctxt` + U+0004 + `msgid` when there is a context, as msgfmt does).
    public var key: String
    /// The translation; nil when the file lists the key without a usable translation (untranslated,
    /// `new` state, empty XLIFF target, fuzzy gettext entry).
    public var value: CatalogValue?
    /// The source-language text the file carries alongside the translation (XLIFF `<source>`,
    /// gettext `msgid`/`msgid_plural`), used to check format specifiers when the development
    /// language has no entry for the key.
    public var source: CatalogValue?
    /// The translator/developer comment or note, if any.
    public var comment: String?
    /// The translation state as the file spells it (e.g. "translated", "needs_review", "final"), if any.
    public var state: String?
    /// The 1-based line of the value (or of the key when there is no value).
    public var line: Int
    /// The 1-based column of the value (or of the key).
    public var column: Int
    /// How the placeholders are written: Apple's rules for Apple formats, the format flag for gettext.
    public var format: FormatLanguage

    /// Creates a message.
    package init(
        key: String, value: CatalogValue?, source: CatalogValue? = nil, comment: String? = nil, state: String? = nil,
        line: Int, column: Int, format: FormatLanguage = .apple
    ) {
        self.key = key
        self.value = value
        self.source = source
        self.comment = comment
        self.state = state
        self.line = line
        self.column = column
        self.format = format
    }
}

/// The messages of one locale within a parsed file.
public struct CatalogLocaleSection: Equatable, Sendable {
    /// The locale exactly as the file writes it (the Builder parses and canonicalises it);
    /// empty for single-locale formats, whose locale comes from their folder.
    public var locale: String
    /// Where the locale is named (for an invalid-tag diagnostic); 1:1 when it is not in the file.
    public var line: Int
    /// The column where the locale is named.
    public var column: Int
    /// The messages, in file order.
    public var messages: [CatalogMessage]

    /// Creates a section.
    package init(locale: String, line: Int = 1, column: Int = 1, messages: [CatalogMessage]) {
        self.locale = locale
        self.line = line
        self.column = column
        self.messages = messages
    }
}

/// What one catalog file yields: its sections and what was wrong with it.
public struct ParsedCatalogFile: Equatable, Sendable {
    /// The source (development) language the file declares (xcstrings `sourceLanguage`,
    /// XLIFF `source-language`/`srcLang`), if any.
    public var sourceLanguage: String?
    /// One section per locale, in file order.
    public var sections: [CatalogLocaleSection]
    /// Errors: the Builder fails the build when there is any.
    public var errors: [CatalogDiagnostic]
    /// Warnings: reported, the build goes on.
    public var warnings: [CatalogDiagnostic]
    /// The parsed `Plural-Forms` of a gettext file, which chooses its `.gettextPlural` forms.
    public var pluralForms: PluralFormsExpression?

    /// Creates a result.
    package init(
        sourceLanguage: String? = nil, sections: [CatalogLocaleSection] = [], errors: [CatalogDiagnostic] = [],
        warnings: [CatalogDiagnostic] = [], pluralForms: PluralFormsExpression? = nil
    ) {
        self.sourceLanguage = sourceLanguage
        self.sections = sections
        self.errors = errors
        self.warnings = warnings
        self.pluralForms = pluralForms
    }
}

extension CatalogValue {
    /// Whether the value has substitutions (directly or in a device variant), the only values
    /// ``resolvingXcodeArgPlaceholders`` changes.
    package var hasSubstitutions: Bool {
        switch self {
        case .string, .plural, .gettextPlural: false
        case .substitutions: true
        case .device(let devices): devices.values.contains(where: \.hasSubstitutions)
        }
    }

    /// The value with Xcode's `%arg` placeholder in substitution variants written as the variable's
    /// own specifier (`%arg` with specifier "lld" becomes `%lld`), so every reader sees printf syntax.
    package var resolvingXcodeArgPlaceholders: CatalogValue {
        switch self {
        case .string, .plural, .gettextPlural:
            return self
        case .device(let devices):
            return .device(devices.mapValues(\.resolvingXcodeArgPlaceholders))
        case .substitutions(let format, let variables):
            return .substitutions(format: format, variables: variables.mapValues { v in
                var v = v
                v.variants = v.variants.mapValues { $0.replacing("%arg", with: "%" + v.formatSpecifier) }
                return v
            })
        }
    }
}
