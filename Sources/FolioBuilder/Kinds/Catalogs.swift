import FolioCatalogs
import FolioLocalization
import FolioSupport
import FolioToolSupport
import Foundation

/// A source format the Builder reads under `content/catalogs/`.
package typealias CatalogFormat = CatalogFileFormat

extension CatalogFileFormat {
    /// Whether one file carries several locales (and so sits directly in `catalogs/`).
    package var isMultiLocale: Bool { self == .xcstrings || self == .xliff }
}

/// One catalog source file as found on disk.
package struct CatalogSourceFile: Sendable {
    package var path: String
    package var format: CatalogFormat
    /// The table: the file name up to its first dot.
    package var table: String
    /// The locale of its folder (single-locale formats).
    package var folderLocale: LocaleTag?
    package var bytes: [UInt8]
}

/// What the catalog steps produce: the compiled catalogs, and the format and plural checks on
/// their messages, which the Builder runs while it encodes and compresses the catalogs (the
/// published bytes do not depend on them; a failed check only stops the publish).
package struct CatalogOutput: Sendable {
    package var catalogs: [CompiledCatalog]
    package var index: CatalogIndex
    package var checks: [CatalogCheck]

    /// Runs every check; large tables are checked in parts on all cores when `parallel`.
    package func check(parallel: Bool) -> Diagnostics {
        let parts = checks.flatMap { $0.parts(parallel ? Parallel.cores : 1) }
        var diags = Diagnostics()
        for found in Parallel.map(parts, { $0.run() }) { diags.append(found) }
        return diags
    }
}

/// The checks on one table in one locale (or a part of it): each message against its source.
package struct CatalogCheck: Sendable {
    package var table: String
    package var locale: LocaleTag
    package var isDevelopment: Bool
    package var reference: CatalogSources.LocaleTable?
    package var rules: PluralRules
    package var messages: ArraySlice<CatalogSources.Located>

    /// This check cut into up to `count` parts of at least 1,024 messages.
    package func parts(_ count: Int) -> [CatalogCheck] {
        let size = max(1024, (messages.count + count - 1) / max(count, 1))
        guard messages.count > size else { return [self] }
        return stride(from: messages.startIndex, to: messages.endIndex, by: size).map { start in
            var part = self
            part.messages = messages[start..<min(start + size, messages.endIndex)]
            return part
        }
    }

    package func run() -> Diagnostics {
        var found = Diagnostics()
        for located in messages {
            guard let value = located.message.value else { continue }
            let key = located.message.key
            // The development language's text for the key; else the file's own source text (a
            // gettext msgid, an XLIFF source, an xcstrings key with no source-language text).
            let fileSource = located.message.source
            // The development language has no reference but its own files' source text (a
            // classic gettext msgid), which msgfmt --check compares too.
            let source = isDevelopment ? fileSource : (reference?.message(key)?.message.value ?? fileSource)
            // Xcode writes a String Catalog's keys from the code's interpolations (`%lld`, `%@`): the
            // key says which arguments the app passes, whatever the source-language text leaves out.
            let keyFormat = located.path.hasSuffix(".xcstrings") && key.utf8.contains(UInt8(ascii: "%")) ? key : nil
            Validation.check(
                value, source: source, keyFormat: keyFormat, format: located.message.format, locale: locale,
                rules: rules, at: located, into: &found)
        }
        return found
    }
}

