import FolioPlist
import FolioTestSupport

/// Reads `folio diff --format json` output (docs/diff-json.md): JSON with `null`, which has no
/// property list form, read as ``null``; and its changes as ``PlistChange``s to apply.
enum DiffJSONReader {
    /// What a JSON `null` reads as.
    static let null: PlistValue = .dict(["$null": .bool(true)])

    static func value(_ out: Harness.Output) throws -> PlistValue {
        do { return try JSONPlist.decode(Array(withNullMarkers(out.stdout).utf8)) } catch {
            throw HarnessError("not JSON (\(error)): status \(out.status), stdout: \(out.stdout), stderr: \(out.stderr)")
        }
    }

    /// `text` with every `null` token outside strings replaced by the marker object.
    static func withNullMarkers(_ text: String) -> String {
        var out = ""
        var inString = false
        var escaped = false
        var chars = Substring(text)
        while let c = chars.first {
            if inString {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
            } else if c == "\"" {
                inString = true
            } else if chars.hasPrefix("null") {
                out += #"{"$null": true}"#
                chars = chars.dropFirst(4)
                continue
            }
            out.append(c)
            chars = chars.dropFirst()
        }
        return out
    }

    /// A change object of the schema as a ``PlistChange``.
    static func change(_ v: PlistValue) throws -> PlistChange {
        guard let opName = v["op"]?.stringValue, let op = PlistChange.Op(rawValue: opName), let path = v["path"]?.arrayValue else {
            throw HarnessError("not a change: \(v)")
        }
        func value(_ key: String) -> PlistValue? { v[key] == null ? nil : v[key] }
        return PlistChange(
            op, try path.map(component), old: value("old"), new: value("new"), index: v["index"]?.intValue, from: v["from"]?.intValue,
            to: v["to"]?.intValue)
    }

    static func component(_ v: PlistValue) throws -> PlistPathComponent {
        if let key = v.stringValue { return .key(key) }
        if let i = v.intValue { return .index(i) }
        guard let key = v["key"]?.stringValue, let value = v["value"] else { throw HarnessError("not a path step: \(v)") }
        return .match(key: key, value: value)
    }

    /// A value as the JSON output carries it: dates as ISO 8601 strings, data as base64.
    static func asJSON(_ v: PlistValue) throws -> PlistValue {
        try JSONPlist.decode(try JSONPlist.encode(v))
    }
}
