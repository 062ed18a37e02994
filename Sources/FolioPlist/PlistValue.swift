import Foundation

/// A property list value, the model shared by the binary, XML and JSON codecs.
public enum PlistValue: Sendable, Hashable {
    /// A boolean (`<true/>` or `<false/>`).
    case bool(Bool)
    /// A signed integer; values above `Int64.max` use `.uint`.
    case int(Int64)
    /// An unsigned integer above `Int64.max` (a 16-byte integer in bplist00).
    case uint(UInt64)
    /// A floating-point number (`<real>`).
    case real(Double)
    /// A point in time, stored as seconds from 2001-01-01 (`<date>`).
    case date(Date)
    /// Raw bytes (`<data>`).
    case data(Data)
    /// A Unicode string (`<string>`).
    case string(String)
    /// A keyed-archiver object reference (binary plists only).
    case uid(UInt64)
    /// An ordered list of values (`<array>`).
    case array([PlistValue])
    /// An unordered collection; read from binary plists, written as an array by the other formats.
    case set([PlistValue])
    /// A dictionary with string keys (`<dict>`).
    case dict([String: PlistValue])

    /// Builds an integer value from an unsigned number, normalising to `.int` where it fits.
    public static func integer(_ value: UInt64) -> PlistValue {
        value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
    }

    /// The string Foundation's `PropertyListEncoder` writes for `nil`: a property list has no
    /// null, and both `PlistDecoder` and Foundation's `PropertyListDecoder` decode this string as
    /// `nil` (an optional, or `decodeNil()`).
    package static let nullString = "$null"

    /// A null, as a property list holds it: the string `"$null"`.
    package static let null = PlistValue.string(nullString)

    /// Whether this is the string `"$null"`, which decoders read as `nil`.
    package var isNull: Bool {
        if case .string(let s) = self { s == Self.nullString } else { false }
    }

    /// The value for `key` when this is a dictionary.
    public subscript(key: String) -> PlistValue? {
        if case .dict(let d) = self { return d[key] }
        return nil
    }

    /// The string payload, if this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer payload, if this is an integer that fits in `Int`.
    public var intValue: Int? {
        switch self {
        case .int(let i): return Int(exactly: i)
        case .uint(let u): return Int(exactly: u)
        default: return nil
        }
    }

    /// The array payload, if this is an array or set.
    public var arrayValue: [PlistValue]? {
        switch self {
        case .array(let a), .set(let a): return a
        default: return nil
        }
    }

    /// The dictionary payload, if this is a dictionary.
    public var dictValue: [String: PlistValue]? {
        if case .dict(let d) = self { return d }
        return nil
    }

    /// The date payload, if this is a date.
    public var dateValue: Date? {
        if case .date(let d) = self { return d }
        return nil
    }

    /// The data payload, if this is data.
    public var dataValue: Data? {
        if case .data(let d) = self { return d }
        return nil
    }

    /// The boolean payload, if this is a boolean.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The real payload, or an integer converted to a real.
    public var doubleValue: Double? {
        switch self {
        case .real(let r): return r
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        default: return nil
        }
    }

    /// A short name of the value's type, for error messages.
    public var typeName: String {
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
public struct PlistError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of problem, stable for tests and tools.
    public enum Kind: String, Sendable {
        /// The input does not start with `bplist00`.
        case badMagic
        /// The input ends before a complete document.
        case truncated
        /// The binary trailer holds impossible sizes or positions.
        case badTrailer
        /// Unexpected bytes follow the document.
        case trailingBytes
        /// An object offset points outside the object area.
        case badOffset
        /// An object reference is out of range.
        case badReference
        /// A collection contains itself.
        case cycle
        /// Collections nest deeper than the reader allows.
        case tooDeep
        /// A count or length is impossible.
        case badCount
        /// An object marker byte is unknown or misplaced.
        case badMarker
        /// A dictionary key is not a string.
        case badKey
        /// A dictionary has the same key twice.
        case duplicateKey
        /// A string is malformed (bad encoding, unpaired surrogate, unrepresentable character).
        case badString
        /// A number is malformed or out of range.
        case badNumber
        /// Shared references expand to more objects than the input could hold.
        case referenceBomb
        /// The input uses a feature this codec does not support.
        case unsupported
        /// Text input (XML or JSON) is syntactically invalid.
        case syntax
        /// A value is not representable (a non-finite real in JSON, a date out of range).
        case badValue
    }

    /// The class of problem.
    public var kind: Kind
    /// A human-readable explanation of the problem.
    public var message: String
    /// Byte offset into the input (binary and JSON input).
    public var offset: Int?
    /// 1-based line for text formats (XML and JSON).
    public var line: Int?
    /// 1-based column for text formats.
    public var column: Int?

    /// Creates an error of `kind` with `message` and, where known, its position.
    public init(_ kind: Kind, _ message: String, offset: Int? = nil, line: Int? = nil, column: Int? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// The message followed by the position, if known.
    public var description: String {
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
public enum PlistFormat: String, Sendable, CaseIterable {
    /// Apple's binary format, `bplist00`.
    case binary
    /// Apple's XML format (PropertyList-1.0 DTD).
    case xml
    /// JSON, with dates as ISO 8601 strings and data as base64 strings.
    case json

    /// Guesses the format of `bytes` from its first non-blank characters.
    public static func sniff(_ bytes: some Collection<UInt8>) -> PlistFormat {
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
    /// Decodes `bytes` in binary or JSON form. XML is refused (``PlistError/Kind/unsupported``):
    /// FolioPlistXML reads it (`XMLPlist.decode`, `PlistValue.decodeAnyFormat`).
    public static func decode(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        switch PlistFormat.sniff(bytes) {
        case .binary: return try BinaryPlist.decode(bytes)
        case .xml: throw PlistError(.unsupported, "xml: this reader takes binary and JSON property lists; FolioPlistXML reads XML")
        case .json: return try JSONPlist.decode(bytes)
        }
    }

    /// Encodes the value in `format`.
    public func encoded(as format: PlistFormat) throws(PlistError) -> [UInt8] {
        switch format {
        case .binary: return BinaryPlist.encode(self)
        case .xml: return try XMLPlist.encode(self)
        case .json: return try JSONPlist.encode(self)
        }
    }
}