/// Finding, validating and compiling `content/catalogs/`.
package enum CatalogSources {
    package static let folder = "catalogs"

    /// Table names: letters, digits, `_` and `-`, starting with a letter or digit.
    package static func isValidTable(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || ("0"..."9").contains(first) else {
            return false
        }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
    }

    /// Reads the catalog files under `catalogs/`: multi-locale files (.xcstrings, XLIFF) at the
    /// top, single-locale ones in a locale folder; problems with names and places become diagnostics.
    package static func load(_ sources: [SourceFile], contentDir: String, into diags: inout Diagnostics) throws -> [CatalogSourceFile] {
        let root = contentDir + "/" + folder
        var files: [CatalogSourceFile] = []
        var badFolders = Set<String>()
        for source in sources {
            let parts = source.relativePath.split(separator: "/").dropFirst().map(String.init)
            let name = parts.last ?? ""
            if parts.count == 2 {
                let folderName = parts[0].hasSuffix(".lproj") ? String(parts[0].dropLast(6)) : parts[0]
                guard let tag = LocaleTag(folderName) else {
                    if badFolders.insert(parts[0]).inserted {
                        diags.error(root + "/" + parts[0], 1, 1, "'\(parts[0])' is not a locale: name locale folders with a BCP 47 tag or POSIX locale, like fr, pt-BR, pt_BR, zh-Hans or sr@latin")
                    }
                    continue
                }
                guard let format = CatalogFormat(fileName: name), !format.isMultiLocale else {
                    diags.error(source.fullPath, 1, 1, "unexpected file in a locale folder: expected <Table>.strings, <Table>.stringsdict or <Table>.po (.xcstrings and XLIFF files go directly in \(root))")
                    continue
                }
                try add(source.fullPath, name, format, tag)
            } else {
                guard parts.count == 1, let format = CatalogFormat(fileName: name), format.isMultiLocale else {
                    diags.error(source.fullPath, 1, 1, "unexpected file in \(root): only .xcstrings and XLIFF (.xliff, .xlf) files sit here; .strings, .stringsdict and .po files go in a locale folder such as \(root)/fr/")
                    continue
                }
                try add(source.fullPath, name, format, nil)
            }
        }
        func add(_ path: String, _ name: String, _ format: CatalogFormat, _ locale: LocaleTag?) throws {
            let table = String(name.prefix { $0 != "." })
            guard isValidTable(table) else {
                diags.error(path, 1, 1, "'\(table)' is not a valid table name: use letters, digits, '_' and '-', like Localizable")
                return
            }
            files.append(CatalogSourceFile(path: path, format: format, table: table, folderLocale: locale, bytes: try FileIO.read(path)))
        }
        return files
    }

    /// One key of one locale's table, with where it came from.
    package struct Located: Sendable {
        package var message: CatalogMessage
        package var path: String
        package var position: String { "\(path):\(message.line):\(message.column)" }
    }

    /// Everything known about one table in one locale.
    package struct LocaleTable: Sendable {
        package var locale: LocaleTag
        package var table: String
        /// The messages in the order they were read (files in path order, then file order).
        package var messages: [Located] = []
        /// Where each key stands in `messages`.
        package var positions: [String: Int] = [:]
        package var pluralForms: PluralFormsExpression?
        package var pluralFormsPath: String?
        package var firstPath: String

        package func message(_ key: String) -> Located? { positions[key].map { messages[$0] } }
    }

    package struct TableKey: Hashable, Comparable {
        package var locale: String
        package var table: String
        package static func < (a: TableKey, b: TableKey) -> Bool { (a.table, a.locale) < (b.table, b.locale) }
    }

    /// Parses, merges and compiles, reporting what the files and their coverage show; the format
    /// and plural checks are left to ``CatalogOutput/check(parallel:)``. nil when there are no
    /// catalogs; the output is only to be published when no error was reported.
    package static func compile(
        _ files: [CatalogSourceFile], developmentLanguage devText: String, partial: PartialCatalogs = PartialCatalogs(), into diags: inout Diagnostics
    ) -> CatalogOutput? {
        guard !files.isEmpty else { return nil }
        guard let dev = LocaleTag(devText) else {
            diags.error(files[0].path, 1, 1, "the development language '\(devText)' is not a valid locale tag")
            return nil
        }
        var tables: [TableKey: LocaleTable] = [:]
        let results = Parallel.map(files) { $0.format.parse($0.bytes) }
        for (file, parsed) in zip(files, results) {
            for e in parsed.errors { diags.error(file.path, e.line, e.column, e.message) }
            for w in parsed.warnings { diags.warning(file.path, w.line, w.column, w.message) }
            if let declared = parsed.sourceLanguage {
                if let tag = LocaleTag(declared) {
                    if tag != dev {
                        diags.error(file.path, 1, 1, "the file's source language is \(tag) but the development language is \(dev); make them agree (folio-build --development-language)")
                    }
                } else {
                    diags.error(file.path, 1, 1, "the source language '\(declared)' is not a valid locale tag")
                }
            }
            for section in parsed.sections {
                let locale: LocaleTag
                if let folder = file.folderLocale {
                    locale = folder
                    if !section.locale.isEmpty, let said = LocaleTag(section.locale), said != folder {
                        diags.warning(file.path, section.line, section.column, "the file says its language is \(said) but its folder says \(folder); the folder wins")
                    }
                } else {
                    guard let tag = LocaleTag(section.locale) else {
                        diags.error(file.path, section.line, section.column, section.locale.isEmpty
                            ? "no target language: name it in the file (XLIFF target-language / trgLang)"
                            : "'\(section.locale)' is not a valid locale tag (BCP 47, like fr, pt-BR or zh-Hant)")
                        continue
                    }
                    locale = tag
                }
                let key = TableKey(locale: locale.description, table: file.table)
                var table = tables[key] ?? LocaleTable(locale: locale, table: file.table, firstPath: file.path)
                if let rule = parsed.pluralForms {
                    if let existing = table.pluralForms, existing.text != rule.text, let other = table.pluralFormsPath {
                        diags.error(file.path, 1, 1, "Plural-Forms \"\(rule.text)\" disagrees with \"\(existing.text)\" in \(other) for the same locale \(locale)")
                    } else {
                        table.pluralForms = rule
                        table.pluralFormsPath = file.path
                    }
                }
                table.messages.reserveCapacity(table.messages.count + section.messages.count)
                table.positions.reserveCapacity(table.messages.count + section.messages.count)
                for var message in section.messages {
                    if message.value?.hasSubstitutions == true { message.value = message.value?.resolvingXcodeArgPlaceholders }
                    if message.source?.hasSubstitutions == true { message.source = message.source?.resolvingXcodeArgPlaceholders }
                    let located = Located(message: message, path: file.path)
                    // One hash lookup for the usual case; a duplicate puts the first one back.
                    if let first = table.positions.updateValue(table.messages.count, forKey: message.key) {
                        table.positions[message.key] = first
                        diags.error(file.path, message.line, message.column, "duplicate key \"\(message.key)\" for \(locale)/\(file.table): first defined at \(table.messages[first].position); keep one")
                        continue
                    }
                    table.messages.append(located)
                }
                tables[key] = table
            }
        }

        // The development language's tables are the reference for every other locale.
        var reference: [String: LocaleTable] = [:]
        for (key, table) in tables where key.locale == dev.description { reference[key.table] = table }
        let tableNames = Set(tables.keys.map(\.table)).sorted()
        for name in tableNames where reference[name] == nil {
            let somewhere = tables.first { $0.key.table == name }!.value.firstPath
            diags.error(somewhere, 1, 1, "table \(name) has no catalog in the development language \(dev); add one (e.g. \(folder)/\(dev)/\(name).strings)")
        }

        var catalogs: [CompiledCatalog] = []
        var checks: [CatalogCheck] = []
        var coverage: [String: [String: CatalogIndex.Coverage]] = [:]
        var translatedKeys: [String: Set<String>] = [:]
        for key in tables.keys.sorted() {
            let table = tables[key]!
            let ref = reference[key.table]
            let isDev = key.locale == dev.description
            let rules = PluralRules(tag: table.locale)
            var strings: [String: CatalogValue] = [:]
            strings.reserveCapacity(table.messages.count)
            // Keys translated here that have a translation in the development language (all of
            // them, in the development language itself).
            var translated = 0
            for located in table.messages {
                guard let value = located.message.value else { continue }
                let name = located.message.key
                if isDev {
                    translated += 1
                } else if let ref {
                    if let refMessage = ref.message(name) {
                        if refMessage.message.value != nil { translated += 1 }
                    } else if located.path.hasSuffix(".xcstrings") {
                        // Xcode shows such a key itself as the source-language text.
                        diags.warning(located.path, located.message.line, located.message.column, "key \"\(name)\" has no \(dev) value in \(key.table) (Xcode shows the key itself in \(dev)); \(key.locale) publishes its translation, locales without one get nothing for it")
                    } else {
                        diags.warning(located.path, located.message.line, located.message.column, "key \"\(name)\" is not in the development language's \(key.table); it is published but no other locale has it")
                    }
                }
                let (kept, dropped) = Validation.pruned(value, rules: rules)
                if !dropped.isEmpty {
                    let names = dropped.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                    diags.warning(located.path, located.message.line, located.message.column, "\"\(name)\": plural \(dropped.count == 1 ? "category" : "categories") \(names) not used in \(key.locale) (CLDR: \(rules.categories.map(\.rawValue).joined(separator: ", "))); left out of the published catalog, as Xcode ignores \(dropped.count == 1 ? "it" : "them")")
                }
                strings[name] = kept
            }
            checks.append(CatalogCheck(
                table: key.table, locale: table.locale, isDevelopment: isDev, reference: ref,
                rules: rules, messages: table.messages[...]))
            if strings.isEmpty {
                diags.warning(table.firstPath, 1, 1, "\(key.locale)/\(key.table) has no translated keys; nothing is published for it")
                continue
            }
            let total = isDev ? strings.count : (ref?.messages.count { $0.message.value != nil } ?? strings.count)
            if ref == nil { translated = strings.count }
            coverage[key.locale, default: [:]][key.table] = CatalogIndex.Coverage(translated: translated, total: total)
            if translated < total, let ref {
                warnCoverage(table, key, ref: ref, strings: strings, coverage: coverage[key.locale]![key.table]!, partial: partial, into: &diags)
            }
            translatedKeys[key.locale, default: []].formUnion(strings.keys)
            catalogs.append(CompiledCatalog(
                table: key.table, locale: key.locale,
                pluralForms: strings.values.contains(where: Validation.usesGettext) ? table.pluralForms?.text : nil,
                strings: strings))
        }
        let referenceKeys = Set(reference.values.flatMap { $0.messages.map(\.message.key) })
        partial.checkStale(translated: translatedKeys, reference: referenceKeys, into: &diags)
        let index = CatalogIndex(
            developmentLanguage: dev.description, tables: tableNames,
            locales: Set(catalogs.map(\.locale)).sorted(), coverage: coverage)
        return CatalogOutput(catalogs: catalogs, index: index, checks: checks)
    }

    /// The coverage warning of a table that leaves keys out, naming those the project file's
    /// `[catalogs.partial]` did not declare (none: no warning).
    static func warnCoverage(
        _ table: LocaleTable, _ key: TableKey, ref: LocaleTable, strings: [String: CatalogValue], coverage: CatalogIndex.Coverage,
        partial: PartialCatalogs, into diags: inout Diagnostics
    ) {
        let missing = ref.messages.map(\.message).filter { $0.value != nil && strings[$0.key] == nil }.map(\.key).sorted()
        let undeclared = partial.undeclared(missing, locale: key.locale)
        guard !undeclared.isEmpty else { return }
        let shown = undeclared.prefix(5).joined(separator: ", ") + (undeclared.count > 5 ? ", …" : "")
        let hint = partial.locales[key.locale] == nil
            ? "; translate them, or declare them in the project file's [catalogs.partial]"
            : " (not declared in [catalogs.partial])"
        diags.warning(
            table.firstPath, 1, 1,
            "\(key.locale)/\(key.table): \(coverage.translated) of \(coverage.total) keys translated (\(coverage.percent)%); untranslated, falling back: \(shown)\(hint)")
    }
}

