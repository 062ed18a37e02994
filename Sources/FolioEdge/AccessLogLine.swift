import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the combined and JSON formats add to a request's line, beside what the edge knows anyway:
/// read only when one of them is on, so the edge does nothing more per request otherwise.
struct RequestDetails: Sendable {
    /// The client's IP address (`-` when unknown).
    var remoteAddress: String
    /// `HTTP/1.1`, `HTTP/1.0`, `HTTP/2.0`; `-` for a request that could not be read.
    var protocolName: String
    var referer: String?
    var userAgent: String?

    init(remoteAddress: String, protocolName: String, referer: String? = nil, userAgent: String? = nil) {
        self.remoteAddress = remoteAddress
        self.protocolName = protocolName
        self.referer = referer
        self.userAgent = userAgent
    }

    /// From a request head in HTTP/1.1 form: the version that ends its request line (unless
    /// `protocolName` is given), and its Referer and User-Agent fields.
    init(head: UnsafeRawBufferPointer, remoteAddress: String, protocolName: String? = nil) {
        self.init(remoteAddress: remoteAddress, protocolName: protocolName ?? "-")
        var lineStart = 0
        var first = true
        while lineStart < head.count {
            var end = lineStart
            while end < head.count, head[end] != 0x0A { end += 1 }
            var contentEnd = end
            if contentEnd > lineStart, head[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            let line = UnsafeRawBufferPointer(rebasing: head[lineStart..<contentEnd])
            if first {
                first = false
                if protocolName == nil, let space = line.lastIndex(of: 0x20) {
                    self.protocolName = String(decoding: line[(space + 1)...], as: UTF8.self)
                }
            } else if line.isEmpty {
                break
            } else {
                field(line)
            }
            lineStart = end + 1
        }
    }

    private mutating func field(_ line: UnsafeRawBufferPointer) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        guard name == "referer" || name == "user-agent" else { return }
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        if name == "referer" { referer = value } else { userAgent = value }
    }
}

/// One answered request as a line of the combined or JSON format.
struct AccessLogRecord {
    var time: Date
    var details: RequestDetails
    var method: String
    var target: String
    var status: Int
    var bytes: Int
    var durationMicroseconds: Int64
    var requestID: String

    func line(_ format: AccessLogFormat) -> String {
        format == .json ? jsonLine : combinedLine
    }

    /// nginx's `combined`: `$remote_addr - $remote_user [$time_local] "$request" $status
    /// $body_bytes_sent "$http_referer" "$http_user_agent"`, with nginx's escaping (`"`, `\`,
    /// control and non-ASCII bytes as `\xHH`) and `-` for what is missing.
    var combinedLine: String {
        let request = method == "-" ? "-" : "\(method) \(target) \(details.protocolName)"
        return "\(details.remoteAddress) - - [\(AccessLogClock.local(time))] \"\(Self.ncsa(request))\" \(status) \(bytes) "
            + "\"\(Self.ncsa(details.referer ?? "-"))\" \"\(Self.ncsa(details.userAgent ?? "-"))\"\n"
    }

    /// One JSON object: time (RFC 3339, UTC, milliseconds), remote_addr, method, path (the
    /// target as sent), protocol, status, bytes, duration_us, referer, user_agent (null when
    /// absent), request_id.
    var jsonLine: String {
        var s = "{\"time\":\"\(AccessLogClock.iso8601(time))\",\"remote_addr\":\(Self.json(details.remoteAddress))"
        s += ",\"method\":\(Self.json(method)),\"path\":\(Self.json(target)),\"protocol\":\(Self.json(details.protocolName))"
        s += ",\"status\":\(status),\"bytes\":\(bytes),\"duration_us\":\(durationMicroseconds)"
        s += ",\"referer\":\(details.referer.map(Self.json) ?? "null"),\"user_agent\":\(details.userAgent.map(Self.json) ?? "null")"
        s += ",\"request_id\":\(Self.json(requestID))}\n"
        return s
    }

    static func ncsa(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F || $0 == 0x22 || $0 == 0x5C }) else { return text }
        var out = ""
        for b in text.utf8 {
            if b < 0x20 || b >= 0x7F || b == 0x22 || b == 0x5C {
                out += "\\x" + String(b, radix: 16, uppercase: true).leftPadded(2)
            } else {
                out.unicodeScalars.append(Unicode.Scalar(b))
            }
        }
        return out
    }

    static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u" + String(scalar.value, radix: 16).leftPadded(4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// The access log's time stamps, formatted once a second: `27/Nov/2026:20:07:26 +0000` (local
/// time, as nginx's `$time_local`) and `2026-11-27T20:07:26.123Z`.
enum AccessLogClock {
    private struct Cache {
        var second = -1
        var local = ""
        var utc = ""
    }

    private static let cache = Mutex(Cache())
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func local(_ date: Date) -> String { stamps(date).local }

    static func iso8601(_ date: Date) -> String {
        let millis = Int(date.timeIntervalSince1970 * 1000) % 1000
        let ms = String(millis)
        return stamps(date).utc + "." + String(repeating: "0", count: 3 - ms.count) + ms + "Z"
    }

    private static func stamps(_ date: Date) -> (local: String, utc: String) {
        let second = Int(date.timeIntervalSince1970)
        if let hit = cache.withLock({ $0.second == second ? ($0.local, $0.utc) : nil }) { return hit }
        var t = time_t(second)
        var tm = Glibc.tm()
        localtime_r(&t, &tm)
        let offset = tm.tm_gmtoff / 60
        let sign = offset < 0 ? "-" : "+"
        let local = "\(two(Int(tm.tm_mday)))/\(months[Int(tm.tm_mon)])/\(tm.tm_year + 1900):\(two(Int(tm.tm_hour))):\(two(Int(tm.tm_min))):\(two(Int(tm.tm_sec))) "
            + "\(sign)\(two(abs(offset) / 60))\(two(abs(offset) % 60))"
        gmtime_r(&t, &tm)
        let utc = "\(tm.tm_year + 1900)-\(two(Int(tm.tm_mon) + 1))-\(two(Int(tm.tm_mday)))T\(two(Int(tm.tm_hour))):\(two(Int(tm.tm_min))):\(two(Int(tm.tm_sec)))"
        cache.withLock { $0 = Cache(second: second, local: local, utc: utc) }
        return (local, utc)
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
