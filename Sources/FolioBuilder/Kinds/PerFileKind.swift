import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport

/// A kind that compiles each of its files alone (data, documents, assets): files whose stamp
/// the build cache knows are reused, the others compiled on all cores.
package protocol PerFileKind: ContentKind {
    /// Compiles one file; problems go to `diags`, and nil means it cannot be published.
    func compile(_ file: SourceFile, _ project: BuildProject, into diags: inout Diagnostics) throws -> CompiledItem?
}

extension PerFileKind {
    package func parse(_ files: [SourceFile], _ project: BuildProject, into diags: inout Diagnostics) throws -> any ParsedContent {
        var items: [CompiledItem] = []
        items.reserveCapacity(files.count)
        var fresh: [SourceFile] = []
        // By index, appending each item: a loop over the files copied each, and an array of
        // items per file appended was copied item by item (10,000 of each in a rebuild).
        for i in files.indices {
            guard let entries = project.cache.reuse(files[i]) else {
                fresh.append(files[i])
                continue
            }
            for entry in entries { items.append(CompiledItem(reusing: entry, source: files[i].fullPath)) }
        }
        let results = Parallel.map(fresh) { file in
            var found = Diagnostics()
            let item = Result { try self.compile(file, project, into: &found) }
            return (item, found)
        }
        for (result, found) in results {
            diags.append(found)
            if let item = try result.get() { items.append(item) }
        }
        return CompiledContent(items)
    }
}

/// Checks a structured value against every schema that applies to its source; each violation
/// is an error at the value's `line:col` with its JSON pointer and rule.
package enum SchemaCheck {
    package static func check(
        _ value: PlistValue, file: SourceFile, project: ProjectFile, locate: (String) -> SourceLocation?,
        into diags: inout Diagnostics
    ) {
        for (schema, source) in project.schemas(for: file.relativePath) {
            for v in schema.validate(value) {
                let at = locate(v.pointer) ?? SourceLocation(line: 1, column: 1)
                let pointer = v.pointer.isEmpty ? "the root" : v.pointer
                diags.error(file.fullPath, at.line, at.column, "\(pointer): \(v.message) [schema \(source), \(v.keyword)]")
            }
        }
    }

    /// `home/featured.yaml` → `home/featured.plist`.
    package static func plistPath(_ relativePath: String) -> String {
        guard let dot = relativePath.lastIndex(of: "."), !relativePath[dot...].contains("/") else { return relativePath + ".plist" }
        return relativePath[..<dot] + ".plist"
    }
}

/// Structured data: `.json`, `.yaml`/`.yml`, `.toml` and `.plist` files, each compiled to a
/// binary plist at the same path with `.plist`.
package struct DataKind: PerFileKind {
    package static let kindName = "data"
    package var name: String { Self.kindName }

    package init() {}

    package func claims(_ file: SourceFile) -> Bool { StructuredReader.format(ofExtension: file.fileExtension) != nil }

    package func compile(_ file: SourceFile, _ project: BuildProject, into diags: inout Diagnostics) throws -> CompiledItem? {
        guard let format = StructuredReader.format(ofExtension: file.fileExtension) else { return nil }
        let bytes = try file.read()
        let value: PlistValue
        do { value = try StructuredReader.read(bytes, format: format, nulls: project.file.nulls(for: file.relativePath)) } catch {
            diags.error(file.fullPath, error.line, error.column, error.message)
            return nil
        }
        SchemaCheck.check(value, file: file, project: project.file, locate: { StructuredReader.locate($0, in: bytes, format: format) }, into: &diags)
        return CompiledItem(path: SchemaCheck.plistPath(file.relativePath), plist: value, kind: name, sources: [file.fullPath])
    }
}
