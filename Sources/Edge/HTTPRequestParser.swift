/// The request methods the edge distinguishes.
enum RequestMethod: Equatable, Sendable {
    case get, head, other(String)

    var name: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .other(let m): m
        }
    }
}

/// What the edge needs from one request head; header values it does not use are skipped.
struct ParsedRequest: Equatable, Sendable {
    var method: RequestMethod
    /// The request target as sent (origin form expected).
    var target: String
    var keepAlive: Bool
    var conditions = Conditions()
    var acceptEncoding: Substring?
    var acceptLanguage: Substring?
    /// Content-Length of a body that follows the head (to be skipped), 0 when none.
    var contentLength = 0
    var chunked = false
}

/// A request the parser refuses, with the status to answer.
struct RequestError: Error, Equatable, Sendable {
    var status: Int
    var reason: String
    var message: String
}

/// A strict HTTP/1.1 request-head parser over raw bytes (RFC 9112 §2–§5), for GET and HEAD.
///
/// Written for the edge's hot path: one pass, no allocation for headers the edge ignores,
/// and hard limits on the request line, the head size and the header count.
struct HTTPRequestParser {
    var maxTargetBytes: Int
    var maxHeadBytes: Int
    var maxHeaderCount: Int

    enum Result: Equatable {
        /// More bytes are needed for a complete head.
        case incomplete
        /// A complete head of `length` bytes.
        case request(ParsedRequest, length: Int)
        case failure(RequestError)
    }

    static func isTokenChar(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    private static func bad(_ message: String) -> Result {
        .failure(RequestError(status: 400, reason: "Bad Request", message: message))
    }

    /// Parses the head at the start of `bytes`.
    func parse(_ bytes: UnsafeRawBufferPointer) -> Result {
        let n = bytes.count
        // Tolerate empty lines before a request (RFC 9112 §2.2).
        var start = 0
        while start < n, bytes[start] == 0x0D || bytes[start] == 0x0A { start += 1 }
        if start == n { return .incomplete }

        // Request line.
        guard let lineEnd = Self.findLF(bytes, from: start, limit: min(n, start + maxTargetBytes + 32)) else {
            if n - start > maxTargetBytes + 32 {
                return .failure(RequestError(status: 414, reason: "URI Too Long", message: "request line longer than \(maxTargetBytes + 32) bytes"))
            }
            return .incomplete
        }
        var i = start
        while i < lineEnd, Self.isTokenChar(bytes[i]) { i += 1 }
        guard i > start, i < lineEnd, bytes[i] == 0x20 else { return Self.bad("malformed request method") }
        let method: RequestMethod
        let m = UnsafeRawBufferPointer(rebasing: bytes[start..<i])
        if m.elementsEqual("GET".utf8) {
            method = .get
        } else if m.elementsEqual("HEAD".utf8) {
            method = .head
        } else {
            method = .other(String(decoding: m, as: UTF8.self))
        }
        i += 1
        let targetStart = i
        while i < lineEnd, bytes[i] > 0x20, bytes[i] < 0x7F { i += 1 }
        guard i > targetStart, i < lineEnd, bytes[i] == 0x20 else { return Self.bad("malformed request target") }
        guard i - targetStart <= maxTargetBytes else {
            return .failure(RequestError(status: 414, reason: "URI Too Long", message: "request target longer than \(maxTargetBytes) bytes"))
        }
        let target = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[targetStart..<i]), as: UTF8.self)
        i += 1
        var versionEnd = lineEnd
        if versionEnd > i, bytes[versionEnd - 1] == 0x0D { versionEnd -= 1 }
        let version = UnsafeRawBufferPointer(rebasing: bytes[i..<versionEnd])
        let http11: Bool
        if version.elementsEqual("HTTP/1.1".utf8) {
            http11 = true
        } else if version.elementsEqual("HTTP/1.0".utf8) {
            http11 = false
        } else if version.count == 8, version.starts(with: "HTTP/1.".utf8), version[7] >= 0x30, version[7] <= 0x39 {
            http11 = true  // a later HTTP/1.x minor version is handled as 1.1 (RFC 9112 §2.3)
        } else if version.count == 8, version.starts(with: "HTTP/".utf8), version[5] >= 0x30, version[5] <= 0x39 {
            return .failure(RequestError(status: 505, reason: "HTTP Version Not Supported", message: "only HTTP/1.0 and HTTP/1.1 are served"))
        } else {
            return Self.bad("malformed HTTP version")
        }

