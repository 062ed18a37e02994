import Foundation
import FolioPlist
import Yams

/// Scalars of the YAML 1.2 core schema, with YAML's timestamps and binary: text to property-list values.
enum YAMLScalars {
    static let nulls: Set<String> = ["", "~", "null", "Null", "NULL"]
    static let trues: Set<String> = ["true", "True", "TRUE"]
    static let falses: Set<String> = ["false", "False", "FALSE"]

    /// Whether `scalar` is a null: plain and untagged with a null's form, or tagged `!!null`.
    static func isNull(_ scalar: Node.Scalar) -> Bool {
        switch scalar.tag.rawValue {
        case "": scalar.style == .plain && nulls.contains(scalar.string)
        case Tag.Name.null.rawValue: nulls.contains(scalar.string)
        default: false
        }
    }

    /// The value of `scalar` by its tag, or by its form when it is plain and untagged; a null
    /// reads as ``PlistValue/null`` (the reader applies the file's ``NullPolicy`` before).
    static func value(_ scalar: Node.Scalar) throws(ReadError) -> PlistValue {
        let at = YAMLConverter.location(scalar.mark)
        let text = scalar.string
        let tag = scalar.tag.rawValue
        func wrong(_ kind: String) -> ReadError {
            ReadError(at, "\"\(text)\" is not \(kind) as its tag \(YAMLConverter.shortTag(tag)) says; fix the value or remove the tag")
        }
        switch tag {
        case "": return scalar.style == .plain ? try plain(text, at: at) : .string(text)
        case "!", Tag.Name.str.rawValue: return .string(text)
        case Tag.Name.null.rawValue:
            guard nulls.contains(text) else { throw wrong("null") }
            return .null
        case Tag.Name.bool.rawValue:
            if trues.contains(text) { return .bool(true) }
            if falses.contains(text) { return .bool(false) }
            throw wrong("a boolean")
        case Tag.Name.int.rawValue:
            guard let v = try integer(text, at: at) else { throw wrong("an integer") }
            return v
        case Tag.Name.float.rawValue:
            if let d = real(text) { return .real(d) }
            guard let v = try integer(text, at: at), let d = v.doubleValue else { throw wrong("a number") }
            return .real(d)
        case Tag.Name.timestamp.rawValue:
            guard let d = try timestamp(text, at: at) else { throw wrong("a timestamp") }
            return .date(d)
        case Tag.Name.binary.rawValue:
            let compact = String(text.unicodeScalars.filter { !" \t\r\n".unicodeScalars.contains($0) })
            guard let data = Data(base64Encoded: compact) else { throw wrong("base64") }
            return .data(data)
        default:
            throw ReadError(at, "the tag \(YAMLConverter.shortTag(tag)) has no property-list form; remove it or use a standard tag such as !!str")
        }
    }

    /// A plain, untagged scalar resolved by its form.
    static func plain(_ text: String, at: SourceLocation) throws(ReadError) -> PlistValue {
        if nulls.contains(text) { return .null }
        if trues.contains(text) { return .bool(true) }
        if falses.contains(text) { return .bool(false) }
        if let v = try integer(text, at: at) { return v }
        if let d = real(text) { return .real(d) }
        if let d = try timestamp(text, at: at) { return .date(d) }
        return .string(text)
    }

    static func isDigits(_ s: Substring, radix: Int) -> Bool {
        !s.isEmpty && s.allSatisfy { $0.isASCII && $0.hexDigitValue.map { $0 < radix } == true }
    }

    /// An integer in decimal, `0o` octal or `0x` hexadecimal; nil if `text` is not one; an error beyond 64 bits.
    static func integer(_ text: String, at: SourceLocation) throws(ReadError) -> PlistValue? {
        let tooBig = ReadError(at, "the integer \(text) does not fit in 64 bits; write it as a string or a real")
        for (prefix, radix) in [("0o", 8), ("0x", 16)] where text.hasPrefix(prefix) {
            let digits = text.dropFirst(2)
            guard isDigits(digits, radix: radix) else { return nil }
            guard let u = UInt64(digits, radix: radix) else { throw tooBig }
            return .integer(u)
        }
        let unsigned = text.first == "-" || text.first == "+" ? text.dropFirst() : text[...]
        guard isDigits(unsigned, radix: 10) else { return nil }
        if text.first == "-" {
            guard let i = Int64(text) else { throw tooBig }
            return .int(i)
        }
        guard let u = UInt64(unsigned) else { throw tooBig }
        return .integer(u)
    }

    /// A real in the core schema's forms (`1.5`, `.5`, `1e3`, `.inf`, `.nan`), or nil.
    static func real(_ text: String) -> Double? {
        var body = Substring(text)
        var sign = 1.0
        if let first = body.first, first == "-" || first == "+" { sign = first == "-" ? -1 : 1; body = body.dropFirst() }
        if [".inf", ".Inf", ".INF"].contains(body) { return sign * .infinity }
        if [".nan", ".NaN", ".NAN"].contains(text) { return .nan }
        var mantissa = body
        var exponent: Substring = ""
        if let e = body.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = body[..<e]
            exponent = body[body.index(after: e)...]
            if let s = exponent.first, s == "-" || s == "+" { exponent = exponent.dropFirst() }
            guard isDigits(exponent, radix: 10) else { return nil }
        }
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0], fraction = parts.count > 1 ? parts[1] : ""
        guard whole.isEmpty || isDigits(whole, radix: 10), fraction.isEmpty || isDigits(fraction, radix: 10),
              !(whole.isEmpty && fraction.isEmpty) else { return nil }
        let normal = "\(whole.isEmpty ? "0" : whole).\(fraction.isEmpty ? "0" : fraction)\(body[mantissa.endIndex...])"
        return Double(normal).map { sign * $0 }
    }
}
