import FolioPlist
import FolioPlistXML
import Foundation

/// A position in a source file: 1-based line, and 1-based column counted in characters.
package struct SourceLocation: Sendable, Equatable {
    /// The 1-based line.
    package var line: Int
    /// The 1-based column, in characters (Unicode scalars) from the start of the line.
    package var column: Int

    /// Creates a location at `line` and `column`.
    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}

/// An error reading a content source: where it is and what is wrong, with what to do about it.
package struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line of the problem.
    package var line: Int
    /// The 1-based column of the problem.
    package var column: Int
    /// What is wrong and what to do.
    package var message: String

    /// Creates an error at `line`:`column` saying `message`.
    package init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// Creates an error at `location` saying `message`.
    package init(_ location: SourceLocation, _ message: String) {
        self.init(line: location.line, column: location.column, message: message)
    }

    /// The error as `line:col: message`.
    package var description: String { "\(line):\(column): \(message)" }
}

/// The structured-data formats content sources are written in.
package enum DataFormat: String, Sendable, CaseIterable {
    /// JSON (RFC 8259).
    case json
    /// YAML 1.2 (core schema), one document.
    case yaml
    /// TOML 1.0.
    case toml
    /// A property list in XML, binary or JSON form.
    case plist
}

/// Reads whole files of structured data into property-list values, and finds values in them.
package enum StructuredReader {
    /// How deep arrays and dictionaries may nest (the binary plist reader's limit, so what reads encodes).
    package static let maxDepth = 500

    /// The format a source file name's extension stands for: .json, .yaml/.yml, .toml, .plist.
    package static func format(ofFileName name: String) -> DataFormat? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return format(ofExtension: name[name.index(after: dot)...].lowercased())
    }

    /// The format a lowercased file extension stands for (`json`, `yaml`, `yml`, `toml`, `plist`).
    package static func format(ofExtension ext: String) -> DataFormat? {
        switch ext {
        case "json": return .json
        case "yaml", "yml": return .yaml
        case "toml": return .toml
        case "plist": return .plist
        default: return nil
        }
    }

    /// Reads a whole file of structured data; its nulls (JSON and YAML) as `nulls` says.
    package static func read(_ bytes: [UInt8], format: DataFormat, nulls: NullPolicy = .default) throws(ReadError) -> PlistValue {
        switch format {
        case .json: return try ContentJSON.read(bytes, nulls: nulls)
        case .yaml: return try ContentYAML.read(bytes, nulls: nulls)
        case .toml: return try ContentTOML.read(bytes)
        case .plist: return try readPlist(bytes)
        }
    }

    /// The JSON pointer (RFC 6901) of `tokens`, as errors and `locate` take it.
    package static func pointer(_ tokens: [String]) -> String { JSONPointer.string(tokens) }

    /// Where the value at a JSON pointer ("" root, "/a/0/b") starts in the source, for schema errors; nil if not found (best effort for TOML: the key's line).
    package static func locate(_ pointer: String, in bytes: [UInt8], format: DataFormat) -> SourceLocation? {
        guard let tokens = JSONPointer.tokens(pointer) else { return nil }
        switch format {
        case .json: return ContentJSON.locate(tokens, in: bytes)
        case .yaml: return ContentYAML.locate(tokens, in: bytes)
        case .toml: return ContentTOML.locate(tokens, in: bytes)
        case .plist: return tokens.isEmpty ? SourceLocation(line: 1, column: 1) : nil
        }
    }

    /// Reads a property list in any of its forms, mapping its error to a position.
    static func readPlist(_ bytes: [UInt8]) throws(ReadError) -> PlistValue {
        do {
            return try PlistValue.decodeAnyFormat(bytes)
        } catch {
            if let line = error.line {
                throw ReadError(line: line, column: error.column ?? 1, message: error.message)
            }
            let isBinary = PlistFormat.sniff(bytes) == .binary
            if let offset = error.offset, !isBinary {
                throw ReadError(TextPosition.location(of: offset, in: bytes), error.message)
            }
            let at = error.offset.map { " (byte offset \($0))" } ?? ""
            throw ReadError(line: 1, column: 1, message: error.message + at + "; the property list is damaged, write it again")
        }
    }
}