        // Header fields.
        var request = ParsedRequest(method: method, target: target, keepAlive: http11)
        var count = 0
        var hostCount = 0
        var contentLength: Int?
        var connectionClose = false
        var connectionKeepAlive = false
        var lineStart = lineEnd + 1
        while true {
            guard lineStart - start <= maxHeadBytes else {
                return .failure(RequestError(status: 431, reason: "Request Header Fields Too Large", message: "request head larger than \(maxHeadBytes) bytes"))
            }
            guard let end = Self.findLF(bytes, from: lineStart, limit: min(n, start + maxHeadBytes + 1)) else {
                if n - start > maxHeadBytes {
                    return .failure(RequestError(status: 431, reason: "Request Header Fields Too Large", message: "request head larger than \(maxHeadBytes) bytes"))
                }
                return .incomplete
            }
            var contentEnd = end
            if contentEnd > lineStart, bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            if contentEnd == lineStart {
                // The empty line: the head is complete.
                guard end + 1 - start <= maxHeadBytes else {
                    return .failure(RequestError(status: 431, reason: "Request Header Fields Too Large", message: "request head larger than \(maxHeadBytes) bytes"))
                }
                if hostCount > 1 { return Self.bad("more than one Host header") }
                if http11, hostCount == 0 { return Self.bad("missing Host header") }
                if connectionClose { request.keepAlive = false } else if connectionKeepAlive { request.keepAlive = true }
                if request.chunked, contentLength != nil { return Self.bad("both Content-Length and Transfer-Encoding") }
                request.contentLength = contentLength ?? 0
                return .request(request, length: end + 1)
            }
            count += 1
            guard count <= maxHeaderCount else {
                return .failure(RequestError(status: 431, reason: "Request Header Fields Too Large", message: "more than \(maxHeaderCount) header fields"))
            }
            let first = bytes[lineStart]
            guard first != 0x20, first != 0x09 else { return Self.bad("obsolete line folding in a header") }
            var colon = lineStart
            while colon < contentEnd, Self.isTokenChar(bytes[colon]) { colon += 1 }
            guard colon > lineStart, colon < contentEnd, bytes[colon] == UInt8(ascii: ":") else {
                return Self.bad("malformed header field")
            }
            var vs = colon + 1
            var ve = contentEnd
            while vs < ve, bytes[vs] == 0x20 || bytes[vs] == 0x09 { vs += 1 }
            while ve > vs, bytes[ve - 1] == 0x20 || bytes[ve - 1] == 0x09 { ve -= 1 }
            for k in vs..<ve {
                let b = bytes[k]
                if b < 0x20 && b != 0x09 || b == 0x7F { return Self.bad("control character in a header value") }
            }
            let name = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<colon])
            let value = UnsafeRawBufferPointer(rebasing: bytes[vs..<ve])
            func text() -> Substring { Substring(String(decoding: value, as: UTF8.self)) }
            switch name.count {
            case 4 where HeaderText.equalsLowercase(name, "host"): hostCount += 1
            case 5 where HeaderText.equalsLowercase(name, "range"): request.conditions.range = text()
            case 8 where HeaderText.equalsLowercase(name, "if-match"): request.conditions.ifMatch = text()
            case 8 where HeaderText.equalsLowercase(name, "if-range"): request.conditions.ifRange = text()
            case 10 where HeaderText.equalsLowercase(name, "connection"):
                for token in value.split(separator: UInt8(ascii: ",")) {
                    let t = HeaderText.trimBytes(token)
                    if HeaderText.equalsLowercase(t, "close") { connectionClose = true }
                    if HeaderText.equalsLowercase(t, "keep-alive") { connectionKeepAlive = true }
                }
            case 13 where HeaderText.equalsLowercase(name, "if-none-match"): request.conditions.ifNoneMatch = text()
            case 14 where HeaderText.equalsLowercase(name, "content-length"):
                guard !value.isEmpty, value.count <= 18, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    return Self.bad("malformed Content-Length")
                }
                let length = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                if let previous = contentLength, previous != length { return Self.bad("conflicting Content-Length headers") }
                contentLength = length
            case 15 where HeaderText.equalsLowercase(name, "accept-encoding"): request.acceptEncoding = text()
            case 15 where HeaderText.equalsLowercase(name, "accept-language"): request.acceptLanguage = text()
            case 17 where HeaderText.equalsLowercase(name, "if-modified-since"): request.conditions.ifModifiedSince = text()
            case 17 where HeaderText.equalsLowercase(name, "transfer-encoding"):
                guard http11 else { return Self.bad("Transfer-Encoding in an HTTP/1.0 request") }
                // The final coding of a request body must be chunked (RFC 9112 §6.3).
                let last = value.split(separator: UInt8(ascii: ",")).last.map { HeaderText.trimBytes($0) }
                guard let last, HeaderText.equalsLowercase(last, "chunked") else {
                    return Self.bad("Transfer-Encoding must end in chunked")
                }
                request.chunked = true
            case 19 where HeaderText.equalsLowercase(name, "if-unmodified-since"): request.conditions.ifUnmodifiedSince = text()
            default: break
            }
            lineStart = end + 1
        }
    }

    /// The index of the next LF at or after `from` and before `limit`.
    @inline(__always)
    static func findLF(_ bytes: UnsafeRawBufferPointer, from: Int, limit: Int) -> Int? {
        guard from < limit, let base = bytes.baseAddress else { return nil }
        guard let p = memchr(base + from, 0x0A, limit - from) else { return nil }
        return UnsafeRawPointer(p) - base
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
