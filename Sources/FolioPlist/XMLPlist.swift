import Foundation

/// The XML property list codec (Apple's PropertyList-1.0 DTD). Writing is here; reading, through
/// libxml2, is `XMLPlist.decode` in FolioPlistXML, which an app that reads only binary (and JSON)
/// property lists does without.
public enum XMLPlist {
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
