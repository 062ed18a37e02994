import FolioLocalization
import FolioPlist
import FolioSupport

/// `[catalogs] partial` in the project file: locales whose partial coverage is a decision, not
/// a mistake. A locale given `"*"` may leave out any key (a regional variant that lists only
/// what it says differently); one given a list may leave out those keys. What it leaves out
/// falls back as always; the coverage warning names only what was not declared.
///
/// ```toml
/// [catalogs.partial]
/// es-419 = "*"                    # only what Latin-American Spanish says differently from es
/// pt-BR = ["sync.summary"]        # two counts in one string: XLIFF cannot carry it
/// ```
package struct PartialCatalogs: Sendable {
    /// One declared locale: the keys it may leave out (nil: any), and where it was declared.
    package struct Locale: Sendable {
        package var keys: Set<String>?
        package var path: String
        package var line: Int
        package var column: Int
    }

    /// By locale tag, as `LocaleTag` writes it (`pt-BR`).
    package var locales: [String: Locale] = [:]

    package init() {}

    /// The missing keys of `locale` that were not declared.
    package func undeclared(_ missing: [String], locale: String) -> [String] {
        guard let declared = locales[locale] else { return missing }
        guard let keys = declared.keys else { return [] }
        return missing.filter { !keys.contains($0) }
    }

    /// Warnings for declarations that no longer hold: a locale without catalogs, a key that is
    /// not in the development language or that the locale now translates.
    package func checkStale(translated: [String: Set<String>], reference: Set<String>, into diags: inout Diagnostics) {
        for (tag, declared) in locales.sorted(by: { $0.key < $1.key }) {
            guard let have = translated[tag] else {
                diags.warning(declared.path, declared.line, declared.column, "catalogs.partial names \(tag), which no catalog translates; remove it")
                continue
            }
            for key in (declared.keys ?? []).sorted() {
                if !reference.contains(key) {
                    diags.warning(declared.path, declared.line, declared.column, "catalogs.partial: \"\(key)\" is not a key of the development language's catalogs; remove it from \(tag)")
                } else if have.contains(key) {
                    diags.warning(declared.path, declared.line, declared.column, "catalogs.partial: \(tag) translates \"\(key)\" now; remove it from the list")
                }
            }
        }
    }
}

extension RuleReader {
    /// Reads `[catalogs]`; every problem is an error at its place in the project file.
    mutating func catalogs(_ value: PlistValue) -> PartialCatalogs {
        var out = PartialCatalogs()
        guard let table = value.dictValue else {
            problem("/catalogs", "catalogs must be a table: write [catalogs.partial] with locale = \"*\" or a list of keys")
            return out
        }
        for key in table.keys.sorted() where key != "partial" {
            problem("/catalogs/\(key)", "unknown catalogs setting '\(key)'; [catalogs] has partial")
        }
        guard let partial = table["partial"] else { return out }
        guard let locales = partial.dictValue else {
            problem("/catalogs/partial", "partial must be a table of locales: es-419 = \"*\" or pt-BR = [\"KEY\", …]")
            return out
        }
        for (name, item) in locales.sorted(by: { $0.key < $1.key }) {
            let pointer = "/catalogs/partial/\(name)"
            guard let tag = LocaleTag(name) else {
                problem(pointer, "'\(name)' is not a valid locale tag (BCP 47, like fr, pt-BR or zh-Hant)")
                continue
            }
            let at = location(pointer)
            var declared = PartialCatalogs.Locale(keys: nil, path: path, line: at.line, column: at.column)
            if item.stringValue == "*" {
                out.locales[tag.description] = declared
            } else if let keys = item.arrayValue?.compactMap(\.stringValue), !keys.isEmpty, keys.count == item.arrayValue?.count {
                declared.keys = Set(keys)
                out.locales[tag.description] = declared
            } else {
                problem(pointer, "\(name) must be \"*\" (any key may be missing) or a list of the keys it leaves out, like [\"sync.summary\"]")
            }
        }
        return out
    }
}
