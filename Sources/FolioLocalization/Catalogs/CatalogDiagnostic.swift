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
