/// A problem found while reading a string catalog, at a 1-based line and column, saying what is wrong and how to fix it.
public struct CatalogDiagnostic: Error, Equatable, Sendable, CustomStringConvertible {
    /// The 1-based line of the offending token.
    public var line: Int
    /// The 1-based column (in characters) of the offending token.
    public var column: Int
    /// What is wrong and how to fix it.
    public var message: String

    /// Creates a diagnostic at `line`:`column`.
    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// The diagnostic as `line:column: message`.
    public var description: String { "\(line):\(column): \(message)" }
}

/// One `"key" = "value";` pair from an Apple `.strings` file.
package struct StringsEntry: Equatable, Sendable {
    /// The key, with escapes resolved.
    package var key: String
    /// The value, with escapes resolved.
    package var value: String
    /// The last comment before the entry, trimmed, if any.
    package var comment: String?
    /// The 1-based line of the key.
    package var line: Int
    /// The 1-based column of the key.
    package var column: Int

    /// Creates an entry.
    package init(key: String, value: String, comment: String? = nil, line: Int, column: Int) {
        self.key = key
        self.value = value
        self.comment = comment
        self.line = line
        self.column = column
    }
}
