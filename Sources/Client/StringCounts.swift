import FolioLocalization

/// How many `--count` values a string takes: one per plural placeholder (`%#@files@ in
/// %#@folders@` takes two, in order), one for a plural value; nil when any number goes (a
/// value that does not vary by count, whose `%d`s the counts fill in).
enum StringCounts {
    static func needed(_ value: CatalogValue) -> (count: Int, placeholders: [String])? {
        switch value {
        case .string: return nil
        case .plural, .gettextPlural: return (1, [])
        case .device(let devices):
            return devices["other"].flatMap(needed) ?? devices.sorted { $0.key < $1.key }.first.flatMap { needed($0.value) }
        case .substitutions(let format, _):
            guard let specs = try? FormatSpecifier.parse(format) else { return nil }
            var sequential = 0
            var highest = 0
            for spec in specs {
                if let n = spec.argument { highest = max(highest, n) } else { sequential += 1 }
            }
            return (max(sequential, highest), specs.compactMap { $0.variable.map { "%#@\($0)@" } })
        }
    }

    /// Why `given` counts do not fit the string of `key`, or nil.
    static func problem(key: String, value: CatalogValue, given: Int) -> String? {
        guard given > 0, let (count, placeholders) = needed(value), count != given else { return nil }
        let which = placeholders.isEmpty ? "" : " (\(placeholders.joined(separator: ", ")), in order"
        let close = placeholders.isEmpty ? "" : ")"
        let repeated = Array(repeating: "--count N", count: count).joined(separator: " ")
        return "\"\(key)\" takes \(count) count\(count == 1 ? "" : "s")\(which)\(close), got \(given); give them as \(repeated)"
    }
}
