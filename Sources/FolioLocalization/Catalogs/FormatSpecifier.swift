#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A format string that cannot be used: what is wrong, at a 0-based offset (in `Character`s) into the string.
package struct FormatSpecifierError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The 0-based offset, in `Character`s, of the `%` that starts the offending specifier.
    package var offset: Int
    /// What is wrong.
    package var message: String

    /// Creates an error at `offset`.
    package init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// The error as `offset N: message`.
    package var description: String { "offset \(offset): \(message)" }
}

/// Why a translation's format specifiers cannot stand in for the source's.
package struct FormatMismatch: Equatable, Sendable, CustomStringConvertible {
    /// A human-readable explanation that names the specifiers involved.
    package var message: String
    /// The 0-based offset, in `Character`s, of the offending specifier in the translation, when there is one.
    package var offset: Int?
    /// The translation only leaves an argument out: harmless at run time (Xcode, `String(localized:)`
    /// and Python's mappings accept it), so a warning rather than an error.
    package var isOmission: Bool

    /// Creates a mismatch.
    package init(message: String, offset: Int? = nil, isOmission: Bool = false) {
        self.message = message
        self.offset = offset
        self.isOmission = isOmission
    }

    /// The message, prefixed with the translation offset when there is one.
    package var description: String { offset.map { "offset \($0): \(message)" } ?? message }
}

/// One value for ``FormatSpecifier/format(_:_:)``.
public enum FormatArgument: Equatable, Sendable {
    /// An integer (also accepted by the floating-point and string conversions).
    case int(Int64)
    /// A floating-point number (also accepted by the integer and string conversions).
    case double(Double)
    /// A string (any conversion renders it as written).
    case string(String)
}

/// One printf-style conversion found in a string, such as `%d`, `%2$@`, `%-8.3lf` or Apple's `%#@files@`.
///
/// The syntax is POSIX `printf` plus Apple's extensions:
/// `%` [*position* `$`] [*flags* `-+ #0'`] [*width*: digits, `*` or `*`*n*`$`] [`.` *precision*: digits, `*` or `*`*n*`$`]
/// [*length* `hh h l ll q z t j L`] *conversion* (`d i u o x X c C s S p f F e E g G a A @`).
/// `%%` is a literal percent sign and is not a specifier. `%n` is rejected: it writes through a pointer.
/// Apple's plural variable `%#@name@` (also `%1$#@name@`) is returned as a specifier with conversion `@`,
/// `variable` set to the name and `kind` `.variable`; it consumes one argument, like in Foundation.
///
/// Use ``format(_:_:)`` to fill in a template's specifiers with ``FormatArgument`` values.
public struct FormatSpecifier: Equatable, Sendable {
    /// What kind of value a conversion consumes, after C's default argument promotions on a 64-bit (LP64) platform.
    ///
    /// Signedness is folded: `%d`, `%i`, `%u`, `%o`, `%x` and `%X` all read the same 32-bit `int`-sized slot
    /// (as do their `h`/`hh` forms, which are promoted to `int`), so they are interchangeable; the `l`, `ll`,
    /// `q`, `z`, `t` and `j` forms all read a 64-bit slot and are interchangeable with each other, but not with
    /// the 32-bit ones — as clang's `-Wformat` reports `%d` given an `Int64`.
    package enum Kind: Hashable, Sendable {
        /// A 32-bit integer: `%d %i %u %o %x %X`, with no length or `h`/`hh`.
        case int
        /// A 64-bit integer: the integer conversions with `l`, `ll`, `q`, `z`, `t` or `j`.
        case int64
        /// A `double`: `%f %F %e %E %g %G %a %A`, with no length or `l`.
        case double
        /// A `long double`: the floating-point conversions with `L`.
        case longDouble
        /// A character: `%c`, `%lc` and Apple's `%C` (a `unichar`).
        case char
        /// A NUL-terminated C string of bytes: `%s`.
        case cString
        /// A wide-character string: `%ls` and `%S` (Apple's `unichar *`).
        case wideString
        /// An object, printed through its description: `%@`.
        case object
        /// A pointer: `%p`.
        case pointer
        /// An Apple plural variable `%#@name@`, whose own format decides the argument's real type.
        case variable
    }

