import CLibXML2
import Foundation

/// libxml2's one-time set-up, shared by every reader that uses it: `xmlInitParser` must run once
/// before threads parse in parallel (the Builder reads catalogs on all cores), and libxml2 2.9 does
/// not guard against two threads calling it at once. A Swift static runs its initialiser once.
package enum LibXML2Setup {
    /// True once `xmlInitParser` has run.
    package static let initialised: Bool = {
        xmlInitParser()
        return true
    }()
}

/// The XML property list codec (Apple's PropertyList-1.0 DTD), reading through libxml2.
public enum XMLPlist {
    private static let initialised: Bool = LibXML2Setup.initialised

    /// Decodes an XML plist; errors carry the line (and column where libxml2 knows it).
    public static func decode(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        _ = initialised
        guard let ctxt = xmlNewParserCtxt() else {
            throw PlistError(.syntax, "xml: cannot create a parser")
        }
        defer { xmlFreeParserCtxt(ctxt) }
        // HUGE lifts libxml2's 256-level depth cap; our own limit (512) still applies below.
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_HUGE.rawValue)
        let doc: xmlDocPtr? = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { chars in
                xmlCtxtReadMemory(ctxt, chars.baseAddress, Int32(clamping: chars.count), nil, nil, options)
            }
        }
        guard let doc else {
            if let err = xmlCtxtGetLastError(ctxt) {
                let message = err.pointee.message.map { String(cString: $0) }?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "malformed XML"
                throw PlistError(.syntax, "xml: \(message)", line: Int(err.pointee.line), column: Int(err.pointee.int2))
            }
            throw PlistError(.syntax, "xml: malformed XML")
        }
        defer { xmlFreeDoc(doc) }
        guard let root = xmlDocGetRootElement(doc) else {
            throw PlistError(.syntax, "xml: document has no root element")
        }
        if name(root) == "plist" {
            let children = try elements(root)
            guard children.count == 1 else {
                throw PlistError(.badValue, "xml: <plist> must hold exactly one value, found \(children.count)", line: line(root))
            }
            return try value(children[0], depth: 0)
        }
        return try value(root, depth: 0)
    }

    private static func name(_ node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0) } ?? ""
    }

    private static func line(_ node: xmlNodePtr) -> Int {
        Int(xmlGetLineNo(node))
    }

    /// The element children of `node`; text other than whitespace between them is an error.
    private static func elements(_ node: xmlNodePtr) throws(PlistError) -> [xmlNodePtr] {
        var out: [xmlNodePtr] = []
        var child = node.pointee.children
        while let c = child {
            switch c.pointee.type {
            case XML_ELEMENT_NODE: out.append(c)
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                var p = c.pointee.content
                while let q = p, q.pointee != 0 {
                    guard q.pointee == 0x20 || q.pointee == 0x09 || q.pointee == 0x0A || q.pointee == 0x0D else {
                        throw PlistError(.badValue, "xml: unexpected text inside <\(name(node))>", line: line(c))
                    }
                    p = q + 1
                }
            default: break
            }
            child = c.pointee.next
        }
        return out
    }

    /// The concatenated text of `node`'s text and CDATA children.
    private static func text(_ node: xmlNodePtr) throws(PlistError) -> String {
        var bytes: [UInt8] = []
        var child = node.pointee.children
        while let c = child {
            switch c.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = c.pointee.content {
                    var p = content
                    while p.pointee != 0 { bytes.append(p.pointee); p += 1 }
                }
            case XML_COMMENT_NODE, XML_PI_NODE: break
            case XML_ENTITY_REF_NODE:
                throw PlistError(.unsupported, "xml: entity references are not supported in <\(name(node))>", line: line(node))
            default:
                throw PlistError(.badValue, "xml: <\(name(node))> must hold only text", line: line(node))
            }
            child = c.pointee.next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func value(_ node: xmlNodePtr, depth: Int) throws(PlistError) -> PlistValue {
        guard depth < BinaryPlist.maxDepth else {
            throw PlistError(.tooDeep, "xml: collections nest deeper than \(BinaryPlist.maxDepth)", line: line(node))
        }
        let tag = name(node)
        switch tag {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "string": return .string(try text(node))
        case "integer":
            let s = try text(node).trimmingCharacters(in: .whitespacesAndNewlines)
            if let i = Int64(s) { return .int(i) }
            if let u = UInt64(s) { return .uint(u) }
            if s.hasPrefix("0x"), let u = UInt64(s.dropFirst(2), radix: 16) { return .integer(u) }
            throw PlistError(.badNumber, "xml: <integer> \"\(s)\" is not a 64-bit integer", line: line(node))
        case "real":
            let s = try text(node).trimmingCharacters(in: .whitespacesAndNewlines)
            switch s.lowercased() {
            case "nan": return .real(.nan)
            case "inf", "+inf", "infinity", "+infinity": return .real(.infinity)
            case "-inf", "-infinity": return .real(-.infinity)
            default:
                if let d = Double(s) { return .real(d) }
                throw PlistError(.badNumber, "xml: <real> \"\(s)\" is not a number", line: line(node))
            }
        case "date":
            let s = try text(node).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let d = PlistDates.parseISO8601(s) else {
                throw PlistError(.badValue, "xml: <date> \"\(s)\" is not an ISO 8601 date like 2001-01-01T00:00:00Z", line: line(node))
            }
            return .date(d)
        case "data":
            let s = try text(node).filter { !$0.isWhitespace }
            guard let d = Data(base64Encoded: s) else {
                throw PlistError(.badValue, "xml: <data> is not valid base64", line: line(node))
            }
            return .data(d)
        case "array":
            var items: [PlistValue] = []
            for child in try elements(node) { items.append(try value(child, depth: depth + 1)) }
            return .array(items)
        case "dict":
            let children = try elements(node)
            guard children.count % 2 == 0 else {
                throw PlistError(.badValue, "xml: <dict> has a <key> without a value", line: line(node))
            }
            var dict: [String: PlistValue] = [:]
            dict.reserveCapacity(children.count / 2)
            var i = 0
            while i < children.count {
                let k = children[i]
                guard name(k) == "key" else {
                    throw PlistError(.badKey, "xml: expected <key> in <dict>, found <\(name(k))>", line: line(k))
                }
                let key = try text(k)
                let v = try value(children[i + 1], depth: depth + 1)
                if dict.updateValue(v, forKey: key) != nil {
                    throw PlistError(.duplicateKey, "xml: <dict> has the key \"\(key)\" twice", line: line(k))
                }
                i += 2
            }
            if dict.count == 1, case .int(let uid)? = dict["CF$UID"], uid >= 0 {
                return .uid(UInt64(uid))
            }
            return .dict(dict)
        default:
            throw PlistError(.badValue, "xml: unknown element <\(tag)>", line: line(node))
        }
    }

    /// Encodes `value` in Apple's XML plist layout, tab-indented; sets become arrays, UIDs `CF$UID` dictionaries.
    public static func encode(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """
        try write(value, indent: 0, into: &out)
        out += "</plist>\n"
        return Array(out.utf8)
    }

    private static func write(_ value: PlistValue, indent: Int, into out: inout String) throws(PlistError) {
        let pad = String(repeating: "\t", count: indent)
        switch value {
        case .bool(let b): out += pad + (b ? "<true/>\n" : "<false/>\n")
        case .int(let i): out += "\(pad)<integer>\(i)</integer>\n"
        case .uint(let u): out += "\(pad)<integer>\(u)</integer>\n"
        case .real(let r): out += "\(pad)<real>\(formatReal(r))</real>\n"
        case .date(let d): out += "\(pad)<date>\(PlistDates.formatISO8601(d))</date>\n"
        case .data(let d): out += "\(pad)<data>\(d.base64EncodedString())</data>\n"
        case .string(let s): out += "\(pad)<string>\(try escape(s))</string>\n"
        case .uid(let u):
            out += "\(pad)<dict>\n\(pad)\t<key>CF$UID</key>\n\(pad)\t<integer>\(u)</integer>\n\(pad)</dict>\n"
        case .array(let items), .set(let items):
            if items.isEmpty { out += "\(pad)<array/>\n"; return }
            out += "\(pad)<array>\n"
            for item in items { try write(item, indent: indent + 1, into: &out) }
            out += "\(pad)</array>\n"
        case .dict(let dict):
            if dict.isEmpty { out += "\(pad)<dict/>\n"; return }
            out += "\(pad)<dict>\n"
            for key in dict.keys.sorted() {
                out += "\(pad)\t<key>\(try escape(key))</key>\n"
                try write(dict[key]!, indent: indent + 1, into: &out)
            }
            out += "\(pad)</dict>\n"
        }
    }

    /// Formats a real the way Foundation does in XML plists.
    package static func formatReal(_ r: Double) -> String {
        if r.isNaN { return "nan" }
        if r.isInfinite { return r < 0 ? "-inf" : "inf" }
        if r == 0 { return r.sign == .minus ? "-0" : "0" }
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return "\(r)"
    }

    private static func escape(_ s: String) throws(PlistError) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\r": out += "&#13;"  // a raw CR would be normalised to LF by any XML parser
            case "\t", "\n": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    throw PlistError(.badString, "xml: the string \(String(reflecting: s)) holds U+\(String(scalar.value, radix: 16, uppercase: true)), which XML cannot represent")
                }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// ISO 8601 dates as property lists write them: UTC, whole seconds.
package enum PlistDates {
    /// Days from 1970-01-01 to the given proleptic Gregorian date (days from civil, Howard
    /// Hinnant's algorithm, exact for every year).
    package static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The largest distance from 2001-01-01, in seconds, of a date the readers accept: about
    /// 31,700 years, beyond Foundation's `distantPast` and `distantFuture`. Infinities, NaN and
    /// dates past this are refused, as CoreFoundation's and plistlib's calendars cannot hold them.
    package static let maximumMagnitude: Double = 1e12

    /// Formats `date` as `YYYY-MM-DDTHH:MM:SSZ`.
    ///
    /// Readers refuse dates beyond ``maximumMagnitude``; one made in code is clamped to that range
    /// here, so formatting never traps.
    package static func formatISO8601(_ date: Date) -> String {
        let limit = maximumMagnitude
        let sinceReference = date.timeIntervalSinceReferenceDate
        let clamped = sinceReference.isNaN ? 0 : min(max(sinceReference, -limit), limit)
        var t = time_t(floor(clamped + Date.timeIntervalBetween1970AndReferenceDate))
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year = Int(parts.tm_year) + 1900
        var y = String(year)
        if year >= 0, year < 1000 { y = String(repeating: "0", count: 4 - y.count) + y }
        return "\(y)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS(.fff)Z` (or a `±HH:MM` offset).
    package static func parseISO8601(_ s: String) -> Date? {
        let u = Array(s.utf8)
        func num(_ from: Int, _ len: Int) -> Int? {
            guard from + len <= u.count else { return nil }
            var v = 0
            for b in u[from..<(from + len)] {
                guard b >= 48, b <= 57 else { return nil }
                v = v * 10 + Int(b - 48)
            }
            return v
        }
        guard u.count >= 20, let year = num(0, 4), u[4] == 45, let month = num(5, 2), u[7] == 45,
            let day = num(8, 2), u[10] == 84, let hour = num(11, 2), u[13] == 58,
            let minute = num(14, 2), u[16] == 58, let second = num(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < u.count, u[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < u.count, u[i] >= 48, u[i] <= 57 {
                fraction += Double(u[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        var offset = 0
        guard i < u.count else { return nil }
        if u[i] == 90 {
            i += 1
        } else if u[i] == 43 || u[i] == 45, let oh = num(i + 1, 2), i + 3 < u.count, u[i + 3] == 58, let om = num(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (u[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == u.count else { return nil }
        let days = PlistDates.daysFromEpoch(year: year, month: month, day: day)
        let seconds = Double(days * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }
}
