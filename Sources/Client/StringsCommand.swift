import ArgumentParser
import FolioKitCore
import FolioLocalization
import FolioPlist
import Foundation

/// `folio strings [--locale TAG] [--table T] [KEY] [--count N]… [--json]`
struct StringsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strings",
        abstract: "Print a localized string (the plural form for --count), or every string of a table.",
        discussion: """
            The locale defaults from LC_ALL, LC_MESSAGES, then LANG; C, POSIX or none means the development \
            language. When the best match is another locale (a parent such as es-419 for es-MX, or the \
            development language), stderr says which locale answered.
            """)

    @OptionGroup var options: ClientOptions
    @Option(help: "The locale to read (BCP 47 or POSIX, e.g. fr, pt-BR, es_MX).") var locale: String?
    @Option(help: "The table.") var table = "Localizable"
    @Argument(help: "The key to print; every key of the table when omitted.") var key: String?
    @Option(help: "A count that picks a plural form (and fills in %d); repeat it for a string with several plural placeholders, one per placeholder in order.")
    var count: [Int] = []
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Say where the data came from.") var verbose = false
    @Flag(help: "Read only what is on disk (cache or seed).") var offline = false

    func validate() throws { try ReaderLocale.validate(locale) }

    func run() async throws {
        let view = try await resolveView(options, refresh: !offline)
        if verbose { FileHandle.standardError.write(Data("folio: \(view.describe)\n".utf8)) }
        let requested = ReaderLocale.requested(locale)
        guard let localized = try LocalizedTable.load(view, table: table, requested: requested) else {
            throw CLIError("version \(view.manifest.version) (\(view.origin.rawValue)) has no string catalogs")
        }
        let lookup = localized.lookup
        let arguments: [FormatArgument] = count.map { .int(Int64($0)) }
        var notes: [String] = []
        if let requested, localized.fellBack {
            notes.append("no \(table) catalog for \(requested); answering from \(localized.locale)")
        }
        var json: [String: PlistValue] = [
            "result": .string("ok"), "table": .string(table), "locale": .string(localized.locale),
            "fallbackChain": .array(lookup.locales.map { .string($0) }),
            "developmentLanguage": .string(localized.developmentLanguage),
        ]
        if let requested { json["requested"] = .string(requested.description) }
        if let first = count.first { json["count"] = .int(Int64(first)) }
        if count.count > 1 { json["counts"] = .array(count.map { .int(Int64($0)) }) }

        let keys: [String]
        if let key {
            guard let (value, _) = lookup.value(for: key) else {
                throw CLIError("no key \"\(key)\" in \(table) (\(lookup.locales.joined(separator: ", "))); `folio strings --table \(table)` lists every key")
            }
            if let problem = StringCounts.problem(key: key, value: value, given: count.count) { throw CLIError(problem) }
            keys = [key]
        } else {
            keys = lookup.keys
        }
        var entries: [String: PlistValue] = [:]
        var lines: [String] = []
        var borrowed: [String: [String]] = [:]
        for k in keys {
            guard let (value, answeredBy) = lookup.value(for: k) else { continue }
            if answeredBy != localized.locale { borrowed[answeredBy, default: []].append(k) }
            var entry: [String: PlistValue] = ["locale": .string(answeredBy), "value": CompiledCatalog.plist(of: value)]
            if !count.isEmpty || !Self.variesByCount(value) {
                let text = lookup.string(for: k, arguments: arguments)?.text ?? ""
                entry["text"] = .string(text)
                if let first = count.first, let choice = lookup.pluralChoice(for: k, count: first) { entry["plural"] = .string(choice) }
                lines.append(key == nil ? "\(k) = \(ValueText.quoted(text))" : text)
            } else {
                for (label, text) in Self.variants(value) {
                    lines.append(key == nil ? "\(k)[\(label)] = \(ValueText.quoted(text))" : "[\(label)] \(text)")
                }
            }
            entries[k] = .dict(entry)
        }
        for (other, ks) in borrowed.sorted(by: { $0.key < $1.key }) {
            let shown = ks.prefix(3).joined(separator: ", ") + (ks.count > 3 ? ", …" : "")
            notes.append(ks.count == 1 && key != nil
                ? "\"\(ks[0])\" is not translated in \(localized.locale); answering from \(other)"
                : "\(ks.count) key(s) not translated in \(localized.locale) answered from \(other): \(shown)")
        }
        for note in notes { FileHandle.standardError.write(Data("folio: \(note)\n".utf8)) }
        if self.json {
            if let key, let entry = entries[key] {
                json["key"] = .string(key)
                for (k, v) in entry.dictValue ?? [:] { json[k] = v }
            } else {
                json["strings"] = .dict(entries)
            }
            FileHandle.standardOutput.write(Data(try JSONPlist.encode(.dict(json))))
        } else {
            print(lines.joined(separator: "\n"))
        }
    }

    static func variesByCount(_ value: CatalogValue) -> Bool {
        switch value {
        case .string: false
        case .plural, .gettextPlural, .substitutions: true
        case .device(let d): d.values.contains(where: variesByCount)
        }
    }

    /// The forms of a value that varies by count, labelled.
    static func variants(_ value: CatalogValue) -> [(String, String)] {
        switch value {
        case .string(let s): return [("", s)]
        case .plural(let v): return PluralCategory.allCases.compactMap { c in v[c].map { (c.rawValue, $0) } }
        case .gettextPlural(let forms): return forms.enumerated().map { (String($0.offset), $0.element) }
        case .substitutions(let format, let variables):
            var out = [("format", format)]
            for name in variables.keys.sorted() {
                for c in PluralCategory.allCases { if let t = variables[name]!.variants[c] { out.append(("\(name).\(c.rawValue)", t)) } }
            }
            return out
        case .device(let d):
            return d.keys.sorted().flatMap { device in variants(d[device]!).map { ("\(device)\($0.0.isEmpty ? "" : "." + $0.0)", $0.1) } }
        }
    }
}