    /// How a width or a precision is given.
    package enum Amount: Equatable, Sendable {
        /// Written out, like the `5` in `%5d` (a bare `.` precision is `.fixed(0)`).
        case fixed(Int)
        /// `*`: taken from the next argument, an `int`.
        case nextArgument
        /// `*n$`: taken from the 1-based argument `n`, an `int`.
        case argument(Int)
    }

    /// The explicit 1-based argument position, from `%2$d`; nil for a sequential specifier.
    package var argument: Int?
    /// The flags as written, from `-+ #0'` (empty when none).
    package var flags: String
    /// The width as written: empty, digits, `*` or `*n$`.
    package var width: String
    /// The precision as written after the `.`: digits (possibly none), `*` or `*n$`; nil when there is no `.`.
    package var precision: String?
    /// The length modifier: "", "hh", "h", "l", "ll", "q", "z", "t", "j" or "L".
    package var length: String
    /// The conversion character, one of `d i u o x X c C s S p f F e E g G a A @`.
    package var conversion: Character
    /// The name of an Apple plural variable `%#@name@`, else nil.
    package var variable: String?
    /// The 0-based offset, in `Character`s, of the specifier's `%` in the string it was parsed from.
    package var offset: Int
    /// The specifier exactly as written, from `%` to the conversion (or the closing `@` of a variable).
    package var text: String

    /// Creates a specifier; ``kind`` follows from `conversion`, `length` and `variable`.
    package init(
        text: String, offset: Int, argument: Int? = nil, flags: String = "", width: String = "",
        precision: String? = nil, length: String = "", conversion: Character, variable: String? = nil
    ) {
        self.text = text
        self.offset = offset
        self.argument = argument
        self.flags = flags
        self.width = width
        self.precision = precision
        self.length = length
        self.conversion = conversion
        self.variable = variable
    }

    /// The kind of value the conversion consumes.
    package var kind: Kind {
        if variable != nil { return .variable }
        switch conversion {
        case "d", "i", "u", "o", "x", "X": return length.isEmpty || length.hasPrefix("h") ? .int : .int64
        case "c", "C": return .char
        case "s": return length == "l" ? .wideString : .cString
        case "S": return .wideString
        case "p": return .pointer
        case "@": return .object
        default: return length == "L" ? .longDouble : .double
        }
    }

    /// The width, or nil when there is none.
    package var widthAmount: Amount? { Self.amount(width) }

    /// The precision, or nil when there is none.
    package var precisionAmount: Amount? { precision.flatMap { $0.isEmpty ? .fixed(0) : Self.amount($0) } }

    /// Reads a width or precision text as written by the scanner.
    private static func amount(_ text: String) -> Amount? {
        if text.isEmpty { return nil }
        if text == "*" { return .nextArgument }
        if text.hasPrefix("*") { return Int(text.dropFirst().dropLast()).map { .argument($0) } }
        return Int(text).map { .fixed($0) }
    }

    // MARK: - Parsing

    /// The largest number accepted as a position, width or precision; larger ones make the specifier invalid.
    package static let maximumNumber = 9_999

    /// Every specifier in `s`, in order, skipping `%%`.
    ///
    /// Throws for the first invalid one — a trailing `%`, an unknown conversion such as `%y`, `%1$` with nothing
    /// after it, `%0$d`, `%n`, a length that does not fit the conversion (`%hf`, `%l@`), a number above
    /// ``maximumNumber``, or a malformed `%#@name@` — with the offset of its `%`.
    package static func parse(_ s: String) throws(FormatSpecifierError) -> [FormatSpecifier] {
        let bytes = Array(s.utf8)
        var result: [FormatSpecifier] = []
        var offsets = CharacterOffsets(s)
        var i = 0
        while i < bytes.count {
            guard bytes[i] == percent else {
                i += 1
                continue
            }
            if i + 1 < bytes.count, bytes[i + 1] == percent {
                i += 2
                continue
            }
            switch scan(bytes, at: i) {
            case .failure(let error):
                throw FormatSpecifierError(offset: offsets.offset(ofByte: error.start), message: error.message)
            case .success(let raw):
                result.append(
                    FormatSpecifier(
                        text: String(decoding: bytes[raw.start..<raw.end], as: UTF8.self),
                        offset: offsets.offset(ofByte: raw.start), argument: raw.argument, flags: raw.flags,
                        width: raw.width, precision: raw.precision, length: raw.length,
                        conversion: Character(Unicode.Scalar(raw.conversion)), variable: raw.variable))
                i = raw.end
            }
        }
        return result
    }