/// The checks on one translated value.
///
/// Severity follows what would go wrong at run time, as Xcode and `msgfmt -c` see it: reading an
/// argument as another type than the source passes it, reading one it does not pass, a malformed
/// specifier, a plural without `other` are errors; leaving an argument out is a warning (Xcode,
/// `String(localized:)` and gettext accept it). gettext entries are checked by their format flag.
package enum Validation {
    package static func usesGettext(_ value: CatalogValue) -> Bool {
        switch value {
        case .gettextPlural: true
        case .device(let d): d.values.contains(where: usesGettext)
        default: false
        }
    }

    /// The text whose specifiers stand for the value's arguments: the `other` form of a plural,
    /// and a substitution format with each `%#@name@` replaced by its count's specifier.
    package static func referenceText(_ value: CatalogValue) -> String? {
        switch value {
        case .string(let s): return s
        case .plural(let v): return v[.other]
        case .gettextPlural(let forms): return forms.last
        case .device(let d): return (d["other"] ?? d.sorted { $0.key < $1.key }.first?.value).flatMap(referenceText)
        case .substitutions(let format, let variables): return expandTokens(format, variables)
        }
    }

    /// A substitution format with each `%#@name@` (or positional `%2$#@name@`) token replaced by
    /// `%<specifier>`, positional when the token or the variable says. A format that does not parse
    /// is returned as it is.
    package static func expandTokens(_ format: String, _ variables: [String: PluralSubstitution]) -> String {
        guard let specs = try? FormatSpecifier.parse(format) else { return format }
        var out = ""
        var rest = Substring(format)
        var consumed = 0  // characters of `format` already copied or replaced
        for spec in specs {
            guard let name = spec.variable else { continue }
            out += rest.prefix(spec.offset - consumed)
            rest = rest.dropFirst(spec.offset - consumed + spec.text.count)
            consumed = spec.offset + spec.text.count
            if let v = variables[name] {
                out += "%" + ((spec.argument ?? v.argument).map { "\($0)$" } ?? "") + v.formatSpecifier
            } else {
                out += "%@"
            }
        }
        return out + rest
    }

    /// Whether `a` and `b` have the same specifiers as written, in the same order (`%%` left
    /// out): a cheap test for compatibility before the full comparison, made without allocating.
    package static func sameSpecifiers(_ a: String, _ b: String) -> Bool {
        var x = SpecifierBytes(a.utf8.makeIterator())
        var y = SpecifierBytes(b.utf8.makeIterator())
        while true {
            let p = x.next()
            guard p == y.next() else { return false }
            if p == nil { return true }
        }
    }

    /// The specifiers of a string as a stream of bytes: each one as written from its `%`, then a
    /// 0 after its conversion character; a dangling `%` or unfinished specifier ends it with `!`.
    package struct SpecifierBytes: IteratorProtocol {
        package var bytes: String.UTF8View.Iterator
        package var inSpec = false
        package var afterPercent = false
        /// Bytes decided but not yet returned (a specifier's byte, its closing 0).
        package var first: UInt8?
        package var second: UInt8?
        package var finished = false

        package init(_ bytes: String.UTF8View.Iterator) { self.bytes = bytes }

        package mutating func next() -> UInt8? {
            if let q = first {
                first = second
                second = nil
                return q
            }
            while let b = bytes.next() {
                if afterPercent {
                    afterPercent = false
                    if b == UInt8(ascii: "%") { continue }
                    inSpec = true
                    first = b
                    if ends(b) { second = 0 }
                    return UInt8(ascii: "%")
                } else if !inSpec {
                    if b == UInt8(ascii: "%") { afterPercent = true }
                    continue
                }
                if ends(b) { first = 0 }
                return b
            }
            guard !finished else { return nil }
            finished = true
            return afterPercent || inSpec ? UInt8(ascii: "!") : nil  // a dangling % never matches quietly
        }

        /// Whether `b`, inside a specifier, is its conversion character (the specifier ends).
        private mutating func ends(_ b: UInt8) -> Bool {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "$"), UInt8(ascii: "#"), UInt8(ascii: "."),
                UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: " "), UInt8(ascii: "'"),
                UInt8(ascii: "h"), UInt8(ascii: "l"), UInt8(ascii: "q"), UInt8(ascii: "L"), UInt8(ascii: "z"),
                UInt8(ascii: "j"), UInt8(ascii: "t"):
                return false
            default:
                inSpec = false
                return true
            }
        }
    }

    // MARK: - Arguments (Apple and C formats)

    /// One argument a text reads: its 1-based index among the call's arguments, its kind, and how it
    /// is written (for messages).
    package struct Use {
        package var index: Int
        package var kind: FormatSpecifier.Kind
        package var described: String
    }

    /// The arguments `text` reads, by index among the call's arguments. Positional specifiers name
    /// theirs; sequential ones (and `*` widths) count from `base` (1 for a whole string; a plural
    /// variable's own argument inside its variants, as the variants are formatted). A `%#@name@`
    /// token reads its variable's argument (the token's position, else the variable's `argNum`,
    /// else the next) as the variable's specifier.
    package static func uses(
        _ text: String, variables: [String: PluralSubstitution] = [:], base: Int = 1
    ) throws(FormatSpecifierError) -> [Use] {
        let specs = try FormatSpecifier.parse(text)
        var next = base
        var out: [Use] = []
        func take(_ explicit: Int?) -> Int {
            if let explicit { return explicit }
            defer { next += 1 }
            return next
        }
        for spec in specs {
            switch spec.widthAmount {
            case .nextArgument: out.append(Use(index: take(nil), kind: .int, described: "the * width of \(spec.text)"))
            case .argument(let k): out.append(Use(index: k, kind: .int, described: "the * width of \(spec.text)"))
            case .fixed, nil: break
            }
            switch spec.precisionAmount {
            case .nextArgument: out.append(Use(index: take(nil), kind: .int, described: "the * precision of \(spec.text)"))
            case .argument(let k): out.append(Use(index: k, kind: .int, described: "the * precision of \(spec.text)"))
            case .fixed, nil: break
            }
            if let name = spec.variable {
                let index = take(spec.argument)
                let v = variables[name]
                let resolved = spec.argument == nil ? (v?.argument ?? index) : index
                let kind = v.flatMap { (try? FormatSpecifier.parse("%" + $0.formatSpecifier))?.first?.kind } ?? .variable
                out.append(Use(index: resolved, kind: kind, described: spec.text))
            } else {
                out.append(Use(index: take(spec.argument), kind: spec.kind, described: spec.text))
            }
        }
        return out
    }

    /// Each variable's argument index in `format` (as ``uses(_:variables:base:)`` reads it).
    package static func variableArguments(_ format: String, _ variables: [String: PluralSubstitution]) -> [String: Int] {
        guard let specs = try? FormatSpecifier.parse(format) else { return [:] }
        var next = 1
        var found: [String: Int] = [:]
        for spec in specs {
            let index = spec.argument ?? next
            if spec.argument == nil { next += 1 }
            if let name = spec.variable { found[name] = spec.argument ?? variables[name]?.argument ?? index }
        }
        return found
    }

    /// Every text of a value with the variables and base its specifiers are read with.
    package static func texts(_ value: CatalogValue) -> [(text: String, variables: [String: PluralSubstitution], base: Int)] {
        switch value {
        case .string(let s): return [(s, [:], 1)]
        case .plural(let v): return PluralCategory.allCases.compactMap { v[$0] }.map { ($0, [:], 1) }
        case .gettextPlural(let forms): return forms.map { ($0, [:], 1) }
        case .device(let d): return d.keys.sorted().flatMap { texts(d[$0]!) }
        case .substitutions(let format, let variables):
            let bases = variableArguments(format, variables)
            var all: [(String, [String: PluralSubstitution], Int)] = [(format, variables, 1)]
            for name in variables.keys.sorted() {
                for category in PluralCategory.allCases {
                    if let text = variables[name]!.variants[category] { all.append((text, [:], bases[name] ?? 1)) }
                }
            }
            return all
        }
    }

    /// The arguments the source passes, by index: what the source value's texts (and, for an
    /// Xcode String Catalog, the key, which Xcode writes from the code's interpolations) read. nil
    /// when a source text is malformed or reads one argument as two types: then, as `msgfmt -c`
    /// does, the translation is not compared.
    package static func signature(of source: CatalogValue?, keyFormat: String?) -> [Int: Use]? {
        var signature: [Int: Use] = [:]
        var sources = source.map(texts) ?? []
        if let keyFormat, let keyUses = try? uses(keyFormat), !keyUses.isEmpty { sources.append((keyFormat, [:], 1)) }
        guard !sources.isEmpty else { return nil }
        for (text, variables, base) in sources {
            guard let found = try? uses(text, variables: variables, base: base) else { return nil }
            for use in found {
                if let known = signature[use.index] {
                    if known.kind != use.kind && known.kind != .variable && use.kind != .variable { return nil }
                    if known.kind == .variable { signature[use.index] = use }
                } else {
                    signature[use.index] = use
                }
            }
        }
        return signature
    }

    // MARK: - Checking

    package static func check(
        _ value: CatalogValue, source: CatalogValue?, keyFormat: String?, format: FormatLanguage, locale: LocaleTag,
        rules: PluralRules, at place: CatalogSources.Located, into diags: inout Diagnostics
    ) {
        let path = place.path, line = place.message.line, column = place.message.column
        let key = place.message.key
        func error(_ message: String) { diags.error(path, line, column, "\"\(key)\": \(message)") }
        func warning(_ message: String) { diags.warning(path, line, column, "\"\(key)\": \(message)") }
        func checkCategories(_ variants: PluralVariants, label: String) {
            // Categories the locale does not use were left out when the catalog was compiled (with a warning).
            let allowed = rules.categories
            let list = allowed.map(\.rawValue).joined(separator: ", ")
            if variants[.other] == nil {
                error("\(label)plural variants need 'other' (CLDR categories for \(locale): \(list))")
                return
            }
            let missing = allowed.filter { variants[$0] == nil && $0 != .other }
            if !missing.isEmpty {
                warning("\(label)\(locale) distinguishes \(list); \(missing.map(\.rawValue).joined(separator: ", ")) fall back to 'other'")
            }
        }
        func categories(_ value: CatalogValue) {
            switch value {
            case .plural(let v): checkCategories(v, label: "")
            case .substitutions(_, let variables):
                for name in variables.keys.sorted() { checkCategories(variables[name]!.variants, label: "%#@\(name)@ ") }
            case .device(let d): for name in d.keys.sorted() { categories(d[name]!) }
            case .string, .gettextPlural: break
            }
        }
        categories(value)

        switch format {
        case .unchecked:
            return
        case .python, .pythonBrace:
            guard let source else { return }
            let compare = format == .python ? PythonPercentFormat.compare : PythonBraceFormat.compare
            let label = format == .python ? "python-format: " : "python-brace-format: "
            let forms: [String]
            switch value {
            case .gettextPlural(let f): forms = f
            default: forms = referenceText(value).map { [$0] } ?? []
            }
            let reference: String?
            switch source {
            case .gettextPlural(let ids): reference = ids.last
            default: reference = referenceText(source)
            }
            guard let reference else { return }
            for (i, form) in forms.enumerated() {
                let isLast = i == forms.count - 1
                if let m = compare(reference, form, !isLast) {
                    let where_ = forms.count > 1 ? "msgstr[\(i)] " : ""
                    m.isOmission ? warning(label + where_ + m.message) : error(label + where_ + m.message)
                }
            }
        case .apple, .c:
            // The common cases, decided without parsing: the source's very specifiers (or none on
            // either side), in a plain string or in every gettext form.
            if keyFormat == nil, let source {
                switch (value, source) {
                case (.string(let s), .string(let r)) where sameSpecifiers(r, s): return
                case (.gettextPlural(let forms), .gettextPlural(let ids)):
                    if let last = ids.last, ids.allSatisfy({ sameSpecifiers(last, $0) }), forms.allSatisfy({ sameSpecifiers(last, $0) }) {
                        return
                    }
                default: break
                }
            }
            guard let signature = signature(of: source, keyFormat: keyFormat) else { return }
            checkArguments(value, signature: signature, error: error, warning: warning)
        }
    }

    /// The Apple/C comparison of every text of `value` against the arguments the source passes.
    package static func checkArguments(
        _ value: CatalogValue, signature: [Int: Use], error: (String) -> Void, warning: (String) -> Void
    ) {
        if case .device(let d) = value {
            for name in d.keys.sorted() { checkArguments(d[name]!, signature: signature, error: error, warning: warning) }
            return
        }
        var used = Set<Int>()
        /// Checks one text; its argument indices count toward `used` when `counts`.
        func checkText(_ text: String, variables: [String: PluralSubstitution], base: Int, label: String, counts: Bool) {
            let found: [Use]
            do throws(FormatSpecifierError) {
                found = try uses(text, variables: variables, base: base)
            } catch let problem {
                error("\(label)the translation has an invalid format specifier: \(problem.message)")
                return
            }
            for use in found {
                guard let ours = signature[use.index] else {
                    let count = signature.keys.max() ?? 0
                    error("\(label)format specifiers do not match the source: \(use.described) reads argument \(use.index), but the source passes \(count == 0 ? "none" : "\(count)")")
                    continue
                }
                if ours.kind != use.kind && ours.kind != .variable && use.kind != .variable {
                    // "% publicacions" is the specifier "% p": a percent sign meant as text.
                    let hint = use.described.hasPrefix("% ") ? " (a percent sign meant as text is written %%)" : ""
                    error("\(label)format specifiers do not match the source: the translation uses \(use.described) for argument \(use.index) where the source uses \(ours.described)\(hint)")
                }
                if counts { used.insert(use.index) }
            }
        }
        switch value {
        case .string(let s):
            checkText(s, variables: [:], base: 1, label: "", counts: true)
        case .plural(let variants):
            for category in PluralCategory.allCases {
                guard let text = variants[category] else { continue }
                checkText(text, variables: [:], base: 1, label: "[\(category.rawValue)] ", counts: category == .other)
            }
        case .gettextPlural(let forms):
            for (i, form) in forms.enumerated() {
                checkText(form, variables: [:], base: 1, label: "msgstr[\(i)] ", counts: i == forms.count - 1)
            }
        case .substitutions(let format, let variables):
            checkText(format, variables: variables, base: 1, label: "", counts: true)
            let bases = variableArguments(format, variables)
            for name in variables.keys.sorted() {
                for category in PluralCategory.allCases {
                    guard let text = variables[name]!.variants[category] else { continue }
                    checkText(text, variables: [:], base: bases[name] ?? 1, label: "%#@\(name)@[\(category.rawValue)] ", counts: category == .other)
                }
            }
        case .device:
            return
        }
        let missing = signature.keys.sorted().filter { !used.contains($0) }
        if !missing.isEmpty {
            let shown = missing.map { "argument \($0) (\(signature[$0]!.described))" }.joined(separator: ", ")
            warning("the translation leaves out \(shown); it is not shown (Xcode and gettext accept this)")
        }
    }

    /// `value` without plural variants for categories `rules` does not use (Xcode ignores them at
    /// run time), and the categories left out. `zero` stays: Foundation uses it for 0 in any language.
    package static func pruned(_ value: CatalogValue, rules: PluralRules) -> (CatalogValue, [PluralCategory]) {
        let allowed = Set(rules.categories).union([.zero, .other])
        func prune(_ variants: PluralVariants) -> (PluralVariants, [PluralCategory]) {
            let dropped = PluralCategory.allCases.filter { variants[$0] != nil && !allowed.contains($0) }
            guard !dropped.isEmpty else { return (variants, []) }
            return (variants.filter { allowed.contains($0.key) }, dropped)
        }
        switch value {
        case .string, .gettextPlural:
            return (value, [])
        case .plural(let v):
            let (kept, dropped) = prune(v)
            return (.plural(kept), dropped)
        case .substitutions(let format, var variables):
            var all: [PluralCategory] = []
            for name in variables.keys.sorted() {
                let (kept, dropped) = prune(variables[name]!.variants)
                variables[name]!.variants = kept
                all += dropped
            }
            return (.substitutions(format: format, variables: variables), Array(Set(all)).sorted { $0.order < $1.order })
        case .device(var d):
            var all: [PluralCategory] = []
            for name in d.keys.sorted() {
                let (kept, dropped) = pruned(d[name]!, rules: rules)
                d[name] = kept
                all += dropped
            }
            return (.device(d), Array(Set(all)).sorted { $0.order < $1.order })
        }
    }
}

extension PluralCategory {
    /// The category's place in CLDR's order (zero, one, two, few, many, other).
    package var order: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}
