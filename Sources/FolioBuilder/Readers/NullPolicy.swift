import FolioPlist

/// What the readers do with a null (JSON's `null`, YAML's `~`, `null` or an empty value): a
/// project-file rule's `nulls = "keep"`, `"omit"` or `"error"`. TOML has no null.
package enum NullPolicy: String, Sendable, CaseIterable {
    /// Publish it as the string `"$null"` (``PlistValue/null``), which `PlistDecoder` and
    /// Foundation's `PropertyListDecoder` decode as `nil`. The default.
    case keep
    /// Leave out a key whose value is null; a null elsewhere (an array's item, the whole file)
    /// is an error.
    case omit
    /// Refuse every null: for schemas that have no optional values.
    case error

    /// The default, for files no rule sets `nulls` for.
    package static let `default` = NullPolicy.keep

    /// The value a null reads as at `tokens`, or the error it is under this policy. Only
    /// ``keep`` gives a value: ``omit`` leaves out a key's null before asking, so a null that
    /// reaches here under it cannot be left out.
    func value(at tokens: [String], _ location: SourceLocation, inArray: Bool) throws(ReadError) -> PlistValue {
        let keep = "set nulls = \"keep\" for this file in folio.toml"
        switch self {
        case .keep:
            return .null
        case .omit where inArray:
            throw ReadError(location, "null at \(JSONPointer.describe(tokens)) is an item of an array, which nulls = \"omit\" cannot leave out; remove the item or give it a value, or \(keep)")
        case .omit:
            throw ReadError(location, "the file's value is null, which nulls = \"omit\" cannot leave out; give it a value, or \(keep)")
        case .error:
            throw ReadError(location, "null at \(JSONPointer.describe(tokens)) is refused by nulls = \"error\" in folio.toml; give a value or remove the key, or set nulls = \"keep\" for this file")
        }
    }

    /// Whether a key whose value is null is left out.
    var omitsKeys: Bool { self == .omit }
}
