import FolioPlist

/// A JSON document with `null` and ordered keys, for `folio diff --format json`; property list
/// values are written by ``JSONPlist`` (dates as ISO 8601 strings, data as base64).
indirect enum JSONOut {
    case null
    case value(PlistValue)
    case object([(String, JSONOut)])
    case array([JSONOut])

    static func string(_ s: String) -> JSONOut { .value(.string(s)) }
    static func int(_ i: Int) -> JSONOut { .value(.int(Int64(i))) }
    static func bool(_ b: Bool) -> JSONOut { .value(.bool(b)) }
    static func optional(_ v: PlistValue?) -> JSONOut { v.map(JSONOut.value) ?? .null }

    /// The document, pretty-printed with two spaces; values inside `value` on one line.
    func encoded() -> String {
        var out = ""
        write(into: &out, indent: 0)
        return out + "\n"
    }

    /// `v` as JSON on one line, without the newline that ends a ``JSONPlist`` document; the
    /// string `"$null"` (a source's null, as published) as `null`.
    static func inline(_ v: PlistValue) -> String {
        let bytes = (try? JSONPlist.encode(v, pretty: false, nulls: true)) ?? Array("null".utf8)
        return String(decoding: bytes.last == 0x0A ? bytes.dropLast() : bytes[...], as: UTF8.self)
    }

    func write(into out: inout String, indent: Int) {
        let pad = String(repeating: "  ", count: indent + 1)
        let close = String(repeating: "  ", count: indent)
        switch self {
        case .null: out += "null"
        case .value(let v): out += Self.inline(v)
        case .array(let items) where items.isEmpty: out += "[]"
        case .object(let fields) where fields.isEmpty: out += "{}"
        case .array(let items):
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += pad
                item.write(into: &out, indent: indent + 1)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += close + "]"
        case .object(let fields):
            out += "{\n"
            for (i, (key, value)) in fields.enumerated() {
                var k: [UInt8] = []
                JSONPlist.writeString(key, into: &k)
                out += pad + String(decoding: k, as: UTF8.self) + ": "
                value.write(into: &out, indent: indent + 1)
                out += i == fields.count - 1 ? "\n" : ",\n"
            }
            out += close + "}"
        }
    }
}
