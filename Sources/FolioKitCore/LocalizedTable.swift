import FolioLocalization
import Foundation

/// The catalogs of one version (cache or seed) for one table, resolved for a requested locale.
package struct LocalizedTable {
    /// The locale asked for (nil: none, so the development language).
    package let requested: LocaleTag?
    /// The locale that answers: the best match among those that publish the table.
    package let locale: String
    /// The development language.
    package let developmentLanguage: String
    /// The chain of catalogs, best first, ending with the development language.
    package let lookup: CatalogLookup
    /// Every locale that publishes the table.
    package let available: [String]

    /// Loads `table` from the view's catalogs; nil when the version has no catalogs at all.
    package static func load(_ view: ContentView, table: String, requested: LocaleTag?) throws -> LocalizedTable? {
        guard view.manifest.entry(CatalogIndex.path) != nil else { return nil }
        let index: CatalogIndex
        do { index = try CatalogIndex(plist: try view.plist(CatalogIndex.path)) } catch let e as CatalogFormatError {
            throw FolioError(.invalidContent, "\(CatalogIndex.path): \(e)")
        }
        let available = index.locales(for: table).filter {
            view.manifest.entry(CompiledCatalog.path(table: table, locale: $0)) != nil
        }
        guard !available.isEmpty else {
            throw FolioError(.invalidContent, "there is no table \(table) in version \(view.manifest.version); tables: \(index.tables.joined(separator: ", "))")
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
                throw FolioError(.invalidContent, "\(path): \(e)")
            }
        }
        return LocalizedTable(
            requested: requested, locale: chain.first ?? dev.description, developmentLanguage: dev.description,
            lookup: CatalogLookup(chain: catalogs), available: available)
    }

    /// Whether the answering locale differs from the one asked for.
    package var fellBack: Bool { requested.map { $0.description != locale } ?? false }
}
