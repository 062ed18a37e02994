import FolioPlist
import FolioSupport

/// Markdown documents (`.md`, `.markdown`) with optional front matter (`---` YAML or `+++`
/// TOML), compiled to a dictionary of the front matter's keys plus `body`, the Markdown source;
/// plus `html`, rendered by cmark-gfm (``MarkdownHTML``), where the project file's rules ask for it.
package struct DocumentKind: PerFileKind {
    package static let kindName = "document"
    package static let extensions: Set<String> = ["md", "markdown"]
    package var name: String { Self.kindName }

    package init() {}

    package func claims(_ file: SourceFile) -> Bool { Self.extensions.contains(file.fileExtension) }

    package func compile(_ file: SourceFile, _ project: BuildProject, into diags: inout Diagnostics) throws -> CompiledItem? {
        let bytes = try file.read()
        let document: FrontMatterDocument
        do { document = try FrontMatter.split(bytes, nulls: project.file.nulls(for: file.relativePath)) } catch {
            diags.error(file.fullPath, error.line, error.column, error.message)
            return nil
        }
        let html = project.file.html(for: file.relativePath)
        var value = document.matter
        for key in ["body"] + (html ? ["html"] : []) where value[key] != nil {
            let at = FrontMatter.locate("/" + key, in: bytes) ?? SourceLocation(line: 1, column: 1)
            diags.error(file.fullPath, at.line, at.column, "the front matter key '\(key)' is reserved for the document's \(key == "body" ? "Markdown" : "HTML"); rename it")
            return nil
        }
        value["body"] = .string(document.body)
        if html { value["html"] = .string(MarkdownHTML.render(document.body)) }
        let dict = PlistValue.dict(value)
        SchemaCheck.check(dict, file: file, project: project.file, locate: { FrontMatter.locate($0, in: bytes) }, into: &diags)
        return CompiledItem(path: SchemaCheck.plistPath(file.relativePath), plist: dict, kind: name, sources: [file.fullPath])
    }
}
