import FolioPlist
import FolioPublished
import FolioSupport

extension ProjectFile {
    /// Reads `content/folio.toml` and the schema files it names; every problem is a diagnostic
    /// at `folio.toml:line:col`. A missing file gives the defaults.
    package static func load(contentDir: String, into diags: inout Diagnostics) throws -> ProjectFile {
        let path = contentDir + "/" + ContentTree.projectFile
        var project = ProjectFile()
        guard FileIO.exists(path) else { return project }
        let bytes = try FileIO.read(path)
        var fingerprint = bytes
        let value: PlistValue
        do { value = try StructuredReader.read(bytes, format: .toml) } catch {
            diags.error(path, error.line, error.column, error.message)
            return project
        }
        var reader = RuleReader(path: path, bytes: bytes, contentDir: contentDir)
        let known: Set<String> = ["rules", "catalogs"]
        for key in (value.dictValue ?? [:]).keys.sorted() where !known.contains(key) {
            reader.problem("/\(key)", "unknown setting '\(key)'; the project file has [[rules]] tables and [catalogs]")
        }
        if let catalogs = value["catalogs"] { project.partialCatalogs = reader.catalogs(catalogs) }
        for (i, item) in (value["rules"]?.arrayValue ?? []).enumerated() {
            if let rule = reader.rule(item, at: "/rules/\(i)") { project.rules.append(rule) }
        }
        if value["rules"] != nil && value["rules"]?.arrayValue == nil {
            reader.problem("/rules", "'rules' must be an array of tables: write [[rules]]")
        }
        diags.append(reader.diags)
        project.schemaFiles = reader.schemaFiles
        for file in reader.schemaFiles.sorted() { fingerprint += (try? FileIO.read(contentDir + "/" + file)) ?? [] }
        project.fingerprint = ContentHash.sha256Hex(fingerprint)
        return project
    }
}

/// Reads the `[[rules]]` tables (and `[catalogs]`) of a project file, collecting diagnostics.
struct RuleReader {
    let path: String
    let bytes: [UInt8]
    let contentDir: String
    var diags = Diagnostics()
    var schemaFiles: Set<String> = []

    /// Where the value at a JSON pointer stands in the project file.
    func location(_ pointer: String) -> SourceLocation {
        StructuredReader.locate(pointer, in: bytes, format: .toml) ?? SourceLocation(line: 1, column: 1)
    }

    mutating func problem(_ pointer: String, _ message: String) {
        let at = location(pointer)
        diags.error(path, at.line, at.column, message)
    }

    mutating func rule(_ value: PlistValue, at: String) -> ProjectFile.Rule? {
        guard let table = value.dictValue else {
            problem(at, "each [[rules]] entry must be a table")
            return nil
        }
        let known: Set<String> = ["match", "schema", "cache", "minimumAppVersion", "html", "index", "nulls"]
        for key in table.keys.sorted() where !known.contains(key) {
            problem("\(at)/\(key)", "unknown rule setting '\(key)'; a rule has match, schema, cache, minimumAppVersion, html, index and nulls")
        }
        guard let globs = globs(table["match"], at: at + "/match") else { return nil }
        var rule = ProjectFile.Rule(globs: globs)
        if let schema = table["schema"] { loadSchema(schema, at: at + "/schema", into: &rule) }
        if let cache = table["cache"] { rule.cache = self.cache(cache, at: at + "/cache") }
        if let v = table["minimumAppVersion"] {
            if let text = v.stringValue, AppVersion(text) != nil {
                rule.minimumAppVersion = text
            } else {
                problem(at + "/minimumAppVersion", v.stringValue.map(AppVersion.problem) ?? "minimumAppVersion must be a string like \"3.2\"")
            }
        }
        if let html = table["html"] {
            if case .bool(let b) = html { rule.html = b } else { problem(at + "/html", "html must be true or false") }
        }
        if let index = table["index"] { rule.index = self.index(index, globs: globs, at: at + "/index") }
        if let nulls = table["nulls"] { rule.nulls = self.nulls(nulls, at: at + "/nulls") }
        return rule
    }

    mutating func nulls(_ value: PlistValue, at: String) -> NullPolicy? {
        if let text = value.stringValue, let policy = NullPolicy(rawValue: text) { return policy }
        let found = value.stringValue.map { "\"\($0)\"" } ?? "a \(value.typeName)"
        problem(at, "nulls must be \"keep\" (publish null as \"$null\"), \"omit\" (leave the key out) or \"error\", not \(found)")
        return nil
    }