    /// The ASCII `%`.
    private static let percent = UInt8(ascii: "%")

    /// A specifier as found by ``scan(_:at:)``, with byte positions.
    struct RawSpecifier {
        /// The byte offset of the `%`.
        var start: Int
        /// The byte offset just past the specifier.
        var end: Int
        /// The explicit 1-based argument position.
        var argument: Int?
        /// The flags as written.
        var flags: String
        /// The width as written.
        var width: String
        /// The precision as written after the `.`, or nil.
        var precision: String?
        /// The length modifier.
        var length: String
        /// The conversion byte.
        var conversion: UInt8
        /// The plural variable's name, for `%#@name@`.
        var variable: String?
    }

    /// Why ``scan(_:at:)`` rejected a specifier, with the byte offset of its `%`.
    struct ScanError: Error {
        /// The byte offset of the `%`.
        var start: Int
        /// What is wrong.
        var message: String
    }

    /// Converts byte offsets into increasing `Character` offsets without rescanning from the start.
    private struct CharacterOffsets {
        /// The string being measured.
        let string: String
        /// The last `Character`-aligned index measured.
        var index: String.Index
        /// The `Character` offset of `index`.
        var count = 0

        /// Starts measuring `string`.
        init(_ string: String) {
            self.string = string
            self.index = string.startIndex
        }

        /// The offset of the `Character` holding the byte at `byte`; offsets must be asked for in increasing order.
        mutating func offset(ofByte byte: Int) -> Int {
            let raw = string.utf8.index(string.utf8.startIndex, offsetBy: byte)
            guard raw < string.endIndex else { return count + string.distance(from: index, to: string.endIndex) }
            // Round down to the start of the `Character` (a `%` may follow a prepended mark in the same cluster).
            let aligned = string.index(before: string.index(after: raw))
            if aligned > index {
                count += string.distance(from: index, to: aligned)
                index = aligned
            }
            return count
        }
    }

