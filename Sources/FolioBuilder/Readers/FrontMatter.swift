import FolioPlist

/// A Markdown file split into its front matter and its body.
package struct FrontMatterDocument: Sendable {
    /// The front matter's keys and values; empty when the file has none.
    package var matter: [String: PlistValue]
    /// `.yaml` for `---` fences, `.toml` for `+++`, nil for none.
    package var matterFormat: DataFormat?
    /// The Markdown after the closing fence (exactly as written, minus the fence line).
    package var body: String
    /// The 1-based line of the file where the body starts.
    package var bodyLine: Int

    /// Creates a document from its parts.
    package init(matter: [String: PlistValue], matterFormat: DataFormat?, body: String, bodyLine: Int) {
        self.matter = matter
        self.matterFormat = matterFormat
        self.body = body
        self.bodyLine = bodyLine
    }
}

/// Front matter in Markdown files: YAML between `---` lines, or TOML between `+++` lines.
package enum FrontMatter {
    /// Where the parts of a file with front matter are.
    struct Fences {
        var format: DataFormat
        var matter: ArraySlice<UInt8>
        var body: ArraySlice<UInt8>
        var bodyLine: Int
    }

    /// Splits a Markdown file into front matter and body, reading the matter's nulls as `nulls`
    /// says; errors carry the file's own line numbers.
    package static func split(_ bytes: [UInt8], nulls: NullPolicy = .default) throws(ReadError) -> FrontMatterDocument {
        if let bad = TextPosition.firstInvalidUTF8(bytes) {
            throw ReadError(TextPosition.location(of: bad, in: bytes), "the file is not valid UTF-8; save it as UTF-8")
        }
        guard let fences = try fences(bytes) else {
            let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes[3...] : bytes[...]
            return FrontMatterDocument(matter: [:], matterFormat: nil, body: String(decoding: text, as: UTF8.self), bodyLine: 1)
        }
        let matter: [String: PlistValue]
        do {
            matter = try read(Array(fences.matter), format: fences.format, nulls: nulls)
        } catch {
            throw ReadError(line: error.line + 1, column: error.column, message: error.message)
        }
        return FrontMatterDocument(
            matter: matter, matterFormat: fences.format, body: String(decoding: fences.body, as: UTF8.self), bodyLine: fences.bodyLine)
    }

    /// Where a pointer into the matter is in the file (shifted by the fence line).
    package static func locate(_ pointer: String, in bytes: [UInt8]) -> SourceLocation? {
        guard let fences = try? fences(bytes) else { return nil }
        let matter = Array(fences.matter)
        if pointer.isEmpty { return SourceLocation(line: 2, column: 1) }
        guard let found = StructuredReader.locate(pointer, in: matter, format: fences.format) else { return nil }
        return SourceLocation(line: found.line + 1, column: found.column)
    }

    /// The matter as a mapping; blank YAML matter, or a null, is an empty mapping.
    static func read(_ matter: [UInt8], format: DataFormat, nulls: NullPolicy) throws(ReadError) -> [String: PlistValue] {
        let value: PlistValue
        if format == .yaml {
            if let simple = SimpleYAML.mapping(matter) { return simple }
            guard let root = try ContentYAML.composeIfAny(matter) else { return [:] }
            if case .scalar(let scalar) = root, YAMLScalars.isNull(scalar) { return [:] }
            value = try ContentYAML.value(of: root, size: matter.count, nulls: nulls)
        } else {
            value = try StructuredReader.read(matter, format: format)
        }
        guard case .dict(let dict) = value else {
            let article = "aeiou".contains(value.typeName.prefix(1)) ? "an" : "a"
            throw ReadError(
                line: 1, column: 1,
                message: "the front matter is \(article) \(value.typeName), not a mapping; write keys and values such as `title: Hello`")
        }
        return dict
    }

    /// The fences of `bytes`, nil when the file does not open with one; an error when the fence is never closed.
    static func fences(_ bytes: [UInt8]) throws(ReadError) -> Fences? {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard let (opening, afterOpening) = line(in: bytes, from: start) else { return nil }
        let format: DataFormat
        switch opening {
        case "---": format = .yaml
        case "+++": format = .toml
        default: return nil
        }
        start = afterOpening
        var number = 2
        while let (text, next) = line(in: bytes, from: start) {
            if text == "+++" ? format == .toml : (format == .yaml && (text == "---" || text == "...")) {
                return Fences(format: format, matter: bytes[afterOpening..<start], body: bytes[next...], bodyLine: number + 1)
            }
            start = next
            number += 1
        }
        let close = format == .yaml ? "---" : "+++"
        throw ReadError(line: 1, column: 1, message: "the front matter opened here with \(opening) is never closed; add a line \(close) after it")
    }

    /// The line starting at `start` without its line break, and where the next line starts; nil at the end.
    static func line(in bytes: [UInt8], from start: Int) -> (String, Int)? {
        guard start < bytes.count else { return nil }
        let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
        var textEnd = end
        if textEnd > start, bytes[textEnd - 1] == 0x0D { textEnd -= 1 }
        return (String(decoding: bytes[start..<textEnd], as: UTF8.self), min(end + 1, bytes.count))
    }
}
