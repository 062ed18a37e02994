import FolioHTTPCore
import NIOHTTP1

/// Header fields as a cache reads them.
enum CacheFields {
    /// Every value of `name`, lines joined with ", " (the combined field value, RFC 9110 §5.3).
    static func combined(_ headers: HTTPHeaders, _ name: String) -> String? {
        let lines = headers[name]
        return lines.isEmpty ? nil : lines.joined(separator: ", ")
    }

    /// The field names a `Vary` lists, lowercased; `["*"]` when it varies on everything.
    static func vary(_ headers: HTTPHeaders) -> [String] {
        headers["vary"].flatMap { $0.split(separator: ",") }
            .map { HeaderText.trimmed($0).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// A date in any of the three HTTP formats (RFC 9110 §5.6.7): IMF-fixdate, RFC 850 and
    /// asctime; seconds since 1970, or nil.
    static func date(_ text: String?) -> Int64? {
        guard let text else { return nil }
        let t = HeaderText.trimmed(text)
        if let d = HTTPDate.parse(HeaderValue(t)) { return d }
        // An IMF-fixdate in the wrong case (`thu, 18 AUG 2050 … gmt`) is still unambiguous.
        if t.utf8.count == 29 {
            let fixed = t.prefix(1).uppercased() + t.dropFirst().prefix(7).lowercased() + t.dropFirst(8).prefix(1).uppercased()
                + t.dropFirst(9).prefix(17).lowercased() + t.dropFirst(26).uppercased()
            if fixed != t, let d = HTTPDate.parse(HeaderValue(fixed)) { return d }
        }
        let parts = t.split(whereSeparator: { $0 == " " || $0 == "\t" })
        func month(_ s: Substring) -> Int? {
            ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].firstIndex(of: String(s)).map { $0 + 1 }
        }
        func time(_ s: Substring) -> (Int, Int, Int)? {
            let hms = s.split(separator: ":")
            guard hms.count == 3, let h = Int(hms[0]), let m = Int(hms[1]), let sec = Int(hms[2]), h < 24, m < 60, sec < 61 else { return nil }
            return (h, m, sec)
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (the full day name, a two-digit year).
        let longDays = ["Monday,", "Tuesday,", "Wednesday,", "Thursday,", "Friday,", "Saturday,", "Sunday,"]
        if parts.count == 4, longDays.contains(String(parts[0])), parts[3] == "GMT" {
            let dmy = parts[1].split(separator: "-")
            guard dmy.count == 3, dmy[0].count == 2, dmy[2].count == 2, let day = Int(dmy[0]), let mon = month(dmy[1]), var year = Int(dmy[2]),
                let (h, m, s) = time(parts[2])
            else {
                return nil
            }
            year += year < 70 ? 2000 : 1900
            return epoch(year: year, month: mon, day: day, h, m, s)
        }
        // asctime: Sun Nov  6 08:49:37 1994
        if parts.count == 5, let mon = month(parts[1]), let day = Int(parts[2]), let (h, m, s) = time(parts[3]), let year = Int(parts[4]) {
            return epoch(year: year, month: mon, day: day, h, m, s)
        }
        return nil
    }

    static func epoch(year: Int, month: Int, day: Int, _ hour: Int, _ minute: Int, _ second: Int) -> Int64? {
        guard (1...31).contains(day), (1...12).contains(month) else { return nil }
        return HTTPDate.epochSeconds(year: year, month: month, day: day, hour, minute, second)
    }

    /// Hop-by-hop fields (RFC 9110 §7.6.1), never stored or forwarded, plus those `Connection` names.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authorization",
    ]

    /// `headers` without hop-by-hop fields.
    static func endToEnd(_ headers: HTTPHeaders) -> HTTPHeaders {
        var named = hopByHop
        for line in headers["connection"] {
            for n in line.split(separator: ",") { named.insert(HeaderText.trimmed(n).lowercased()) }
        }
        var out = HTTPHeaders()
        for (name, value) in headers where !named.contains(name.lowercased()) { out.add(name: name, value: value) }
        return out
    }
}
