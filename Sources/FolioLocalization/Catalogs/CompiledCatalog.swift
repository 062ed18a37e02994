// The published form of a string catalog: one binary plist per table and locale, and the rules a
// reader uses to pick a string (locale fallback, CLDR plural category or gettext Plural-Forms,
// device variant) and fill in its arguments.
//
// Schema of `catalogs/<locale>/<Table>.plist` (a dict):
//   schemaVersion  integer, 1
//   table          string, e.g. "Localizable"
//   locale         string, canonical BCP 47, e.g. "pt-BR"
//   pluralForms    string, optional: the gettext `Plural-Forms` that picks `forms` values
//   strings        dict, key → value, where a value is one of
//     "text"                                      a plain string
//     {"one": "…", "other": "…", …}               plural variants by CLDR category (always has `other`)
//     {"format": "…%#@a@…", "variables": {"a": {"specifier": "d", "argument": 1?, "variants": {…}}}}
//                                                 several counts in one string (stringsdict/xcstrings substitutions)
//     {"forms": ["…", "…", "…"]}                  gettext plural forms, index from `pluralForms`
//     {"device": {"iphone": value, "mac": value, "other": value, …}}
//
// Schema of `catalogs/index.plist`: see `CatalogIndex`.
import FolioPlist

/// A catalog that does not follow the published schema.
public struct CatalogFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the key path.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// One table in one locale, as published.
public struct CompiledCatalog: Equatable, Sendable {
    /// The schema version this code writes and reads.
    public static let schemaVersion = 1

    /// The table name, e.g. "Localizable".
    public var table: String
    /// The canonical BCP 47 locale.
    public var locale: String
    /// The gettext `Plural-Forms` that chooses `.gettextPlural` forms, when the catalog has any.
    public var pluralForms: String?
    /// The values by key.
    public var strings: [String: CatalogValue]

    /// Creates a catalog.
    public init(table: String, locale: String, pluralForms: String? = nil, strings: [String: CatalogValue]) {
        self.table = table
        self.locale = locale
        self.pluralForms = pluralForms
        self.strings = strings
    }

    /// The published path of a table in a locale: `catalogs/<locale>/<Table>.plist`.
    public static func path(table: String, locale: String) -> String { "catalogs/\(locale)/\(table).plist" }

    // MARK: Plist form

    /// The catalog as the plist the Builder publishes.
    package var plist: PlistValue {
        var dict: [String: PlistValue] = [
            "schemaVersion": .int(Int64(Self.schemaVersion)),
            "table": .string(table),
            "locale": .string(locale),
            "strings": .dict(strings.mapValues(Self.plist(of:))),
        ]
        if let pluralForms { dict["pluralForms"] = .string(pluralForms) }
        return .dict(dict)
    }

    private static func variantsPlist(_ variants: PluralVariants) -> PlistValue {
        var dict: [String: PlistValue] = [:]
        for (category, text) in variants { dict[category.rawValue] = .string(text) }
        return .dict(dict)
    }

    /// One value in its published form.
    package static func plist(of value: CatalogValue) -> PlistValue {
        switch value {
        case .string(let s):
            return .string(s)
        case .plural(let variants):
            return variantsPlist(variants)
        case .substitutions(let format, let variables):
            var vars: [String: PlistValue] = [:]
            for (name, v) in variables {
                var d: [String: PlistValue] = ["specifier": .string(v.formatSpecifier), "variants": variantsPlist(v.variants)]
                if let argument = v.argument { d["argument"] = .int(Int64(argument)) }
                vars[name] = .dict(d)
            }
            return .dict(["format": .string(format), "variables": .dict(vars)])
        case .gettextPlural(let forms):
            return .dict(["forms": .array(forms.map { .string($0) })])
        case .device(let devices):
            return .dict(["device": .dict(devices.mapValues(plist(of:)))])
        }
    }

    /// Reads a published catalog, checking its schema.
    package init(plist: PlistValue) throws(CatalogFormatError) {
        guard case .dict(let dict) = plist else { throw CatalogFormatError("a catalog must be a dictionary") }
        guard let version = dict["schemaVersion"]?.intValue else { throw CatalogFormatError("schemaVersion is missing") }
        guard version == Self.schemaVersion else {
            throw CatalogFormatError("schemaVersion \(version) is not supported (this reader knows \(Self.schemaVersion))")
        }
        guard let table = dict["table"]?.stringValue, let locale = dict["locale"]?.stringValue else {
            throw CatalogFormatError("table and locale must be strings")
        }
        guard case .dict(let strings)? = dict["strings"] else { throw CatalogFormatError("strings must be a dictionary") }
        var values: [String: CatalogValue] = [:]
        values.reserveCapacity(strings.count)
        for (key, value) in strings { values[key] = try Self.value(value, at: key) }
        var pluralForms: String?
        if let pf = dict["pluralForms"] {
            guard let text = pf.stringValue else { throw CatalogFormatError("pluralForms must be a string") }
            pluralForms = text
        }
        self.init(table: table, locale: locale, pluralForms: pluralForms, strings: values)
    }

    /// Reads a published catalog from binary (or JSON) plist bytes.
    public init(bytes: [UInt8]) throws(CatalogFormatError) {
        let value: PlistValue
        do { value = try PlistValue.decode(bytes) } catch { throw CatalogFormatError("not a property list: \(error)") }
        try self.init(plist: value)
    }

