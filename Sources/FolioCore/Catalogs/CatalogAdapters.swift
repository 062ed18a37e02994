// `.strings` and `.po` results in the shape every catalog parser returns.

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
    /// translation are listed untranslated (msgfmt leaves them out); plural entries must have as many
    /// forms as `Plural-Forms` says.
    package static func parseCatalog(_ bytes: [UInt8]) -> ParsedCatalogFile {
        let (file, diagnostics) = parse(bytes)
        var errors = diagnostics
        var messages: [CatalogMessage] = []
        var reportedMissingRule = false
        for entry in file.entries {
            let key = Self.key(context: entry.context, id: entry.id)
            let source: CatalogValue = entry.idPlural.map { .gettextPlural([entry.id, $0]) } ?? .string(entry.id)
            let empty = entry.translations.isEmpty || entry.translations.contains(where: \.isEmpty)
            var value: CatalogValue?
            if !entry.fuzzy && !empty {
                if entry.idPlural != nil {
                    if let rule = file.pluralForms {
                        if entry.translations.count != rule.nplurals {
                            let given = entry.translations.count
                            errors.append(CatalogDiagnostic(
                                line: entry.line, column: 1,
                                message: "msgid \"\(entry.id)\" has \(given) plural form\(given == 1 ? "" : "s") (msgstr[0]…msgstr[\(given - 1)]) but Plural-Forms says nplurals=\(rule.nplurals); give exactly \(rule.nplurals)"))
                        }
                    } else if !reportedMissingRule && file.header["Plural-Forms"] == nil {
                        reportedMissingRule = true
                        errors.append(CatalogDiagnostic(
                            line: entry.line, column: 1,
                            message: "plural entry but the header has no Plural-Forms; add one such as \"Plural-Forms: nplurals=2; plural=(n != 1);\""))
                    }
                    value = .gettextPlural(entry.translations)
                } else {
                    value = .string(entry.translations[0])
                }
            }
            messages.append(CatalogMessage(
                key: key, value: value, source: source,
                comment: entry.comments.isEmpty ? nil : entry.comments.joined(separator: "\n"),
                state: entry.fuzzy ? "fuzzy" : (empty ? "untranslated" : "translated"), line: entry.line, column: 1))
        }
        return ParsedCatalogFile(
            sourceLanguage: nil,
            sections: [CatalogLocaleSection(locale: file.header["Language"] ?? "", messages: messages)],
            errors: errors, pluralForms: file.pluralForms)
    }
}
