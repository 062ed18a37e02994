import FolioPlist
import FolioPublished
import FolioSupport

/// `content/folio.toml`: rules by path glob that attach a schema, a cache policy, Markdown
/// rendering and a light index to the files they match. Without the file every rule is a default.
///
/// ```toml
/// [[rules]]
/// match = "home/*.json"                     # or a list of globs, over paths under content/
/// schema = "schemas/home.schema.json"       # a JSON Schema file (not published), or an inline table
/// cache = { maxAge = 60, staleWhileRevalidate = 300, staleIfError = 86400 }
///
/// [[rules]]
/// match = "articles/*.md"
/// html = true                               # also render the Markdown to `html`
/// index = { path = "articles/index.plist", fields = ["title", "date", "image"], sortBy = "date", order = "descending" }
///
/// [[rules]]
/// match = "api/**"
/// nulls = "omit"                            # "keep" (the default: published as "$null"), "omit" or "error"
///
/// [catalogs.partial]                        # see `PartialCatalogs`
/// es-419 = "*"
/// ```
package struct ProjectFile: Sendable {
    /// One `[[rules]]` table.
    package struct Rule: Sendable {
        package var globs: [Glob]
        package var schema: JSONSchema?
        /// Where the schema came from, for messages: a file, or the project file's rule.
        package var schemaSource: String?
        package var cache: Manifest.CacheHint?
        package var minimumAppVersion: String?
        package var html: Bool?
        package var index: IndexRule?
        package var nulls: NullPolicy?

        package func matches(_ path: String) -> Bool { globs.contains { $0.matches(path) } }
    }

    /// A light index of the structured entries a rule matches.
    package struct IndexRule: Sendable {
        package var path: String
        package var fields: [String]
        package var sortBy: String?
        package var descending: Bool
    }

    package var rules: [Rule] = []
    /// `[catalogs.partial]`: locales whose partial coverage was decided.
    package var partialCatalogs = PartialCatalogs()
    /// Schema files under the content folder: project files, not content.
    package var schemaFiles: Set<String> = []
    /// The SHA-256 of the project file and every schema file: a build cache made under other
    /// rules is not reused.
    package var fingerprint = ""

    package init() {}

    /// The schemas that apply to a source path, in rule order.
    package func schemas(for path: String) -> [(schema: JSONSchema, source: String)] {
        rules.compactMap { rule in
            guard rule.matches(path), let schema = rule.schema else { return nil }
            return (schema, rule.schemaSource ?? ContentTree.projectFile)
        }
    }

    /// The cache policy of a source or logical path: the last matching rule that sets one.
    package func cache(for paths: String...) -> Manifest.CacheHint? {
        rules.last { rule in rule.cache != nil && paths.contains { rule.matches($0) } }?.cache
    }

    /// The oldest app version that may read a source or logical path: the last matching rule
    /// that sets one.
    package func minimumAppVersion(for paths: String...) -> String? {
        rules.last { rule in rule.minimumAppVersion != nil && paths.contains { rule.matches($0) } }?.minimumAppVersion
    }

    /// Whether a Markdown file is also rendered to HTML: the last matching rule that says.
    package func html(for path: String) -> Bool {
        rules.last { $0.html != nil && $0.matches(path) }?.html ?? false
    }

    /// What a JSON or YAML source (or Markdown front matter) does with its nulls: the last
    /// matching rule that says.
    package func nulls(for path: String) -> NullPolicy {
        rules.last { $0.nulls != nil && $0.matches(path) }?.nulls ?? .default
    }

    /// The index rules, with the globs of their rule.
    package var indexes: [(index: IndexRule, rule: Rule)] {
        rules.compactMap { rule in rule.index.map { ($0, rule) } }
    }
}