    private static func variants(_ value: PlistValue, at path: String) throws(CatalogFormatError) -> PluralVariants {
        guard case .dict(let dict) = value else { throw CatalogFormatError("\(path): plural variants must be a dictionary") }
        var result: PluralVariants = [:]
        for (name, text) in dict {
            guard let category = PluralCategory(rawValue: name) else {
                throw CatalogFormatError("\(path): '\(name)' is not a CLDR plural category")
            }
            guard let s = text.stringValue else { throw CatalogFormatError("\(path).\(name) must be a string") }
            result[category] = s
        }
        guard result[.other] != nil else { throw CatalogFormatError("\(path): plural variants need 'other'") }
        return result
    }

    private static func value(_ value: PlistValue, at path: String) throws(CatalogFormatError) -> CatalogValue {
        switch value {
        case .string(let s):
            return .string(s)
        case .dict(let dict):
            if let format = dict["format"] {
                guard let f = format.stringValue, case .dict(let vars)? = dict["variables"] else {
                    throw CatalogFormatError("\(path): 'format' needs a string and 'variables' a dictionary")
                }
                var variables: [String: PluralSubstitution] = [:]
                for (name, v) in vars {
                    guard case .dict(let d) = v, let spec = d["specifier"]?.stringValue, let variants = d["variants"] else {
                        throw CatalogFormatError("\(path).variables.\(name) needs 'specifier' and 'variants'")
                    }
                    let argument = d["argument"]?.intValue
                    variables[name] = PluralSubstitution(
                        argument: argument, formatSpecifier: spec,
                        variants: try Self.variants(variants, at: "\(path).variables.\(name).variants"))
                }
                return .substitutions(format: f, variables: variables)
            }
            if let forms = dict["forms"] {
                guard case .array(let items) = forms, !items.isEmpty else {
                    throw CatalogFormatError("\(path).forms must be a non-empty array of strings")
                }
                var texts: [String] = []
                for item in items {
                    guard let s = item.stringValue else { throw CatalogFormatError("\(path).forms must hold strings") }
                    texts.append(s)
                }
                return .gettextPlural(texts)
            }
            if let device = dict["device"] {
                guard case .dict(let devices) = device, !devices.isEmpty else {
                    throw CatalogFormatError("\(path).device must be a non-empty dictionary")
                }
                var result: [String: CatalogValue] = [:]
                for (name, v) in devices { result[name] = try Self.value(v, at: "\(path).device.\(name)") }
                return .device(result)
            }
            return .plural(try variants(value, at: path))
        default:
            throw CatalogFormatError("\(path): a value must be a string or a dictionary")
        }
    }
}

/// The published `catalogs/index.plist`: which tables and locales exist, the development language,
/// and how much of each table each locale translates.
///
/// Schema (a dict): `schemaVersion` 1; `developmentLanguage` string; `tables` array of strings;
/// `locales` array of strings (sorted); `coverage` dict locale → table → {`translated`, `total`}
/// (keys of the development language's table that the locale translates itself, not by fallback).
package struct CatalogIndex: Equatable, Sendable {
    /// The published path of the index.
    package static let path = "catalogs/index.plist"

    /// Translated and total key counts of one table in one locale.
    package struct Coverage: Equatable, Sendable {
        /// Keys of the development language the locale translates.
        package var translated: Int
        /// Keys in the development language's table.
        package var total: Int
        /// Creates a coverage figure.
        package init(translated: Int, total: Int) {
            self.translated = translated
            self.total = total
        }
        /// Percentage translated, rounded down (100 for an empty table).
        package var percent: Int { total == 0 ? 100 : translated * 100 / total }
    }

    /// The locale whose catalogs are complete and that answers when nothing else matches.
    package var developmentLanguage: String
    /// Table names, sorted.
    package var tables: [String]
    /// Locales that have at least one table, sorted.
    package var locales: [String]
    /// Coverage by locale, then table.
    package var coverage: [String: [String: Coverage]]

    /// Creates an index.
    package init(developmentLanguage: String, tables: [String], locales: [String], coverage: [String: [String: Coverage]]) {
        self.developmentLanguage = developmentLanguage
        self.tables = tables
        self.locales = locales
        self.coverage = coverage
    }

    /// The locales that publish `table`.
    package func locales(for table: String) -> [String] {
        locales.filter { coverage[$0]?[table] != nil }
    }

    /// The index as its published plist.
    package var plist: PlistValue {
        var cov: [String: PlistValue] = [:]
        for (locale, tables) in coverage {
            cov[locale] = .dict(tables.mapValues {
                .dict(["translated": .int(Int64($0.translated)), "total": .int(Int64($0.total))])
            })
        }
        return .dict([
            "schemaVersion": .int(Int64(CompiledCatalog.schemaVersion)),
            "developmentLanguage": .string(developmentLanguage),
            "tables": .array(tables.map { .string($0) }),
            "locales": .array(locales.map { .string($0) }),
            "coverage": .dict(cov),
        ])
    }

    /// Reads a published index.
    package init(plist: PlistValue) throws(CatalogFormatError) {
        guard case .dict(let dict) = plist, let dev = dict["developmentLanguage"]?.stringValue,
            case .array(let tables)? = dict["tables"], case .array(let locales)? = dict["locales"]
        else { throw CatalogFormatError("catalogs/index.plist needs developmentLanguage, tables and locales") }
        var coverage: [String: [String: Coverage]] = [:]
        if case .dict(let cov)? = dict["coverage"] {
            for (locale, perTable) in cov {
                guard case .dict(let t) = perTable else { continue }
                for (table, figures) in t {
                    coverage[locale, default: [:]][table] = Coverage(
                        translated: figures["translated"]?.intValue ?? 0, total: figures["total"]?.intValue ?? 0)
                }
            }
        }
        self.init(
            developmentLanguage: dev, tables: tables.compactMap(\.stringValue), locales: locales.compactMap(\.stringValue),
            coverage: coverage)
    }
}
