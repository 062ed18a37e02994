// What a key translates to, as the catalog parsers produce it and as the published catalogs
// (`CompiledCatalog`) hold it: a plain string, plural variants, substitutions, gettext forms or
// device variants.

/// Plural variants keyed by CLDR category.
public typealias PluralVariants = [PluralCategory: String]

/// One `%#@name@` variable of a format with substitutions (stringsdict variables, xcstrings substitutions).
public struct PluralSubstitution: Equatable, Sendable {
    /// The 1-based argument the variable consumes, when the file says (`argNum` in xcstrings); nil means
    /// the next argument in order.
    public var argument: Int?
    /// The printf conversion of the count, without the `%` (e.g. "d", "lld", "u"): stringsdict's
    /// `NSStringFormatValueTypeKey`, xcstrings' `formatSpecifier`.
    public var formatSpecifier: String
    /// The text for each plural category.
    public var variants: PluralVariants

    /// Creates a substitution.
    public init(argument: Int? = nil, formatSpecifier: String, variants: PluralVariants) {
        self.argument = argument
        self.formatSpecifier = formatSpecifier
        self.variants = variants
    }
}

/// The translated value of one key.
public indirect enum CatalogValue: Equatable, Sendable {
    /// A plain string (may contain printf-style specifiers).
    case string(String)
    /// Text chosen by the CLDR plural category of the (first) count argument.
    case plural(PluralVariants)
    /// A format whose `%#@name@` tokens are replaced by plural-chosen text (several counts in one string).
    case substitutions(format: String, variables: [String: PluralSubstitution])
    /// GNU gettext plural forms `msgstr[0…n-1]`, chosen by the catalog's `Plural-Forms` expression.
    case gettextPlural([String])
    /// Device-specific values (xcstrings `variations.device`: "iphone", "ipad", "mac", "applewatch", "other", …).
    case device([String: CatalogValue])
}
