import FolioPlist
import FolioPublished
import FolioSupport

/// The project file's light indexes: chosen fields of each structured entry a rule matches,
/// in one small array sorted by a field (like `sonnets/index.plist`).
package enum IndexBuilder {
    /// One index item per matched entry: `path` (its logical path) and the fields it has.
    package static func build(
        _ indexes: [(index: ProjectFile.IndexRule, rule: ProjectFile.Rule)], items: [CompiledItem], contentDir: String,
        root: String, into diags: inout Diagnostics
    ) -> [CompiledItem] {
        var out: [CompiledItem] = []
        for (index, rule) in indexes {
            var rows: [(path: String, value: [String: PlistValue])] = []
            var sources: [String] = []
            for item in items where item.kind == DataKind.kindName || item.kind == DocumentKind.kindName {
                guard let source = item.sources.first, rule.matches(relative(source, contentDir)) else { continue }
                guard let value = Self.value(item, root: root)?.dictValue else { continue }
                var row: [String: PlistValue] = ["path": .string(item.path)]
                for field in index.fields { row[field] = value[field] }
                rows.append((item.path, row))
                sources.append(source)
            }
            rows.sort { a, b in
                if let key = index.sortBy {
                    let (x, y) = (a.value[key], b.value[key])
                    if (x == nil) != (y == nil) { return y == nil }  // items without the field come last
                    if let order = compare(x, y), order != 0 { return index.descending ? order > 0 : order < 0 }
                }
                return a.path < b.path
            }
            if let key = index.sortBy, rows.contains(where: { $0.value[key] == nil }) {
                diags.warning(contentDir + "/" + ContentTree.projectFile, 1, 1, "index \(index.path): some items have no '\(key)' to sort by; they come last")
            }
            var item = CompiledItem(path: index.path, plist: .array(rows.map { .dict($0.value) }), kind: "index", sources: sources)
            item.ruleCache = rule.cache
            out.append(item)
        }
        return out
    }

    static func relative(_ full: String, _ contentDir: String) -> String {
        full.hasPrefix(contentDir + "/") ? String(full.dropFirst(contentDir.count + 1)) : full
    }

    /// The item's value: compiled now, or read back from the object of the last publish.
    private static func value(_ item: CompiledItem, root: String) -> PlistValue? {
        switch item.body {
        case .plist(let value): return value
        case .bytes, .file: return nil
        case .reused(let entry):
            guard let bytes = try? FileIO.read(PublishedLayout.path(root, entry.objectPath)), entry.matches(bytes) else { return nil }
            return try? BinaryPlist.decode(bytes)
        }
    }

    /// -1, 0, 1 for values of one comparable type; nil for missing or mixed types.
    private static func compare(_ a: PlistValue?, _ b: PlistValue?) -> Int? {
        switch (a, b) {
        case (.string(let x)?, .string(let y)?): return x < y ? -1 : (x == y ? 0 : 1)
        case (.date(let x)?, .date(let y)?): return x < y ? -1 : (x == y ? 0 : 1)
        default:
            guard let x = a?.numberValue, let y = b?.numberValue else { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        }
    }
}

extension PlistValue {
    /// The value as a Double, for an integer or real.
    fileprivate var numberValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .real(let r): return r
        default: return nil
        }
    }
}
