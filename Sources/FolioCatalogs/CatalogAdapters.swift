// `.strings` and `.po` results in the shape every catalog parser returns, and the one entry point
// that parses a catalog source file of any supported format.
import FolioLocalization
import FolioToolSupport

/// A catalog source file format that ``parse(_:)`` reads into a ``ParsedCatalogFile``.
public enum CatalogFileFormat: String, Sendable, CaseIterable {
    /// An Apple `.strings` file: one locale of plain strings.
    case strings
    /// An Apple `.stringsdict` property list: one locale of plural rules and substitutions.
    case stringsdict
    /// A GNU gettext `.po` file: one locale, with `Plural-Forms` plurals.
    case po
    /// An Xcode String Catalog (`.xcstrings`): every locale in one JSON file.
    case xcstrings
    /// An XLIFF 1.2 or 2.0 file (`.xliff` or `.xlf`): source and target locales in one file.
    case xliff

    /// The format of a file name's extension (case-insensitive), or nil when it is not a catalog.
    public init?(fileName: String) {
        guard let dot = fileName.lastIndex(of: ".") else { return nil }
        switch fileName[fileName.index(after: dot)...].lowercased() {
        case "strings": self = .strings
        case "stringsdict": self = .stringsdict
        case "po": self = .po
        case "xcstrings": self = .xcstrings
        case "xliff", "xlf": self = .xliff
        default: return nil
        }
    }

    /// Parses a file's bytes into locale sections of messages, with its errors and warnings; never throws.
    public func parse(_ bytes: [UInt8]) -> ParsedCatalogFile {
        switch self {
        case .strings: StringsFile.parseCatalog(bytes)
        case .stringsdict: StringsDictFile.parse(bytes)
        case .po: POFile.parseCatalog(bytes)
        case .xcstrings: XCStringsFile.parse(bytes)
        case .xliff: XLIFFFile.parse(bytes)
        }
    }
}

extension StringsFile {
    /// Parses a `.strings` file into one locale-less section of plain strings.
    package static func parseCatalog(_ bytes: [UInt8]) -> ParsedCatalogFile {
        let (entries, diagnostics) = parse(bytes)
        let messages = entries.map {
            CatalogMessage(key: $0.key, value: .string($0.value), comment: $0.comment, line: $0.line, column: $0.column)
        }
        return ParsedCatalogFile(sections: [CatalogLocaleSection(locale: "", messages: messages)], errors: diagnostics)
    }
}

extension POFile {
    /// The catalog key of an entry: `msgctxt` U+0004 `msgid` when there is a context (as msgfmt stores it).
    package static func key(context: String?, id: String) -> String {
        context.map { $0 + "\u{4}" + id } ?? id
    }

    /// Parses a `.po` file into one locale-less section. Fuzzy entries and entries with an empty
    /// translation are listed untranslated (msgfmt leaves them out). A plural entry with fewer forms
    /// than `Plural-Forms`' nplurals is an error; forms beyond nplurals are dropped with a warning
    /// (msgfmt accepts them, and gettext never picks them).
    package static func parseCatalog(_ bytes: [UInt8]) -> ParsedCatalogFile {
        let (file, diagnostics) = parse(bytes)
        // Large files are converted in parts on all cores.
        let count = file.entries.count
        let partSize = count < 4096 ? max(count, 1) : (count + Parallel.cores - 1) / Parallel.cores
        let parts = stride(from: 0, to: count, by: partSize).map { $0..<min($0 + partSize, count) }
        let converted = Parallel.map(parts) { convert(file.entries[$0], file: file) }
        var errors = diagnostics
        var warnings: [CatalogDiagnostic] = []
        var messages: [CatalogMessage] = []
        messages.reserveCapacity(count)
        var reportedMissingRule = false
        for part in converted {
            messages += part.messages
            errors += part.errors
            warnings += part.warnings
            // One error for a missing Plural-Forms, at the first plural entry.
            if let missing = part.missingRule, !reportedMissingRule {
                reportedMissingRule = true
                errors.append(missing)
            }
        }
        return ParsedCatalogFile(
            sourceLanguage: nil,
            sections: [CatalogLocaleSection(locale: file.header["Language"] ?? "", messages: messages)],
            errors: errors, warnings: warnings, pluralForms: file.pluralForms)
    }

    /// The catalog messages of `entries`, the errors in their forms, and the error for the first
    /// plural entry when the header has no Plural-Forms.
    private static func convert(
        _ entries: ArraySlice<POEntry>, file: POFile
    ) -> (messages: [CatalogMessage], errors: [CatalogDiagnostic], warnings: [CatalogDiagnostic], missingRule: CatalogDiagnostic?) {
        var errors: [CatalogDiagnostic] = []
        var warnings: [CatalogDiagnostic] = []
        var missingRule: CatalogDiagnostic?
        var messages: [CatalogMessage] = []
        messages.reserveCapacity(entries.count)
        for entry in entries {
            let key = Self.key(context: entry.context, id: entry.id)
            let source: CatalogValue = entry.idPlural.map { .gettextPlural([entry.id, $0]) } ?? .string(entry.id)
            var translations = entry.translations
            if entry.idPlural != nil, let rule = file.pluralForms, translations.count > rule.nplurals, rule.nplurals >= 1 {
                let given = translations.count
                if !entry.fuzzy {
                    warnings.append(CatalogDiagnostic(
                        line: entry.line, column: 1,
                        message: "msgid \"\(entry.id)\" has \(given) plural forms but Plural-Forms says nplurals=\(rule.nplurals); "
                            + (given - rule.nplurals == 1
                                ? "msgstr[\(rule.nplurals)] is never used and is left out (remove it, or fix Plural-Forms)"
                                : "msgstr[\(rule.nplurals)]…msgstr[\(given - 1)] are never used and are left out (remove them, or fix Plural-Forms)")))
                }
                translations.removeLast(given - rule.nplurals)
            }
            let empty = translations.isEmpty || translations.contains(where: \.isEmpty)
            var value: CatalogValue?
            if !entry.fuzzy && !empty {
                if entry.idPlural != nil {
                    if let rule = file.pluralForms {
                        if translations.count < rule.nplurals {
                            let given = translations.count
                            errors.append(CatalogDiagnostic(
                                line: entry.line, column: 1,
                                message: "msgid \"\(entry.id)\" has \(given) plural form\(given == 1 ? "" : "s") (msgstr[0]…msgstr[\(given - 1)]) but Plural-Forms says nplurals=\(rule.nplurals); give exactly \(rule.nplurals)"))
                        }
                    } else if missingRule == nil && file.header["Plural-Forms"] == nil {
                        missingRule = CatalogDiagnostic(
                            line: entry.line, column: 1,
                            message: "plural entry but the header has no Plural-Forms; add one such as \"Plural-Forms: nplurals=2; plural=(n != 1);\"")
                    }
                    value = .gettextPlural(translations)
                } else {
                    value = .string(translations[0])
                }
            }
            messages.append(CatalogMessage(
                key: key, value: value, source: source,
                comment: entry.comments.isEmpty ? nil : entry.comments.joined(separator: "\n"),
                state: entry.fuzzy ? "fuzzy" : (empty ? "untranslated" : "translated"), line: entry.line, column: 1,
                format: entry.format))
        }
        return (messages, errors, warnings, missingRule)
    }
}