    /// Reads the specifier whose `%` is at `start` (which must not begin `%%`).
    static func scan(_ b: [UInt8], at start: Int) -> Result<RawSpecifier, ScanError> {
        let n = b.count
        var i = start + 1

        /// The specifier's text from its `%` up to `end` (to the end of that scalar), control characters escaped.
        func text(through end: Int) -> String {
            var stop = min(end, n)
            // Extend to the end of a multi-byte scalar so the quoted text stays valid UTF-8.
            while stop < n, b[stop] & 0xC0 == 0x80 { stop += 1 }
            var shown = ""
            for scalar in String(decoding: b[start..<stop], as: UTF8.self).unicodeScalars {
                shown += scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
            }
            return shown
        }
        /// A failure at this specifier.
        func fail(_ message: String) -> Result<RawSpecifier, ScanError> {
            .failure(ScanError(start: start, message: message))
        }
        /// The failure for a specifier cut off by the end of the string.
        func incomplete() -> Result<RawSpecifier, ScanError> {
            fail("incomplete format specifier \"\(text(through: n))\" at the end of the string")
        }
        /// Whether `c` is an ASCII digit.
        func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
        /// The value of the digits in `from..<to`, or nil when it exceeds `maximumNumber`.
        func number(_ from: Int, _ to: Int) -> Int? {
            var value = 0
            for k in from..<to {
                value = value * 10 + Int(b[k] - UInt8(ascii: "0"))
                if value > maximumNumber { return nil }
            }
            return value
        }
        /// The failure for a number above `maximumNumber`, quoting the specifier up to `end`.
        func tooLarge(_ end: Int) -> Result<RawSpecifier, ScanError> {
            fail("a number in \"\(text(through: end))\" is larger than \(maximumNumber)")
        }

        // Position: digits followed by `$`.
        var argument: Int?
        var j = i
        while j < n, isDigit(b[j]) { j += 1 }
        if j > i, j < n, b[j] == UInt8(ascii: "$") {
            guard let value = number(i, j) else { return tooLarge(j + 1) }
            guard value > 0 else { return fail("argument positions start at 1 in \"\(text(through: j + 1))\"") }
            argument = value
            i = j + 1
        }

        var flags = ""
        while i < n, let flag = Self.flagCharacters.first(where: { $0.asciiValue == b[i] }) {
            flags.append(flag)
            i += 1
        }

        /// A width or precision amount starting at `i`: digits, `*` or `*n$`; `""` when there is none.
        func amount() -> Result<String, ScanError> {
            let begin = i
            if i < n, b[i] == UInt8(ascii: "*") {
                i += 1
                var k = i
                while k < n, isDigit(b[k]) { k += 1 }
                if k > i {
                    guard k < n else { return .failure(ScanError(start: start, message: "")) }
                    guard b[k] == UInt8(ascii: "$") else {
                        return .failure(
                            ScanError(
                                start: start,
                                message: "expected \"$\" after the argument position in \"\(text(through: k + 1))\""))
                    }
                    guard let value = number(i, k) else {
                        return .failure(
                            ScanError(
                                start: start,
                                message: "a number in \"\(text(through: k + 1))\" is larger than \(maximumNumber)"))
                    }
                    guard value > 0 else {
                        return .failure(
                            ScanError(
                                start: start, message: "argument positions start at 1 in \"\(text(through: k + 1))\""))
                    }
                    i = k + 1
                }
            } else {
                while i < n, isDigit(b[i]) { i += 1 }
                if number(begin, i) == nil {
                    return .failure(
                        ScanError(
                            start: start, message: "a number in \"\(text(through: i))\" is larger than \(maximumNumber)"
                        ))
                }
            }
            return .success(String(decoding: b[begin..<i], as: UTF8.self))
        }

        let width: String
        switch amount() {
        case .success(let value): width = value
        case .failure(let error): return error.message.isEmpty ? incomplete() : .failure(error)
        }
        var precision: String?
        if i < n, b[i] == UInt8(ascii: ".") {
            i += 1
            switch amount() {
            case .success(let value): precision = value
            case .failure(let error): return error.message.isEmpty ? incomplete() : .failure(error)
            }
        }

        var length = ""
        if i < n {
            let c = b[i]
            if (c == UInt8(ascii: "h") || c == UInt8(ascii: "l")) && i + 1 < n && b[i + 1] == c {
                length = String(decoding: b[i..<(i + 2)], as: UTF8.self)
                i += 2
            } else if Self.lengthCharacters.contains(c) {
                length = String(decoding: [c], as: UTF8.self)
                i += 1
            }
        }

        guard i < n else { return incomplete() }
        let conversion = b[i]
        i += 1
        let conversionText = text(through: i)
        let allowed: [String]
        switch conversion {
        case UInt8(ascii: "d"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "o"), UInt8(ascii: "x"),
            UInt8(ascii: "X"):
            allowed = ["", "hh", "h", "l", "ll", "q", "z", "t", "j"]
        case UInt8(ascii: "c"), UInt8(ascii: "s"):
            allowed = ["", "l"]
        case UInt8(ascii: "C"), UInt8(ascii: "S"), UInt8(ascii: "p"), UInt8(ascii: "@"):
            allowed = [""]
        case UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "g"),
            UInt8(ascii: "G"), UInt8(ascii: "a"), UInt8(ascii: "A"):
            allowed = ["", "l", "L"]
        case UInt8(ascii: "n"):
            return fail("\"\(conversionText)\" is not allowed: %n writes to memory")
        default:
            let shown = String(
                String.UnicodeScalarView(
                    conversionText.unicodeScalars.dropFirst(text(through: i - 1).unicodeScalars.count)))
            return fail("invalid conversion \"\(shown)\" in \"\(conversionText)\"")
        }
        guard allowed.contains(length) else {
            return fail(
                "the length modifier \"\(length)\" cannot be used with %\(Character(Unicode.Scalar(conversion))) in \"\(conversionText)\""
            )
        }

        var variable: String?
        if conversion == UInt8(ascii: "@"), flags.contains("#") {
            let nameStart = i
            while i < n, Self.isVariableNameByte(b[i]) { i += 1 }
            guard i < n, b[i] == UInt8(ascii: "@") else {
                return fail("unterminated plural variable \"\(text(through: i))\": expected \"@\" after the name")
            }
            guard i > nameStart else { return fail("empty plural variable name in \"\(text(through: i + 1))\"") }
            variable = String(decoding: b[nameStart..<i], as: UTF8.self)
            i += 1
            guard flags == "#", width.isEmpty, precision == nil else {
                return fail(
                    "a plural variable takes no flags, width or precision in \"\(text(through: i))\"; write %#@name@")
            }
        }

