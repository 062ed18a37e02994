import FolioPlist

/// Strict JSON (RFC 8259) content files: integers stay integers, duplicate keys are errors, and
/// `null` is read as its ``NullPolicy`` says.
enum ContentJSON {
    /// Reads a JSON document.
    static func read(_ bytes: [UInt8], nulls: NullPolicy = .default) throws(ReadError) -> PlistValue {
        var reader = Reader(bytes: bytes, target: nil, nulls: nulls)
        return try reader.document()
    }

    /// Where the value at `tokens` starts, or nil.
    static func locate(_ tokens: [String], in bytes: [UInt8]) -> SourceLocation? {
        var reader = Reader(bytes: bytes, target: tokens)
        _ = try? reader.document()
        return reader.found
    }

    /// A recursive-descent reader over `JSONPlist.Parser`'s scanning, tracking the JSON pointer.
    struct Reader {
        var parser: JSONPlist.Parser
        let target: [String]?
        let nulls: NullPolicy
        var path: [String] = []
        var found: SourceLocation?
        /// Whether the value being read is an array's item (for a null's error under `omit`).
        var inArray = false

        init(bytes: [UInt8], target: [String]?, nulls: NullPolicy = .default) {
            parser = JSONPlist.Parser(bytes: bytes)
            self.target = target
            self.nulls = nulls
        }

        var atEnd: Bool { parser.i >= parser.bytes.count }
        var byte: UInt8 { parser.bytes[parser.i] }

        func here(_ at: Int? = nil) -> SourceLocation {
            let (line, column) = parser.position(at ?? parser.i)
            return SourceLocation(line: line, column: column)
        }

        func error(_ message: String, at: Int? = nil) -> ReadError {
            ReadError(here(at), message)
        }

        /// Maps an error of the shared scanner to a read error.
        func mapped(_ e: PlistError) -> ReadError {
            let message = e.message.hasPrefix("json: ") ? String(e.message.dropFirst(6)) : e.message
            if let line = e.line { return ReadError(line: line, column: e.column ?? 1, message: message) }
            return error(message, at: e.offset)
        }

        mutating func document() throws(ReadError) -> PlistValue {
            if let bad = TextPosition.firstInvalidUTF8(parser.bytes) {
                throw ReadError(TextPosition.location(of: bad, in: parser.bytes), "the file is not valid UTF-8; save it as UTF-8")
            }
            parser.skipBOM()
            parser.skipSpace()
            guard !atEnd else { throw error("the file is empty; write a JSON value such as {}") }
            let result = try value(depth: 0)
            parser.skipSpace()
            guard atEnd else { throw error("unexpected text after the JSON value; remove it or wrap both in an array") }
            return result
        }

        mutating func value(depth: Int) throws(ReadError) -> PlistValue {
            if let target, found == nil, target == path { found = here() }
            guard depth < StructuredReader.maxDepth else {
                throw error("values nest deeper than \(StructuredReader.maxDepth) levels; flatten the data")
            }
            guard !atEnd else { throw error("unexpected end of the file, expected a value") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return try string()
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"):
                let start = parser.i
                _ = try literal("null", .bool(false))
                return try nulls.value(at: path, here(start), inArray: inArray)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw error("expected a value (an object, array, string, number, true or false)")
            }
        }

        mutating func string() throws(ReadError) -> PlistValue {
            do { return .string(try parser.parseString()) } catch { throw mapped(error) }
        }

        /// Whether the text at the reading position is the literal `null`.
        var isNullLiteral: Bool { parser.bytes[parser.i...].starts(with: "null".utf8) }

        mutating func literal(_ word: String, _ value: PlistValue) throws(ReadError) -> PlistValue {
            let text = Array(word.utf8)
            guard parser.bytes[parser.i...].starts(with: text) else {
                throw error("expected a value (an object, array, string, number, true or false)")
            }
            parser.i += text.count
            return value
        }

        mutating func number() throws(ReadError) -> PlistValue {
            let start = parser.i
            let result: PlistValue
            do { result = try parser.parseNumber() } catch { throw mapped(error) }
            let text = parser.bytes[start..<parser.i]
            let written = String(decoding: text, as: UTF8.self)
            if case .real = result, !text.contains(where: { $0 == 0x2E || $0 == 0x65 || $0 == 0x45 }) {
                throw error("the integer \(written) does not fit in 64 bits; write it as a string or a real", at: start)
            }
            return result
        }
    }
}

extension ContentJSON.Reader {
    mutating func object(depth: Int) throws(ReadError) -> PlistValue {
        let open = parser.i
        parser.i += 1
        var dict: [String: PlistValue] = [:]
        var omitted = Set<String>()  // keys left out for their null (nulls = "omit")
        parser.skipSpace()
        if !atEnd, byte == UInt8(ascii: "}") { parser.i += 1; return .dict(dict) }
        while true {
            parser.skipSpace()
            let keyAt = parser.i
            guard !atEnd else { throw error("the object opened here is never closed; add '}'", at: open) }
            guard byte == UInt8(ascii: "\"") else {
                if byte == UInt8(ascii: "}") { throw error("a comma before '}' is not allowed in JSON; remove it") }
                throw error("expected a key in double quotes")
            }
            guard case .string(let key) = try string() else { continue }
            parser.skipSpace()
            guard !atEnd, byte == UInt8(ascii: ":") else { throw error("expected ':' after the key \"\(key)\"") }
            parser.i += 1
            parser.skipSpace()
            guard dict[key] == nil, !omitted.contains(key) else { throw error("the key \"\(key)\" appears twice in one object; keep one", at: keyAt) }
            path.append(key)
            if nulls.omitsKeys, isNullLiteral {
                _ = try literal("null", .bool(false))
                omitted.insert(key)
            } else {
                inArray = false
                dict[key] = try value(depth: depth + 1)
            }
            path.removeLast()
            parser.skipSpace()
            guard !atEnd else { throw error("the object opened here is never closed; add '}'", at: open) }
            if byte == UInt8(ascii: ",") { parser.i += 1; continue }
            if byte == UInt8(ascii: "}") { parser.i += 1; return .dict(dict) }
            throw error("expected ',' or '}' after a value in an object")
        }
    }

    mutating func array(depth: Int) throws(ReadError) -> PlistValue {
        let open = parser.i
        parser.i += 1
        var items: [PlistValue] = []
        parser.skipSpace()
        if !atEnd, byte == UInt8(ascii: "]") { parser.i += 1; return .array(items) }
        while true {
            parser.skipSpace()
            if !atEnd, byte == UInt8(ascii: "]") { throw error("a comma before ']' is not allowed in JSON; remove it") }
            path.append(String(items.count))
            inArray = true
            items.append(try value(depth: depth + 1))
            path.removeLast()
            parser.skipSpace()
            guard !atEnd else { throw error("the array opened here is never closed; add ']'", at: open) }
            if byte == UInt8(ascii: ",") { parser.i += 1; continue }
            if byte == UInt8(ascii: "]") { parser.i += 1; return .array(items) }
            throw error("expected ',' or ']' after a value in an array")
        }
    }
}
