import FolioPlist
import Foundation

/// A property list value as block YAML, for writing data files in tests: dictionaries as
/// `key: value` lines (keys sorted), arrays of dictionaries as `- ` items, other arrays in flow
/// style, strings double-quoted, dates unquoted ISO 8601.
enum YAMLText {
    static func document(_ v: PlistValue) -> String {
        lines(v, indent: "").joined(separator: "\n") + "\n"
    }

    static func lines(_ v: PlistValue, indent: String) -> [String] {
        guard case .dict(let d) = v else { return [] }
        return d.keys.sorted().flatMap { key in entry(key, d[key] ?? .string(""), indent) }
    }

    static func entry(_ key: String, _ v: PlistValue, _ indent: String) -> [String] {
        switch v {
        case .dict:
            return [indent + key + ":"] + lines(v, indent: indent + "  ")
        case .array(let items) where items.contains(where: { $0.dictValue != nil }):
            return [indent + key + ":"] + items.flatMap { item($0, indent + "  ") }
        default:
            return [indent + key + ": " + scalar(v)]
        }
    }

    /// An array item: its dictionary's lines, the first marked `- `.
    static func item(_ v: PlistValue, _ indent: String) -> [String] {
        var out = lines(v, indent: indent + "  ")
        if !out.isEmpty { out[0] = indent + "- " + out[0].dropFirst(indent.count + 2) }
        return out
    }

    static func scalar(_ v: PlistValue) -> String {
        switch v {
        case .string(let s): return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .int(let i): return String(i)
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return ISO8601DateFormatter().string(from: d)
        case .array(let items): return "[" + items.map(scalar).joined(separator: ", ") + "]"
        default: return "\"\(v)\""
        }
    }
}