        return .success(
            RawSpecifier(
                start: start, end: i, argument: argument, flags: flags, width: width, precision: precision,
                length: length, conversion: conversion, variable: variable))
    }

    /// The flag characters, in the order C lists them.
    private static let flagCharacters: [Character] = ["-", "+", " ", "#", "0", "'"]

    /// The single-character length modifiers.
    private static let lengthCharacters: [UInt8] = Array("hlqztjL".utf8)

    /// Whether `c` may appear in a plural variable name: ASCII letters, digits, `_`, `-` and `.`.
    private static func isVariableNameByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }

    // MARK: - Arguments

    /// What a specifier reads an argument for.
    package enum Role: Equatable, Sendable {
        /// The converted value.
        case value
        /// A `*` width.
        case width
        /// A `*` precision.
        case precision
    }

    /// The first use of one argument: its kind and the specifier (and part of it) that reads it.
    package struct ArgumentUse: Sendable {
        /// The kind of value read.
        package var kind: Kind
        /// The specifier that reads it.
        package var specifier: FormatSpecifier
        /// Which part of the specifier reads it.
        package var role: Role

        /// Creates a use.
        package init(kind: Kind, specifier: FormatSpecifier, role: Role) {
            self.kind = kind
            self.specifier = specifier
            self.role = role
        }

        /// The use as it reads in a message: `%d`, or `the * width of %*d`.
        package var described: String {
            switch role {
            case .value: return specifier.text
            case .width: return "the * width of \(specifier.text)"
            case .precision: return "the * precision of \(specifier.text)"
            }
        }
    }

    /// Maps each 1-based argument index to the kind of value `specs` read from it.
    ///
    /// Sequential specifiers (and sequential `*` widths and precisions, read before the value) take the next
    /// index; positional ones (`%2$d`, `*3$`) their own. Throws, at the offending specifier, when positional and
    /// sequential specifiers are mixed (as POSIX forbids), when one argument is read as two different kinds, or —
    /// unless `allowGaps` — when positions skip an index (C could not know the skipped argument's type).
    package static func arguments(_ specs: [FormatSpecifier], allowGaps: Bool = false) throws(FormatSpecifierError)
        -> [Int: Kind]
    {
        try uses(specs, allowGaps: allowGaps).mapValues(\.kind)
    }

    /// Like ``arguments(_:allowGaps:)``, but keeping the first specifier that reads each argument.
    package static func uses(_ specs: [FormatSpecifier], allowGaps: Bool) throws(FormatSpecifierError) -> [Int: ArgumentUse] {
        var uses: [Int: ArgumentUse] = [:]
        var next = 1
        var firstPositional: FormatSpecifier?
        var firstSequential: FormatSpecifier?

        /// Notes that `spec` reads argument `position` (or the next one) as `kind`, checking the rules above.
        func record(_ position: Int?, _ kind: Kind, _ spec: FormatSpecifier, _ role: Role) throws(FormatSpecifierError) {
            let index: Int
            if let position {
                index = position
                if firstPositional == nil { firstPositional = spec }
            } else {
                index = next
                next += 1
                if firstSequential == nil { firstSequential = spec }
            }
            if let positional = firstPositional, let sequential = firstSequential {
                throw FormatSpecifierError(
                    offset: spec.offset,
                    message:
                        "\(sequential.text) takes the next argument but \(positional.text) gives a position; "
                        + "use positions in every specifier or in none")
            }
            let use = ArgumentUse(kind: kind, specifier: spec, role: role)
            if let previous = uses[index] {
                if previous.kind != kind {
                    throw FormatSpecifierError(
                        offset: spec.offset,
                        message: "argument \(index) is used both as \(previous.described) and as \(use.described)")
                }
            } else {
                uses[index] = use
            }
        }

        for spec in specs {
            switch spec.widthAmount {
            case .nextArgument: try record(nil, .int, spec, .width)
            case .argument(let k): try record(k, .int, spec, .width)
            case .fixed, nil: break
            }
            switch spec.precisionAmount {
            case .nextArgument: try record(nil, .int, spec, .precision)
            case .argument(let k): try record(k, .int, spec, .precision)
            case .fixed, nil: break
            }
            try record(spec.argument, spec.kind, spec, .value)
        }

        if !allowGaps, let last = uses.keys.max(), uses.count < last, let user = uses[last] {
            let gap = (1...last).first { uses[$0] == nil } ?? last
            throw FormatSpecifierError(
                offset: user.specifier.offset,
                message:
                    "argument \(gap) is never used although \(user.described) uses argument \(last); "
                    + "positions cannot skip an argument")
        }
        return uses
    }

    // MARK: - Comparing

    /// Why `translation` cannot replace `source` as a format string, or nil when it can.
    ///
    /// Compatible means reading the same argument indices as the same ``Kind``s; order does not matter, so
    /// `%2$@ %1$d` may translate `%d %@`. With `allowFewer` (for plural `one` forms such as "one sonnet") the
    /// translation may leave arguments out, but it still may not read one as another kind or read one the
    /// source lacks. An invalid source, or an invalid translation, is itself reported as a mismatch.
    package static func compare(source: String, translation: String, allowFewer: Bool = false) -> FormatMismatch? {
        let sourceUses: [Int: ArgumentUse]
        do throws(FormatSpecifierError) {
            sourceUses = try uses(parse(source), allowGaps: false)
        } catch {
            return FormatMismatch(message: "the source has an invalid format specifier: \(error.message)")
        }
        let translationUses: [Int: ArgumentUse]
        do throws(FormatSpecifierError) {
            translationUses = try uses(parse(translation), allowGaps: true)
        } catch {
            return FormatMismatch(
                message: "the translation has an invalid format specifier: \(error.message)", offset: error.offset)
        }

        for index in translationUses.keys.sorted() {
            guard let theirs = translationUses[index], let ours = sourceUses[index], theirs.kind != ours.kind else {
                continue
            }
            return FormatMismatch(
                message:
                    "the translation uses \(theirs.described) for argument \(index) where the source uses \(ours.described)",
                offset: theirs.specifier.offset)
        }
        let sourceCount = sourceUses.keys.max() ?? 0
        if let last = translationUses.keys.max(), last > sourceCount, let extra = translationUses[last] {
            return FormatMismatch(
                message: "the translation has \(plural(last, "argument")), the source has \(sourceCount)",
                offset: extra.specifier.offset)
        }
        if !allowFewer {
            for index in 1..<(sourceCount + 1) where translationUses[index] == nil {
                let ours = sourceUses[index].map { " (\($0.described))" } ?? ""
                return FormatMismatch(message: "argument \(index)\(ours) is missing from the translation", isOmission: true)
            }
        }
        return nil
    }

    /// `count` followed by `noun`, with an `s` unless `count` is 1.
    private static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    // MARK: - Formatting

    /// `template` with each specifier replaced by its argument from `args`, printf-style, never trapping.
    ///
    /// Supports the conversions above with flags, widths, precisions, `*` and `*n$`, positions and `%%`.
    /// Decisions, where C would be undefined or unhelpful:
    /// - A specifier whose argument (or `*` argument) is missing, or whose `*` argument is a string, is left as
    ///   written; an invalid specifier (a trailing `%`, `%y`) is left as written too.
    /// - A string argument is rendered as written by any conversion (padded to the width); `%@`/`%s` render an
    ///   integer in decimal and a double in its shortest form (`2.5`, `3`); integer conversions truncate a
    ///   double toward zero; floating-point conversions accept integers.
    /// - `h`/`hh` narrow integers as C does; otherwise a value that fits a 32-bit `int` prints as C prints it
    ///   (`%x` of -1 is `ffffffff`) and a larger one prints in full rather than being silently truncated.
    /// - `%c`/`%C` print the Unicode scalar with that value (U+FFFD when there is none); widths and
    ///   precisions of strings count `Character`s, not bytes. `%p` prints `0x` and hexadecimal digits.
    /// - `%#@name@` is left as written but consumes its argument, so later sequential specifiers line up.
    /// - Floating-point conversions use the C library's `vsnprintf` on a format built here (so the decimal
    ///   point follows `LC_NUMERIC`, which is "C" unless the process calls `setlocale`); `'` is ignored.
    public static func format(_ template: String, _ args: [FormatArgument]) -> String {
        let bytes = Array(template.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var i = 0
        var literalStart = 0
        var next = 0
        while i < bytes.count {
            guard bytes[i] == percent else {
                i += 1
                continue
            }
            if i + 1 < bytes.count, bytes[i + 1] == percent {
                out += bytes[literalStart..<i]
                out.append(percent)
                i += 2
                literalStart = i
                continue
            }
            guard case .success(let raw) = scan(bytes, at: i) else {
                i += 1  // not a specifier: the `%` stays as written
                continue
            }
            out += bytes[literalStart..<i]
            if let rendered = render(raw, args, next: &next) {
                out += rendered.utf8
            } else {
                out += bytes[raw.start..<raw.end]
            }
            i = raw.end
            literalStart = i
        }
        out += bytes[literalStart...]
        return String(decoding: out, as: UTF8.self)
    }

    /// One specifier rendered with its arguments, or nil to leave it as written.
    private static func render(_ raw: RawSpecifier, _ args: [FormatArgument], next: inout Int) -> String? {
        /// Argument `position` (1-based), or the next sequential one; nil when there is no such argument.
        func take(_ position: Int?) -> FormatArgument? {
            let index: Int
            if let position {
                index = position - 1
            } else {
                index = next
                next += 1
            }
            return args.indices.contains(index) ? args[index] : nil
        }
        /// The integer a `*` argument gives, or nil when it is missing or not a number.
        func star(_ position: Int?) -> Int? {
            switch take(position) {
            case .int(let v): return Int(clamping: v)
            case .double(let d) where d.isFinite: return Int(max(min(d, 1e9), -1e9))
            default: return nil
            }
        }

        var flags = raw.flags
        var width: Int?
        var precision: Int?
        switch amount(raw.width) {
        case .fixed(let w): width = w
        case .nextArgument: guard let w = star(nil) else { return nil }; width = w
        case .argument(let k): guard let w = star(k) else { return nil }; width = w
        case nil: break
        }
        if let w = width, w < 0 {
            flags.append("-")
            width = w == Int.min ? maximumNumber : -w
        }
        width = width.map { min($0, maximumNumber) }
        if let text = raw.precision {
            switch text.isEmpty ? .fixed(0) : amount(text) {
            case .fixed(let p): precision = p
            case .nextArgument: guard let p = star(nil) else { return nil }; precision = p
            case .argument(let k): guard let p = star(k) else { return nil }; precision = p
            case nil: break
            }
            if let p = precision, p < 0 { precision = nil }  // C: a negative precision is taken as if omitted
            precision = precision.map { min($0, maximumNumber) }
        }

        guard let argument = take(raw.argument), raw.variable == nil else { return nil }
        let left = flags.contains("-")
        let c = Character(Unicode.Scalar(raw.conversion))
        switch c {
        case "d", "i", "u", "o", "x", "X":
            let value: Int64
            switch argument {
            case .int(let v): value = v
            case .double(let d):
                guard let v = Int64(exactly: d.rounded(.towardZero)) else {
                    return formatDouble(d, "f", flags: flags, width: width, precision: 0)
                }
                value = v
            case .string(let s): return pad(s, width: width, left: left, precision: nil)
            }
            return formatInteger(value, c, length: raw.length, flags: flags, width: width, precision: precision)
        case "c", "C":
            switch argument {
            case .string(let s): return pad(s, width: width, left: left, precision: nil)
            case .int(let v): return pad(character(v), width: width, left: left, precision: nil)
            case .double(let d):
                let v = d.isFinite ? Int64(max(min(d, 1e18), -1e18)) : 0xFFFD
                return pad(character(v), width: width, left: left, precision: nil)
            }
        case "p":
            switch argument {
            case .int(let v): return pad("0x" + String(UInt64(bitPattern: v), radix: 16), width: width, left: left, precision: nil)
            case .double(let d): return pad(shortest(d), width: width, left: left, precision: nil)
            case .string(let s): return pad(s, width: width, left: left, precision: nil)
            }
        case "s", "S", "@":
            switch argument {
            case .string(let s): return pad(s, width: width, left: left, precision: precision)
            case .int(let v): return pad(String(v), width: width, left: left, precision: precision)
            case .double(let d): return pad(shortest(d), width: width, left: left, precision: precision)
            }
        default:
            switch argument {
            case .double(let d): return formatDouble(d, c, flags: flags, width: width, precision: precision)
            case .int(let v): return formatDouble(Double(v), c, flags: flags, width: width, precision: precision)
            case .string(let s): return pad(s, width: width, left: left, precision: nil)
            }
        }
    }

    /// `s` cut to `precision` `Character`s and padded with spaces to `width`, on the left unless `left`.
    private static func pad(_ s: String, width: Int?, left: Bool, precision: Int?) -> String {
        var s = s
        if let precision, s.count > precision { s = String(s.prefix(precision)) }
        guard let width else { return s }
        let count = s.count
        guard count < width else { return s }
        let spaces = String(repeating: " ", count: width - count)
        return left ? s + spaces : spaces + s
    }

    /// The Unicode scalar with value `v`, or U+FFFD when there is none.
    private static func character(_ v: Int64) -> String {
        guard let u = UInt32(exactly: v), let scalar = Unicode.Scalar(u) else { return "\u{FFFD}" }
        return String(Character(scalar))
    }

    /// `d` as `%@` shows an `NSNumber`: the shortest round-tripping form, without a trailing `.0`.
    private static func shortest(_ d: Double) -> String {
        let text = d.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// An integer conversion of `value`, narrowed as `length` says (see ``format(_:_:)``).
    private static func formatInteger(
        _ value: Int64, _ conversion: Character, length: String, flags: String, width: Int?, precision: Int?
    ) -> String {
        let signed = conversion == "d" || conversion == "i"
        let negative: Bool
        let magnitude: UInt64
        if signed {
            let v: Int64
            switch length {
            case "hh": v = Int64(Int8(truncatingIfNeeded: value))
            case "h": v = Int64(Int16(truncatingIfNeeded: value))
            default: v = value
            }
            negative = v < 0
            magnitude = v.magnitude
        } else {
            negative = false
            switch length {
            case "hh": magnitude = UInt64(UInt8(truncatingIfNeeded: value))
            case "h": magnitude = UInt64(UInt16(truncatingIfNeeded: value))
            case "":
                magnitude =
                    value >= Int64(Int32.min) && value <= Int64(UInt32.max)
                    ? UInt64(UInt32(truncatingIfNeeded: value)) : UInt64(bitPattern: value)
            default: magnitude = UInt64(bitPattern: value)
            }
        }

        var digits: String
        switch conversion {
        case "o": digits = String(magnitude, radix: 8)
        case "x": digits = String(magnitude, radix: 16)
        case "X": digits = String(magnitude, radix: 16, uppercase: true)
        default: digits = String(magnitude)
        }
        if precision == 0 && magnitude == 0 { digits = "" }
        if let precision, digits.utf8.count < precision {
            digits = String(repeating: "0", count: precision - digits.utf8.count) + digits
        }
        var prefix = ""
        if negative {
            prefix = "-"
        } else if signed && flags.contains("+") {
            prefix = "+"
        } else if signed && flags.contains(" ") {
            prefix = " "
        }
        if flags.contains("#") {
            if conversion == "o" && !digits.hasPrefix("0") { digits = "0" + digits }
            if magnitude != 0 && conversion == "x" { prefix += "0x" }
            if magnitude != 0 && conversion == "X" { prefix += "0X" }
        }
        let count = prefix.utf8.count + digits.utf8.count
        guard let width, count < width else { return prefix + digits }
        let fill = width - count
        if flags.contains("-") { return prefix + digits + String(repeating: " ", count: fill) }
        if flags.contains("0") && precision == nil { return prefix + String(repeating: "0", count: fill) + digits }
        return String(repeating: " ", count: fill) + prefix + digits
    }

    /// A floating-point conversion of `d` through the C library, on a format assembled from checked parts.
    private static func formatDouble(
        _ d: Double, _ conversion: Character, flags: String, width: Int?, precision: Int?
    ) -> String {
        var spec = "%"
        for flag in flagCharacters where flag != "'" && flags.contains(flag) { spec.append(flag) }
        if let width { spec += String(width) }
        if let precision { spec += "." + String(precision) }
        spec.append(conversion)
        var buffer = [CChar](repeating: 0, count: 64)
        for _ in 0..<2 {
            let written = withVaList([d]) { list in
                buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, spec, list) }
            }
            guard written >= 0 else { return shortest(d) }
            if Int(written) < buffer.count {
                return String(decoding: buffer[..<Int(written)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            buffer = [CChar](repeating: 0, count: Int(written) + 1)
        }
        return shortest(d)
    }
}
