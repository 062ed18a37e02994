import Foundation
import FolioPlist
import TOMLKit

/// TOML 1.0 content files through TOMLKit: date-times become dates (local ones as UTC), local times strings.
enum ContentTOML {
    /// Reads a TOML document.
    static func read(_ bytes: [UInt8]) throws(ReadError) -> PlistValue {
        let text = try TextPosition.text(bytes, format: "TOML")
        try TOMLPrecheck.check(bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes[3...] : bytes[...])
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let begin = error.source.begin
            throw ReadError(line: max(begin.line, 1), column: max(begin.column, 1), message: "\(error.description); fix the TOML syntax here")
        } catch {
            throw ReadError(line: 1, column: 1, message: "TOML could not be read: \(error)")
        }
        return .dict(try dictionary(table, depth: 0))
    }

    static func dictionary(_ table: TOMLTable, depth: Int) throws(ReadError) -> [String: PlistValue] {
        guard depth < StructuredReader.maxDepth else {
            throw ReadError(line: 1, column: 1, message: "values nest deeper than \(StructuredReader.maxDepth) levels; flatten the data")
        }
        var dict: [String: PlistValue] = [:]
        for (key, value) in zip(table.keys, table.values) {
            dict[key] = try convert(value, depth: depth + 1)
        }
        return dict
    }

    static func convert(_ value: TOMLValue, depth: Int) throws(ReadError) -> PlistValue {
        switch value.type {
        case .table: return .dict(try value.table.map { t throws(ReadError) in try dictionary(t, depth: depth) } ?? [:])
        case .array:
            var items: [PlistValue] = []
            for item in value.array.map(Array.init) ?? [] {
                items.append(try convert(item.tomlValue, depth: depth + 1))
            }
            return .array(items)
        case .string: return .string(value.string ?? "")
        case .int: return .int(Int64(value.int ?? 0))
        case .double: return .real(value.double ?? 0)
        case .bool: return .bool(value.bool ?? false)
        case .date:
            let d = value.date ?? TOMLDate(year: 1970, month: 1, day: 1)
            return .date(CivilTime.date(year: d.year, month: d.month, day: d.day))
        case .time: return .string(timeText(value.time ?? TOMLTime(hour: 0, minute: 0, second: 0, nanoSecond: 0)))
        case .dateTime:
            guard let dt = value.dateTime else { return .string("") }
            return .date(CivilTime.date(
                year: dt.date.year, month: dt.date.month, day: dt.date.day, hour: dt.time.hour, minute: dt.time.minute,
                second: dt.time.second, nanosecond: dt.time.nanoSecond, offsetMinutes: dt.offset?.offset ?? 0))
        }
    }

    /// A local time as `HH:MM:SS`, with a fraction (`.fff`, trailing zeros dropped) when it has one.
    static func timeText(_ t: TOMLTime) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var text = "\(two(t.hour)):\(two(t.minute)):\(two(t.second))"
        if t.nanoSecond > 0 {
            var fraction = String(t.nanoSecond + 1_000_000_000).dropFirst()
            while fraction.hasSuffix("0") { fraction = fraction.dropLast() }
            text += "." + fraction
        }
        return text
    }
}

/// Finding a value's line in TOML text, best effort: the line of its key or table header.
extension ContentTOML {
    /// The line (and column of the key) where the value at `tokens` is written, or of its nearest written ancestor.
    static func locate(_ tokens: [String], in bytes: [UInt8]) -> SourceLocation? {
        guard (try? read(bytes)) != nil else { return nil }
        if tokens.isEmpty { return SourceLocation(line: 1, column: 1) }
        var header: [String] = []
        var arrayIndex: [[String]: Int] = [:]
        var best: (length: Int, location: SourceLocation)?
        var inMultiline = false
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (number, raw) in lines.enumerated() {
            let fences = raw.components(separatedBy: "\"\"\"").count + raw.components(separatedBy: "'''").count - 2
            defer { if fences % 2 == 1 { inMultiline.toggle() } }
            let line = raw.drop { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" }
            guard !inMultiline, let first = line.first, first != "#" else { continue }
            let at = SourceLocation(line: number + 1, column: raw.unicodeScalars.count - line.unicodeScalars.count + 1)
            let path: [String]
            if first == "[" {
                header = tableHeader(line, arrayIndex: &arrayIndex)
                path = header
            } else if let equals = keyEnd(line) {
                path = header + keySegments(line[..<equals])
            } else {
                continue
            }
            if path == tokens { return at }
            if tokens.starts(with: path), path.count > (best?.length ?? 0) { best = (path.count, at) }
        }
        return best?.location
    }

    /// The path a `[table]` or `[[array.of.tables]]` header opens, counting the array's entries.
    static func tableHeader(_ line: Substring, arrayIndex: inout [[String]: Int]) -> [String] {
        let isArray = line.hasPrefix("[[")
        let inner = line.dropFirst(isArray ? 2 : 1)
        guard let close = keyEnd(inner, terminator: "]") else { return [] }
        let segments = keySegments(inner[..<close])
        var resolved: [String] = []
        for (n, segment) in segments.enumerated() {
            resolved.append(segment)
            if isArray, n == segments.count - 1 {
                let index = (arrayIndex[resolved] ?? -1) + 1
                arrayIndex[resolved] = index
                resolved.append(String(index))
            } else if let index = arrayIndex[resolved] {
                resolved.append(String(index))
            }
        }
        return resolved
    }

    /// Where the key part of `text` ends (at `=`, or at `terminator`), outside quotes.
    static func keyEnd(_ text: Substring, terminator: Character = "=") -> Substring.Index? {
        var quote: Character?
        for i in text.indices {
            let c = text[i]
            if let q = quote { if c == q { quote = nil } } else if c == "\"" || c == "'" { quote = c } else if c == terminator { return i }
        }
        return nil
    }

    /// The segments of a dotted key, quotes removed.
    static func keySegments(_ key: Substring) -> [String] {
        var segments: [String] = [], current = "", quote: Character?
        for c in key {
            if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "." {
                segments.append(current)
                current = ""
            } else if c != " " && c != "\t" {
                current.append(c)
            }
        }
        segments.append(current)
        return segments
    }
}