/// JSON pointers (RFC 6901), as schema errors name values.
enum JSONPointer {
    /// The reference tokens of `pointer`, or nil when it is not a pointer. Read as Unicode
    /// scalars, not characters: a key that starts with a combining mark would otherwise join the
    /// `/` (or `~`) before it into one character, and the separator (or escape) would not be seen.
    static func tokens(_ pointer: String) -> [String]? {
        if pointer.isEmpty { return [] }
        let scalars = pointer.unicodeScalars
        guard scalars.first == "/" else { return nil }
        return scalars.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { token in
            var out = String.UnicodeScalarView()
            var i = token.startIndex
            while i < token.endIndex {
                let next = token.index(after: i)
                if token[i] == "~", next < token.endIndex, token[next] == "0" || token[next] == "1" {
                    out.append(token[next] == "0" ? "~" : "/")
                    i = token.index(after: next)
                } else {
                    out.append(token[i])
                    i = next
                }
            }
            return String(out)
        }
    }

    /// The pointer made of `tokens`.
    static func string(_ tokens: [String]) -> String {
        var out = String.UnicodeScalarView()
        for token in tokens {
            out.append("/")
            for scalar in token.unicodeScalars {
                switch scalar {
                case "~": out.append(contentsOf: "~0".unicodeScalars)
                case "/": out.append(contentsOf: "~1".unicodeScalars)
                default: out.append(scalar)
                }
            }
        }
        return String(out)
    }

    /// The pointer made of `tokens`, worded for a message ("the root" for "").
    static func describe(_ tokens: [String]) -> String {
        tokens.isEmpty ? "the root" : string(tokens)
    }
}

/// Lines and columns of byte offsets, and checks on raw text.
enum TextPosition {
    /// The line and column of byte offset `offset` (columns count Unicode scalars).
    static func location(of offset: Int, in bytes: [UInt8]) -> SourceLocation {
        location(of: offset, in: bytes[...])
    }

    /// The line and column of byte offset `offset` within a slice (columns count Unicode scalars).
    static func location(of offset: Int, in bytes: ArraySlice<UInt8>) -> SourceLocation {
        var line = 1
        var column = 1
        let end = min(bytes.startIndex + max(offset, 0), bytes.endIndex)
        for b in bytes[bytes.startIndex..<end] {
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return SourceLocation(line: line, column: column)
    }

    /// The byte offset of the first invalid UTF-8 sequence, or nil when `bytes` is valid UTF-8.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        // ASCII eight bytes at a time, then the decoder from the first other byte (an ASCII
        // byte ends every scalar, so decoding can start there).
        let start = bytes.withUnsafeBytes { raw -> Int in
            var i = 0
            while i + 8 <= raw.count, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
            while i < raw.count, raw[i] < 0x80 { i += 1 }
            return i
        }
        guard start < bytes.count else { return nil }
        var iterator = bytes[start...].makeIterator()
        var decoder = UTF8()
        var offset = start
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// The text of `bytes` without a leading byte-order mark, or an error at the first bad byte.
    static func text(_ bytes: [UInt8], format: String) throws(ReadError) -> String {
        if let bad = firstInvalidUTF8(bytes) {
            throw ReadError(location(of: bad, in: bytes), "the file is not valid UTF-8; save it as UTF-8")
        }
        if let nul = bytes.firstIndex(of: 0) {
            throw ReadError(location(of: nul, in: bytes), "a NUL character is not allowed in \(format); remove it")
        }
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes[3...] : bytes[...]
        return String(decoding: body, as: UTF8.self)
    }
}

/// Calendar arithmetic for dates written in text, without Foundation's calendars.
enum CivilTime {
    /// Whether `day` exists in `month` of `year`.
    static func isValid(year: Int, month: Int, day: Int) -> Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }


    /// The instant of a wall-clock time at `offsetMinutes` east of UTC.
    static func date(
        year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0,
        nanosecond: Int = 0, offsetMinutes: Int = 0
    ) -> Date {
        let days = PlistDates.daysFromEpoch(year: year, month: month, day: day)
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanosecond) / 1e9)
    }
}
