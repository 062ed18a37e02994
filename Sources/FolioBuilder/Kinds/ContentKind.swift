import FolioPlist
import FolioPublished
import FolioSupport

/// One file found under the content directory, not yet read.
package struct SourceFile: Sendable, Equatable {
    /// Its path under the content directory, with `/` separators (`home/featured.json`).
    package let relativePath: String
    /// Its path as opened (the content directory joined with `relativePath`).
    package let fullPath: String
    package let stamp: FileStamp
    /// The file name, after the last `/`.
    package let name: String
    /// The first folder of its path (`sonnets` for `sonnets/018.txt`), nil at the top level.
    package let topFolder: String?
    /// The name's extension, lowercased (`json`); empty when it has none.
    package let fileExtension: String

    package init(relativePath: String, fullPath: String, stamp: FileStamp) {
        self.relativePath = relativePath
        self.fullPath = fullPath
        self.stamp = stamp
        let utf8 = relativePath.utf8
        let slash = utf8.lastIndex(of: UInt8(ascii: "/"))
        let nameStart = slash.map { relativePath.index(after: $0) } ?? relativePath.startIndex
        let name = String(relativePath[nameStart...])
        self.name = name
        topFolder = slash == nil ? nil : utf8.firstIndex(of: UInt8(ascii: "/")).map { String(relativePath[..<$0]) }
        let dot = name.utf8.lastIndex(of: UInt8(ascii: "."))
        fileExtension = dot.map { $0 == name.startIndex ? "" : name[name.index(after: $0)...].lowercased() } ?? ""
    }

    /// Its bytes.
    package func read() throws -> [UInt8] { try FileIO.read(fullPath) }
}

/// What a kind compiles one or more sources to: a property list or bytes published as they are.
package struct CompiledItem: Sendable {
    package enum Body: Sendable {
        case plist(PlistValue)
        case bytes([UInt8], compressible: Bool)
        /// A file published as it is without being held in memory (an asset gzip would not
        /// shrink): its path, hashed when compiled, and copied into `objects/` a chunk at a time.
        case file(String, size: Int, sha256: String)
        /// Unchanged since the last publish: its entry, from the build cache.
        case reused(Manifest.Entry)
    }

    /// The logical path in the manifest.
    package var path: String
    package var body: Body
    package var contentType: String
    package var kind: String
    package var locale: String?
    /// The source files it came from (the build cache keys on them).
    package var sources: [String]
    /// An index's cache policy when no rule matches its own path: the policy of the rule that
    /// declares it, whatever the number of entries it lists.
    package var ruleCache: Manifest.CacheHint?

    package init(path: String, plist: PlistValue, kind: String, locale: String? = nil, sources: [String]) {
        self.path = path
        self.body = .plist(plist)
        self.contentType = Manifest.plistContentType
        self.kind = kind
        self.locale = locale
        self.sources = sources
    }

    package init(path: String, bytes: [UInt8], contentType: String, compressible: Bool, kind: String, sources: [String]) {
        self.path = path
        self.body = .bytes(bytes, compressible: compressible)
        self.contentType = contentType
        self.kind = kind
        self.sources = sources
    }

    /// A file published as it is, streamed rather than held (see ``Body/file(_:size:sha256:)``).
    package init(path: String, file: String, size: Int, sha256: String, contentType: String, kind: String) {
        self.path = path
        self.body = .file(file, size: size, sha256: sha256)
        self.contentType = contentType
        self.kind = kind
        self.sources = [file]
    }

    /// An entry reused from the build cache, unchanged since the last publish.
    package init(reusing entry: Manifest.Entry, source: String) {
        self.path = entry.path
        self.body = .reused(entry)
        self.contentType = entry.contentType
        self.kind = entry.kind ?? ""
        self.sources = [source]
    }

    /// The property list it holds, if any.
    package var plist: PlistValue? {
        if case .plist(let value) = body { return value }
        return nil
    }
}

/// What a kind parsed: checks that may run while everything is encoded, and what to publish.
package protocol ParsedContent: Sendable {
    /// Checks that do not change the output (a catalog's format checks), run beside encoding.
    func check() -> Diagnostics
    /// The items to publish (published only when no kind found an error).
    func compile() -> [CompiledItem]
}

/// One kind of content: which files it claims, and how it parses and compiles them.
package protocol ContentKind: Sendable {
    /// The kind's name, as manifest entries and `folio ls` show it.
    var name: String { get }
    /// Whether this kind compiles `file`; the first kind in the registry that claims a file gets it.
    func claims(_ file: SourceFile) -> Bool
    /// Reads and parses the files it claimed (possibly none); problems go to `diags`.
    func parse(_ files: [SourceFile], _ project: BuildProject, into diags: inout Diagnostics) throws -> any ParsedContent
}

/// Parsed content with nothing to check beyond parsing.
package struct CompiledContent: ParsedContent {
    package var items: [CompiledItem]
    package init(_ items: [CompiledItem]) { self.items = items }
    package func check() -> Diagnostics { Diagnostics() }
    package func compile() -> [CompiledItem] { items }
}

/// What every kind may consult: the configuration and the project file.
package struct BuildProject: Sendable {
    package var config: BuildConfiguration
    package var file: ProjectFile
    /// The build cache of the last publish, for kinds that compile one file at a time.
    package var cache: BuildCache

    package init(config: BuildConfiguration, file: ProjectFile = ProjectFile(), cache: BuildCache = BuildCache()) {
        self.config = config
        self.file = file
        self.cache = cache
    }
}

/// The kinds a build is made of, in the order they claim files.
package struct KindRegistry: Sendable {
    package var kinds: [any ContentKind]

    /// Sonnets and catalogs own their folders; structured data and documents claim by extension;
    /// assets take every other file.
    package static let standard = KindRegistry(kinds: [
        SonnetKind(), CatalogKind(), DataKind(), DocumentKind(), AssetKind(),
    ])

    /// `files` grouped by the kind that claims each, in registry order.
    package func assign(_ files: [SourceFile]) -> [[SourceFile]] {
        var groups = Array(repeating: [SourceFile](), count: kinds.count)
        for file in files {
            if let i = kinds.firstIndex(where: { $0.claims(file) }) { groups[i].append(file) }
        }
        return groups
    }
}
