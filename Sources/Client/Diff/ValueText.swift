import FolioPlist
import Foundation

/// Values as people read them in one line: strings quoted, dictionaries and arrays by their
/// content (`{title: "Hamlet", tags: ["a", "b"]}`), cut at a length with "…".
enum ValueText {
    static let maxLength = 160

    static func short(_ v: PlistValue?, limit: Int = maxLength) -> String {
        guard let v else { return "none" }
        var out = ""
        write(v, into: &out, limit: limit)
        return out.count > limit ? String(out.prefix(limit - 1)) + "…" : out
    }

    static func write(_ v: PlistValue, into out: inout String, limit: Int) {
        guard out.count <= limit else { return }
        switch v {
        case .string(let s): out += String(reflecting: s)
        case .int(let i): out += String(i)
        case .uint(let u): out += String(u)
        case .bool(let b): out += String(b)
        case .real(let r): out += String(r)
        case .date(let d): out += PlistDates.formatISO8601(d)
        case .data(let d): out += "<\(d.count) bytes: \(d.prefix(24).base64EncodedString())\(d.count > 24 ? "…" : "")>"
        case .uid(let u): out += "UID(\(u))"
        case .array(let a), .set(let a):
            out += "["
            for (i, item) in a.enumerated() {
                if i > 0 { out += ", " }
                write(item, into: &out, limit: limit)
                if out.count > limit { return }
            }
            out += "]"
        case .dict(let d):
            out += "{"
            for (i, key) in d.keys.sorted().enumerated() {
                if i > 0 { out += ", " }
                out += key + ": "
                write(d[key]!, into: &out, limit: limit)
                if out.count > limit { return }
            }
            out += "}"
        }
    }
}