    mutating func globs(_ value: PlistValue?, at: String) -> [Glob]? {
        let texts: [String]
        switch value {
        case .string(let s)?: texts = [s]
        case .array(let items)? where !items.isEmpty && items.allSatisfy({ $0.stringValue != nil }): texts = items.compactMap(\.stringValue)
        case nil:
            problem(String(at.dropLast(6)), "a rule needs match = \"GLOB\" (e.g. \"articles/*.md\")")
            return nil
        default:
            problem(at, "match must be a glob or a list of globs, like \"articles/**\"")
            return nil
        }
        var out: [Glob] = []
        for text in texts {
            do { out.append(try Glob(text)) } catch { problem(at, "\(error)") }
        }
        return out.count == texts.count ? out : nil
    }

    mutating func loadSchema(_ value: PlistValue, at: String, into rule: inout ProjectFile.Rule) {
        var document = value
        var source = path
        if let file = value.stringValue {
            source = contentDir + "/" + file
            guard let format = StructuredReader.format(ofFileName: file), FileIO.exists(source) else {
                problem(at, "the schema \(file) is not a .json, .yaml or .toml file under \(contentDir)/")
                return
            }
            do {
                document = try StructuredReader.read(try FileIO.read(source), format: format)
            } catch let error as ReadError {
                diags.error(source, error.line, error.column, error.message)
                return
            } catch {
                problem(at, "cannot read the schema \(source): \(error)")
                return
            }
            schemaFiles.insert(Glob.normalised(file))
        } else if value.dictValue == nil && value != .bool(true) && value != .bool(false) {
            problem(at, "schema must be a file path or an inline table")
            return
        }
        do {
            rule.schema = try JSONSchema(document, source: source)
            rule.schemaSource = source
        } catch {
            if source == path { problem(at + error.pointer, "bad schema: \(error.message)") } else { diags.error(source, 1, 1, "bad schema at \(error.pointer.isEmpty ? "/" : error.pointer): \(error.message)") }
        }
    }

    mutating func cache(_ value: PlistValue, at: String) -> Manifest.CacheHint? {
        guard let d = value.dictValue else {
            problem(at, "cache must be a table like { maxAge = 60, staleWhileRevalidate = 300 }")
            return nil
        }
        let known: Set<String> = ["maxAge", "staleWhileRevalidate", "staleIfError", "immutable"]
        for key in d.keys.sorted() where !known.contains(key) {
            problem("\(at)/\(key)", "unknown cache setting '\(key)'; use maxAge, staleWhileRevalidate, staleIfError, immutable")
        }
        func seconds(_ key: String) -> Int? {
            guard let v = d[key] else { return 0 }
            guard let n = v.intValue, n >= 0, n <= 1 << 31 else {
                problem("\(at)/\(key)", "\(key) must be a whole number of seconds from 0 to 2147483648")
                return nil
            }
            return n
        }
        guard d["maxAge"] != nil else {
            problem(at, "cache needs maxAge (seconds a copy stays fresh)")
            return nil
        }
        guard let maxAge = seconds("maxAge"), let swr = seconds("staleWhileRevalidate"), let sie = seconds("staleIfError") else { return nil }
        var immutable = false
        if let v = d["immutable"] {
            guard case .bool(let b) = v else {
                problem("\(at)/immutable", "immutable must be true or false")
                return nil
            }
            immutable = b
        }
        return Manifest.CacheHint(maxAge: maxAge, staleWhileRevalidate: swr, staleIfError: sie, immutable: immutable)
    }

    mutating func index(_ value: PlistValue, globs: [Glob], at: String) -> ProjectFile.IndexRule? {
        guard let d = value.dictValue else {
            problem(at, "index must be a table like { path = \"articles/index.plist\", fields = [\"title\", \"date\"] }")
            return nil
        }
        guard let path = d["path"]?.stringValue, path.hasSuffix(".plist"), Manifest.isValidPath(path) else {
            problem(at + "/path", "index needs path = \"FOLDER/NAME.plist\", the logical path it is published at")
            return nil
        }
        guard let fields = d["fields"]?.arrayValue?.compactMap(\.stringValue), !fields.isEmpty, fields.count == d["fields"]?.arrayValue?.count else {
            problem(at + "/fields", "index needs fields = [\"title\", …], the keys each item keeps")
            return nil
        }
        let order = d["order"]?.stringValue ?? "ascending"
        guard order == "ascending" || order == "descending" else {
            problem(at + "/order", "order must be \"ascending\" or \"descending\"")
            return nil
        }
        if d["sortBy"] != nil && d["sortBy"]?.stringValue == nil { problem(at + "/sortBy", "sortBy must be a field name") }
        return ProjectFile.IndexRule(path: path, fields: fields, sortBy: d["sortBy"]?.stringValue, descending: order == "descending")
    }
}

extension Glob {
    /// A relative path without `./` segments, as the content walk names files.
    static func normalised(_ path: String) -> String {
        path.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }
}
