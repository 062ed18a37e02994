/// The little XML reading S3's answers need (error documents, listings): the text of elements by name.
package enum XMLText {
    /// The text of the first `<name>` element.
    package static func first(_ name: String, in body: [UInt8]) -> String? {
        all(name, in: String(decoding: body, as: UTF8.self)).first
    }

    /// The text of every `<name>` element, entities decoded.
    package static func all(_ name: String, in text: String) -> [String] {
        var out: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest[open.upperBound...].range(of: "</\(name)>") {
            out.append(decodeEntities(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        return out
    }

    /// Text with `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&amp;` and numeric references decoded.
    package static func decodeEntities(_ s: String) -> String {
        guard s.contains("&") else { return s }
        var out = ""
        var rest = s[...]
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else { break }
            let name = rest[rest.index(after: amp)..<semi]
            switch name {
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            case "amp": out += "&"
            default:
                let number = name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
                if let n = number, let scalar = Unicode.Scalar(n) { out.unicodeScalars.append(scalar) } else { out += "&\(name);" }
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}
