import Foundation

/// JSON for property lists: what people and CI read. Dates become ISO 8601 strings,
/// data base64 strings, UIDs `{"CF$UID": n}`; reading maps JSON back without `null`.
public enum JSONPlist {
    /// Encodes `value` as pretty-printed JSON with sorted keys; non-finite reals are an error.
    public static func encode(_ value: PlistValue, pretty: Bool = true) throws(PlistError) -> [UInt8] {
        try encode(value, pretty: pretty, nulls: false)
    }

    /// Encodes `value` as ``encode(_:pretty:)`` does; with `nulls`, the string `"$null"` (what
    /// Foundation's encoder writes for `nil`, ``PlistValue/null``) is written as JSON's `null`.
    package static func encode(_ value: PlistValue, pretty: Bool = true, nulls: Bool) throws(PlistError) -> [UInt8] {
        var out: [UInt8] = []
        try write(value, indent: 0, pretty: pretty, nulls: nulls, into: &out)
        out.append(0x0A)
        return out
    }

    private static func write(_ value: PlistValue, indent: Int, pretty: Bool, nulls: Bool, into out: inout [UInt8]) throws(PlistError) {
        func newline(_ level: Int) {
            guard pretty else { return }
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: level * 2))
        }
        switch value {
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): writeInteger(i, into: &out)
        case .uint(let u): out.append(contentsOf: String(u).utf8)
        case .real(let r):
            guard r.isFinite else {
                throw PlistError(.badValue, "json: the real \(r) has no JSON form")
            }
            out.append(contentsOf: (r == r.rounded() && abs(r) < 1e15 ? String(format: "%.1f", r) : "\(r)").utf8)
        case .date(let d): writeString(PlistDates.formatISO8601(d), into: &out)
        case .data(let d): writeString(d.base64EncodedString(), into: &out)
        case .string(let s) where nulls && s == PlistValue.nullString: out.append(contentsOf: "null".utf8)
        case .string(let s): writeString(s, into: &out)
        case .uid(let u): out.append(contentsOf: "{\"CF$UID\":\(pretty ? " " : "")\(u)}".utf8)
        case .array(let items), .set(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                try write(item, indent: indent + 1, pretty: pretty, nulls: nulls, into: &out)
            }
            if !items.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "]"))
        case .dict(let dict):
            out.append(UInt8(ascii: "{"))
            for (i, pair) in dict.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                writeString(pair.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(0x20) }
                try write(pair.value, indent: indent + 1, pretty: pretty, nulls: nulls, into: &out)
            }
            if !dict.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Appends the decimal digits of `n`, as `String(n)` writes them.
    private static func writeInteger(_ n: Int64, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = n.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 20 digits at most, filled from the end
        withUnsafeMutableBytes(of: &digits) { buffer in
            var i = buffer.count
            repeat {
                i -= 1
                buffer[i] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: buffer[i...])
        }
    }

    /// Appends `s` as a JSON string literal.
    package static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole.
        if s.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Decodes JSON text into a property list value; errors name line and column.
    public static func decode(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        var parser = Parser(bytes: bytes)
        parser.skipBOM()
        parser.skipSpace()
        let value = try parser.parseValue(depth: 0)
        parser.skipSpace()
        guard parser.i == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    /// A strict RFC 8259 parser that tracks positions for error messages.
    package struct Parser {
        package let bytes: [UInt8]
        package var i = 0
        /// Whether an integer beyond 64 bits is read as a real (a reader that only skips numbers);
        /// by default it is refused.
        package var integersMayRound = false

        package init(bytes: [UInt8]) { self.bytes = bytes }

        package mutating func skipBOM() {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        }

        /// The line and column of byte offset `at`.
        package func position(_ at: Int) -> (line: Int, column: Int) {
            var line = 1
            var col = 1
            for b in bytes[0..<min(at, bytes.count)] {
                if b == 0x0A { line += 1; col = 1 } else if b & 0xC0 != 0x80 { col += 1 }
            }
            return (line, col)
        }

        func error(_ message: String, at: Int? = nil) -> PlistError {
            let at = at ?? i
            let (line, column) = position(at)
            return PlistError(.syntax, "json: \(message)", offset: at, line: line, column: column)
        }

        package mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }

        mutating func expect(_ literal: String, _ value: PlistValue) throws(PlistError) -> PlistValue {
            let lit = Array(literal.utf8)
            guard i + lit.count <= bytes.count, Array(bytes[i..<(i + lit.count)]) == lit else {
                throw error("expected a value")
            }
            i += lit.count
            return value
        }

        package mutating func parseValue(depth: Int) throws(PlistError) -> PlistValue {
            guard depth < BinaryPlist.maxDepth else { throw error("values nest deeper than \(BinaryPlist.maxDepth)") }
            guard i < bytes.count else { throw error("unexpected end of input, expected a value") }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                let open = i
                i += 1
                var dict: [String: PlistValue] = [:]
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .dict(dict) }
                while true {
                    skipSpace()
                    let keyAt = i
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a string key") }
                    let key = try parseString()
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
                    i += 1
                    skipSpace()
                    let value = try parseValue(depth: depth + 1)
                    if dict.updateValue(value, forKey: key) != nil {
                        var e = error("the key \"\(key)\" appears twice in one object", at: keyAt)
                        e.kind = .duplicateKey
                        throw e
                    }
                    skipSpace()
                    guard i < bytes.count else { throw error("unterminated object", at: open) }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "}") { i += 1; break }
                    throw error("expected ',' or '}' in an object")
                }
                if dict.count == 1, case .int(let u)? = dict["CF$UID"], u >= 0 { return .uid(UInt64(u)) }
                return .dict(dict)
            case UInt8(ascii: "["):
                let open = i
                i += 1
                var items: [PlistValue] = []
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                while true {
                    skipSpace()
                    items.append(try parseValue(depth: depth + 1))
                    skipSpace()
                    guard i < bytes.count else { throw error("unterminated array", at: open) }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "]") { i += 1; break }
                    throw error("expected ',' or ']' in an array")
                }
                return .array(items)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"):
                throw PlistError(.unsupported, "json: null has no property list form", offset: i, line: position(i).line, column: position(i).column)
            default: return try parseNumber()
            }
        }

        package mutating func parseNumber() throws(PlistError) -> PlistValue {
            let start = i
            var isReal = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            let digits = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            guard i > digits else { throw error("expected a value", at: start) }
            if bytes[digits] == 0x30, i - digits > 1 { throw error("numbers may not have leading zeros", at: start) }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                isReal = true
                i += 1
                let f = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                guard i > f else { throw error("expected digits after '.'") }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                isReal = true
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                let e = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                guard i > e else { throw error("expected digits in the exponent") }
            }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            if !isReal {
                if let v = Int64(text) { return .int(v) }
                if let v = UInt64(text) { return .uint(v) }
                // Read as a real it would lose digits without a word: refused, where it is.
                if !integersMayRound { throw error("the integer \(text) does not fit in 64 bits; write it as a string or a real", at: start) }
            }
            guard let d = Double(text), d.isFinite else { throw error("the number \(text) is out of range", at: start) }
            return .real(d)
        }

        package mutating func parseString() throws(PlistError) -> String {
            let open = i
            i += 1
            var out: [UInt8] = []
            while true {
                guard i < bytes.count else { throw error("unterminated string", at: open) }
                let b = bytes[i]
                if b == UInt8(ascii: "\"") { i += 1; break }
                if b < 0x20 { throw error("control character in a string; escape it") }
                if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
                i += 1
                guard i < bytes.count else { throw error("unterminated escape", at: open) }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar & 0xFC00 == 0xD800 {
                        guard i + 1 < bytes.count, bytes[i] == 0x5C, bytes[i + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired surrogate in \\u escape")
                        }
                        i += 2
                        let lo = try hex4()
                        guard lo & 0xFC00 == 0xDC00 else { throw error("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (lo - 0xDC00)
                    } else if scalar & 0xFC00 == 0xDC00 {
                        throw error("unpaired surrogate in \\u escape")
                    }
                    out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                default: throw error("unknown escape '\\\(Character(Unicode.Scalar(e)))'", at: i - 2)
                }
            }
            guard let s = String(validating: out, as: UTF8.self) else {
                throw error("string is not valid UTF-8", at: open)
            }
            return s
        }

        mutating func hex4() throws(PlistError) -> UInt32 {
            guard i + 4 <= bytes.count else { throw error("truncated \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[i]
                let d: UInt32
                switch c {
                case 0x30...0x39: d = UInt32(c - 0x30)
                case 0x41...0x46: d = UInt32(c - 0x41 + 10)
                case 0x61...0x66: d = UInt32(c - 0x61 + 10)
                default: throw error("bad hex digit in \\u escape")
                }
                v = v << 4 | d
                i += 1
            }
            return v
        }
    }
}
