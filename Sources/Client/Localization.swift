import ArgumentParser
import FolioCore
import Foundation

/// The reader's locale: `--locale`, else `LC_ALL`, `LC_MESSAGES`, `LANG` (POSIX order); nil for C/POSIX or unset.
enum ReaderLocale {
    /// Rejects a `--locale` that is not a locale tag.
    static func validate(_ option: String?) throws {
        if let option, LocaleTag(option) == nil {
            throw ValidationError("--locale '\(option)' is not a locale: give a BCP 47 tag or POSIX name like fr, pt-BR or es_MX")
        }
    }

    static func requested(_ option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> LocaleTag? {
        if let option { return LocaleTag(option) }
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[name], !value.isEmpty { return LocaleTag(value) }
        }
        return nil
    }
}

/// The catalogs of one version (cache or seed) for one table, resolved for a requested locale.
struct LocalizedTable {
    /// The locale asked for (nil: none, so the development language).
    let requested: LocaleTag?
    /// The locale that answers: the best match among those that publish the table.
    let locale: String
    /// The development language.
    let developmentLanguage: String
    /// The chain of catalogs, best first, ending with the development language.
    let lookup: CatalogLookup
    /// Every locale that publishes the table.
    let available: [String]

    /// Loads `table` from the view's catalogs; nil when the version has no catalogs at all.
    static func load(_ view: ContentView, table: String, requested: LocaleTag?) throws -> LocalizedTable? {
        guard view.manifest.entry(CatalogIndex.path) != nil else { return nil }
        let index: CatalogIndex
        do { index = try CatalogIndex(plist: try view.plist(CatalogIndex.path)) } catch let e as CatalogFormatError {
            throw CLIError("\(CatalogIndex.path): \(e)")
        }
        let available = index.locales(for: table).filter {
            view.manifest.entry(CompiledCatalog.path(table: table, locale: $0)) != nil
        }
        guard !available.isEmpty else {
            throw CLIError("there is no table \(table) in version \(view.manifest.version); tables: \(index.tables.joined(separator: ", "))")
        }
        let tags = available.compactMap(LocaleTag.init)
        let dev = LocaleTag(index.developmentLanguage) ?? tags[0]
        let chosen = LocaleMatcher.lookup(requested.map { [$0] } ?? [], available: tags, developmentLanguage: dev)
        var chain: [String] = []
        for tag in LocaleMatcher.fallbackChain(for: chosen) where available.contains(tag.description) {
            if !chain.contains(tag.description) { chain.append(tag.description) }
        }
        if !chain.contains(chosen.description), available.contains(chosen.description) { chain.insert(chosen.description, at: 0) }
        if !chain.contains(dev.description), available.contains(dev.description) { chain.append(dev.description) }
        var catalogs: [CompiledCatalog] = []
        for locale in chain {
            let path = CompiledCatalog.path(table: table, locale: locale)
            do { catalogs.append(try CompiledCatalog(bytes: try view.bytes(path))) } catch let e as CatalogFormatError {
                throw CLIError("\(path): \(e)")
            }
        }
        return LocalizedTable(
            requested: requested, locale: chain.first ?? dev.description, developmentLanguage: dev.description,
            lookup: CatalogLookup(chain: catalogs), available: available)
    }

    /// Whether the answering locale differs from the one asked for.
    var fellBack: Bool { requested.map { $0.description != locale } ?? false }
}

/// The client's own labels, from the content's `Localizable` catalog when the version has one,
/// else the built-in English.
struct Labels {
    let table: LocalizedTable?

    static let english: [String: String] = [
        "status.offline": "Offline — showing saved copy",
        "status.source.network": "Downloaded from %@",
        "status.source.cache": "Saved copy",
        "status.source.seed": "Copy bundled with the app",
        "status.version": "Version %d",
        "error.notFound": "There is no sonnet %d.",
    ]

    /// Labels for the reader's locale; never fails (a broken catalog falls back to English).
    init(_ view: ContentView, locale: String?) {
        table = try? LocalizedTable.load(view, table: "Localizable", requested: ReaderLocale.requested(locale))
    }

    func text(_ key: String, _ arguments: FormatArgument...) -> String {
        if let found = table?.lookup.string(for: key, arguments: arguments) { return found.text }
        return FormatSpecifier.format(Self.english[key] ?? key, arguments)
    }

    /// "Saved copy · Version 3 · Updated 5 minutes ago", in the reader's language.
    func origin(_ view: ContentView, edge: String) -> String {
        var parts: [String] = []
        switch view.origin {
        case .network: parts.append(text("status.source.network", .string(edge)))
        case .cache: parts.append(text("status.source.cache"))
        case .seed: parts.append(text("status.source.seed"))
        }
        parts.append(text("status.version", .int(Int64(view.manifest.version))))
        if let validatedAt = view.validatedAt, table?.lookup.value(for: "status.updated") != nil {
            let minutes = max(0, Int(Date().timeIntervalSince(validatedAt)) / 60)
            parts.append(text("status.updated", .int(Int64(minutes))))
        }
        return parts.joined(separator: " · ")
    }
}
