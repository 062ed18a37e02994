import Foundation

/// A property list value, the model shared by the binary, XML and JSON codecs.
package enum PlistValue: Sendable, Hashable {
    case bool(Bool)
    /// A signed integer; values above `Int64.max` use `.uint`.
    case int(Int64)
    /// An unsigned integer above `Int64.max` (a 16-byte integer in bplist00).
    case uint(UInt64)
    case real(Double)
    case date(Date)
    case data(Data)
    case string(String)
    /// A keyed-archiver object reference (binary plists only).
    case uid(UInt64)
    case array([PlistValue])
    /// An unordered collection; read from binary plists, written as an array by the other formats.
    case set([PlistValue])
    case dict([String: PlistValue])

    /// Builds an integer value from an unsigned number, normalising to `.int` where it fits.
    package static func integer(_ value: UInt64) -> PlistValue {
        value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
    }

    /// The value for `key` when this is a dictionary.
    package subscript(key: String) -> PlistValue? {
        if case .dict(let d) = self { return d[key] }
        return nil
    }

    /// The string payload, if this is a string.
    package var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer payload, if this is an integer that fits in `Int`.
    package var intValue: Int? {
        switch self {
        case .int(let i): return Int(exactly: i)
        case .uint(let u): return Int(exactly: u)
        default: return nil
        }
    }

    /// The array payload, if this is an array or set.
    package var arrayValue: [PlistValue]? {
        switch self {
        case .array(let a), .set(let a): return a
        default: return nil
        }
    }

    /// The dictionary payload, if this is a dictionary.
    package var dictValue: [String: PlistValue]? {
        if case .dict(let d) = self { return d }
        return nil
    }

    /// The date payload, if this is a date.
    package var dateValue: Date? {
        if case .date(let d) = self { return d }
        return nil
    }

    /// The data payload, if this is data.
    package var dataValue: Data? {
        if case .data(let d) = self { return d }
        return nil
    }

    /// The boolean payload, if this is a boolean.
    package var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The real payload, or an integer converted to a real.
    package var doubleValue: Double? {
        switch self {
        case .real(let r): return r
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        default: return nil
        }
    }

    /// A short name of the value's type, for error messages.
    package var typeName: String {
        switch self {
        case .bool: "boolean"
        case .int, .uint: "integer"
        case .real: "real"
        case .date: "date"
        case .data: "data"
        case .string: "string"
        case .uid: "UID"
        case .array: "array"
        case .set: "set"
        case .dict: "dictionary"
        }
    }
}

/// An error reading or writing a property list: what is wrong and where.
package struct PlistError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of problem, stable for tests and tools.
    package enum Kind: String, Sendable {
        case badMagic, truncated, badTrailer, trailingBytes, badOffset, badReference
        case cycle, tooDeep, badCount, badMarker, badKey, duplicateKey, badString, badNumber
        case referenceBomb, unsupported, syntax, badValue
    }

    package var kind: Kind
    package var message: String
    /// Byte offset into the input (binary and JSON input).
    package var offset: Int?
    /// 1-based line for text formats (XML and JSON).
    package var line: Int?
    /// 1-based column for text formats.
    package var column: Int?

    package init(_ kind: Kind, _ message: String, offset: Int? = nil, line: Int? = nil, column: Int? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
    }

    package var description: String {
        var s = message
        if let line {
            s += " at line \(line)"
            if let column { s += ", column \(column)" }
        } else if let offset {
            s += " at byte offset \(offset)"
        }
        return s
    }
}

/// The serialised forms a property list can take.
package enum PlistFormat: String, Sendable, CaseIterable {
    case binary, xml, json

    /// Guesses the format of `bytes` from its first non-blank characters.
    package static func sniff(_ bytes: some Collection<UInt8>) -> PlistFormat {
        if bytes.starts(with: Array("bplist".utf8)) { return .binary }
        for b in bytes {
            switch b {
            case 0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF: continue
            case UInt8(ascii: "<"): return .xml
            default: return .json
            }
        }
        return .json
    }
}

extension PlistValue {
    /// Decodes `bytes` in whichever format they are in.
    package static func decode(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        switch PlistFormat.sniff(bytes) {
        case .binary: return try BinaryPlist.decode(bytes)
        case .xml: return try XMLPlist.decode(bytes)
        case .json: return try JSONPlist.decode(bytes)
        }
    }

    /// Encodes the value in `format`.
    package func encoded(as format: PlistFormat) throws(PlistError) -> [UInt8] {
        switch format {
        case .binary: return BinaryPlist.encode(self)
        case .xml: return try XMLPlist.encode(self)
        case .json: return try JSONPlist.encode(self)
        }
    }
}
