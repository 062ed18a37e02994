import FolioPlist
import Foundation

/// Values as people read them in one line: strings quoted as in JSON, `"$null"` (a source's null,
/// as published) as `null`, dictionaries and arrays by their content (`{title: "Hamlet", tags:
/// ["a", "b"]}`), cut at a length with "…".
enum ValueText {
    static let maxLength = 160

    static func short(_ v: PlistValue?, limit: Int = maxLength) -> String {
        guard let v else { return "none" }
        var out = ""
        write(v, into: &out, limit: limit)
        return out.count > limit ? String(out.prefix(limit - 1)) + "…" : out
    }

    /// A change of value, both sides: two long strings are shown around where they differ
    /// (`"…all on your device, day and all, so you…"`), so the change is never cut off.
    static func change(_ old: PlistValue?, _ new: PlistValue?) -> (old: String, new: String) {
        guard case .string(let x)? = old, case .string(let y)? = new, old?.isNull == false, new?.isNull == false,
            x.count > maxLength / 2 || y.count > maxLength / 2
        else {
            return (short(old), short(new))
        }
        return StringChange.excerpts(x, y, width: maxLength / 2)
    }

    static func write(_ v: PlistValue, into out: inout String, limit: Int) {
        guard out.count <= limit else { return }
        switch v {
        case .string(let s): out += v.isNull ? "null" : quoted(s)
        case .int(let i): out += String(i)
        case .uint(let u): out += String(u)
        case .bool(let b): out += String(b)
        case .real(let r): out += String(r)
        case .date(let d): out += PlistDates.formatISO8601(d)
        case .data(let d): out += "<\(d.count) bytes: \(d.prefix(24).base64EncodedString())\(d.count > 24 ? "…" : "")>"
        case .uid(let u): out += "UID(\(u))"
        case .array(let a), .set(let a): writeArray(a, into: &out, limit: limit)
        case .dict(let d): writeDict(d, into: &out, limit: limit)
        }
    }

    static func writeArray(_ a: [PlistValue], into out: inout String, limit: Int) {
        out += "["
        for (i, item) in a.enumerated() {
            if i > 0 { out += ", " }
            write(item, into: &out, limit: limit)
            if out.count > limit { return }
        }
        out += "]"
    }

    static func writeDict(_ d: [String: PlistValue], into out: inout String, limit: Int) {
        out += "{"
        for (i, key) in d.keys.sorted().enumerated() {
            if i > 0 { out += ", " }
            out += key + ": "
            write(d[key]!, into: &out, limit: limit)
            if out.count > limit { return }
        }
        out += "}"
    }

    /// `s` as a JSON string literal (``JSONPlist/writeString(_:into:)``): `\"`, `\\`, `\n`,
    /// `\t`, `\r`, other controls as `\u00xx`; an apostrophe is not escaped.
    static func quoted(_ s: String) -> String {
        var out: [UInt8] = []
        JSONPlist.writeString(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Two long strings shown around where they differ: the common start and end cut to a little
/// context, with "…" where text was left out.
enum StringChange {
    static let context = 20

    static func excerpts(_ x: String, _ y: String, width: Int) -> (old: String, new: String) {
        let (a, b) = (Array(x), Array(y))
        var prefix = 0
        while prefix < min(a.count, b.count), a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < min(a.count, b.count) - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        return (excerpt(a, prefix: prefix, suffix: suffix, width: width), excerpt(b, prefix: prefix, suffix: suffix, width: width))
    }

    /// `chars` from `context` before its differing middle to `context` after it, the middle cut
    /// to `width`.
    static func excerpt(_ chars: [Character], prefix: Int, suffix: Int, width: Int) -> String {
        let start = max(0, prefix - context)
        let middleEnd = chars.count - suffix
        let end = min(chars.count, middleEnd + context)
        var text = ValueText.quoted(String(chars[start..<end]))
        text.removeFirst()
        text.removeLast()
        if middleEnd - prefix > width {
            let head = ValueText.quoted(String(chars[start..<(prefix + width)])).dropFirst().dropLast()
            return "\"" + (start > 0 ? "…" : "") + head + "…\""
        }
        return "\"" + (start > 0 ? "…" : "") + text + (end < chars.count ? "…" : "") + "\""
    }
}
