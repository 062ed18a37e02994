import FolioLocalization
import FolioPlist

/// `content/catalogs/`: string catalogs in five formats, compiled per table and locale to
/// `catalogs/<locale>/<Table>.plist`, with `catalogs/index.plist`.
package struct CatalogKind: ContentKind {
    package var name: String { "catalog" }

    package init() {}

    package func claims(_ file: SourceFile) -> Bool { file.topFolder == CatalogSources.folder }

    package func parse(_ files: [SourceFile], _ project: BuildProject, into diags: inout Diagnostics) throws -> any ParsedContent {
        let sources = try CatalogSources.load(files, contentDir: project.config.contentDir, into: &diags)
        let output = CatalogSources.compile(
            sources, developmentLanguage: project.config.developmentLanguage, partial: project.file.partialCatalogs, into: &diags)
        return ParsedCatalogs(output: output, kind: name, sources: sources.map(\.path))
    }
}

/// Compiled catalogs, and their format and plural checks (run while everything is encoded).
private struct ParsedCatalogs: ParsedContent {
    var output: CatalogOutput?
    var kind: String
    var sources: [String]

    func check() -> Diagnostics { output?.check(parallel: false) ?? Diagnostics() }

    func compile() -> [CompiledItem] {
        guard let output else { return [] }
        var items = output.catalogs.map { catalog in
            CompiledItem(
                path: CompiledCatalog.path(table: catalog.table, locale: catalog.locale), plist: catalog.plist, kind: kind,
                locale: catalog.locale, sources: sources)
        }
        items.append(CompiledItem(path: CatalogIndex.path, plist: output.index.plist, kind: "index", sources: sources))
        return items
    }
}
