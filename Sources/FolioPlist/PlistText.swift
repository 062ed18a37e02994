import Foundation

extension PlistValue {
    /// A readable rendering in the style of `plutil -p`: sorted keys, indexed arrays.
    public var readableText: String { readableText(nulls: false) }

    /// ``readableText``; with `nulls`, the string `"$null"` (Foundation's `nil`, ``PlistValue/null``) reads `null`.
    package func readableText(nulls: Bool) -> String {
        var out = ""
        Self.render(self, indent: 0, nulls: nulls, into: &out)
        out += "\n"
        return out
    }

    private static func render(_ value: PlistValue, indent: Int, nulls: Bool, into out: inout String) {
        let pad = String(repeating: "  ", count: indent + 1)
        let close = String(repeating: "  ", count: indent)
        switch value {
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .uint(let u): out += String(u)
        case .real(let r): out += "\(r)"
        case .date(let d): out += PlistDates.formatISO8601(d)
        case .data(let d):
            let shown = d.prefix(32).map { String(format: "%02x", $0) }.joined()
            out += "{length = \(d.count), bytes = 0x\(shown)\(d.count > 32 ? "..." : "")}"
        case .string(let s): out += nulls && value.isNull ? "null" : String(reflecting: s)
        case .uid(let u): out += "UID(\(u))"
        case .array(let items), .set(let items):
            let (open, end) = if case .set = value { ("{(", ")}") } else { ("[", "]") }
            if items.isEmpty { out += open + end; return }
            out += open + "\n"
            for (i, item) in items.enumerated() {
                out += "\(pad)\(i) => "
                render(item, indent: indent + 1, nulls: nulls, into: &out)
                out += "\n"
            }
            out += close + end
        case .dict(let dict):
            if dict.isEmpty { out += "{}"; return }
            out += "{\n"
            for key in dict.keys.sorted() {
                out += "\(pad)\(String(reflecting: key)) => "
                render(dict[key]!, indent: indent + 1, nulls: nulls, into: &out)
                out += "\n"
            }
            out += close + "}"
        }
    }
}
