#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The edge's request-head parser, a library so the fuzz targets can reach it. The parser is the
// edge's measured fast path: everything it calls is `@inlinable`, so the edge compiles it into
// its own module exactly as before the move.

/// The request methods the edge distinguishes.
package enum RequestMethod: Equatable, Sendable {
    case get, head, other(String)

    @inlinable
    package var name: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .other(let m): m
        }
    }
}

/// What the edge needs from one request head; header values it does not use are skipped.
/// The target and values are views into the bytes parsed (see `HeaderValue`).
package struct ParsedRequest: Equatable {
    package var method: RequestMethod
    /// The request target as sent (origin form expected).
    package var target: HeaderValue
    /// The target is a path as it stands: origin form, no query, fragment or percent escape.
    package var targetIsPlainPath = false
    package var keepAlive: Bool
    package var conditions = Conditions()
    package var acceptEncoding: HeaderValue?
    package var acceptLanguage: HeaderValue?
    /// Content-Length of a body that follows the head (to be skipped), 0 when none.
    package var contentLength = 0
    package var chunked = false

    /// Creates a request; the parser fills in the rest as it reads the headers.
    @inlinable
    package init(method: RequestMethod, target: HeaderValue, targetIsPlainPath: Bool = false, keepAlive: Bool) {
        self.method = method
        self.target = target
        self.targetIsPlainPath = targetIsPlainPath
        self.keepAlive = keepAlive
    }

    /// The same request with every view copied: safe to keep after the bytes are gone.
    @inlinable
    package func owned() -> ParsedRequest {
        var r = self
        r.target = target.owned()
        r.acceptEncoding = acceptEncoding?.owned()
        r.acceptLanguage = acceptLanguage?.owned()
        r.conditions = conditions.owned()
        return r
    }
}

/// Bytes of a request head (the target or one header value), viewed where they lie.
///
/// The parser hands these out instead of Strings, so answering a request allocates nothing.
/// A view made by the parser points into the connection's read buffer and is valid only while
/// that request is being answered (inside the `withUnsafeReadableBytes` around parse and
/// respond); `owned()` copies it for anything that outlives that. Views made from a String
/// (tests, log lines) own their bytes.
package struct HeaderValue: Equatable, ExpressibleByStringLiteral, CustomStringConvertible, @unchecked Sendable {
    package let bytes: UnsafeRawBufferPointer
    /// Keeps copied bytes alive; nil for a view into a read buffer.
    @usableFromInline let owner: Storage?

    @usableFromInline final class Storage {
        @usableFromInline let memory: UnsafeMutableRawBufferPointer
        @usableFromInline init(copying source: UnsafeRawBufferPointer) {
            memory = .allocate(byteCount: max(source.count, 1), alignment: 1)
            if source.count > 0 { memory.copyMemory(from: source) }
        }
        deinit { memory.deallocate() }
    }

    /// A borrowed view (see the type's note on lifetime).
    @inlinable
    package init(borrowing bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        owner = nil
    }

    /// A copy of `bytes` that owns its storage.
    @inlinable
    package init(copying bytes: UnsafeRawBufferPointer) {
        let storage = Storage(copying: bytes)
        self.bytes = UnsafeRawBufferPointer(start: storage.memory.baseAddress, count: bytes.count)
        owner = storage
    }

    package init(_ text: some StringProtocol) {
        var text = String(text)
        self = text.withUTF8 { HeaderValue(copying: UnsafeRawBufferPointer($0)) }
    }

    package init(stringLiteral value: String) { self.init(value) }

    /// The same bytes, owned: safe to keep after the request.
    @inlinable package func owned() -> HeaderValue { owner != nil ? self : HeaderValue(copying: bytes) }

    @inlinable package var count: Int { bytes.count }
    @inlinable package var isEmpty: Bool { bytes.isEmpty }
    @inlinable package var string: String { String(decoding: bytes, as: UTF8.self) }
    package var description: String { string }

    @inlinable
    package static func == (a: HeaderValue, b: HeaderValue) -> Bool {
        a.bytes.count == b.bytes.count && (a.bytes.count == 0 || memcmp(a.bytes.baseAddress!, b.bytes.baseAddress!, a.bytes.count) == 0)
    }
}

/// A request the parser refuses, with the status to answer.
package struct RequestError: Error, Equatable, Sendable {
    package var status: Int
    package var reason: String
    package var message: String

    @inlinable
    package init(status: Int, reason: String, message: String) {
        self.status = status
        self.reason = reason
        self.message = message
    }
}

/// A strict HTTP/1.1 request-head parser over raw bytes (RFC 9112 §2–§5), for GET and HEAD.
///
/// Written for the edge's hot path: one pass, no allocation for headers the edge ignores,
/// and hard limits on the request line, the head size and the header count.
package struct HTTPRequestParser {
    package var maxTargetBytes: Int
    package var maxHeadBytes: Int
    package var maxHeaderCount: Int

    /// A parser with these limits (the request line, the whole head, the number of header fields).
    @inlinable
    package init(maxTargetBytes: Int, maxHeadBytes: Int, maxHeaderCount: Int) {
        self.maxTargetBytes = maxTargetBytes
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderCount = maxHeaderCount
    }

    package enum Result: Equatable {
        /// More bytes are needed for a complete head.
        case incomplete
        /// A complete head of `length` bytes.
        case request(ParsedRequest, length: Int)
        case failure(RequestError)

        /// The result with its request's views copied (for keeping it after the bytes).
        @inlinable
        package func owned() -> Result {
            if case .request(let r, let length) = self { return .request(r.owned(), length: length) }
            return self
        }
    }

    @inlinable @inline(__always)
    package static func isTokenChar(_ b: UInt8) -> Bool { HeaderText.isTokenChar(b) }

    @inlinable
    static func bad(_ message: String) -> Result {
        .failure(RequestError(status: 400, reason: "Bad Request", message: message))
    }

    /// Parses the head at the start of `bytes`.
    @inlinable
    package func parse(_ bytes: UnsafeRawBufferPointer) -> Result {
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
        if m.count == 3, Self.load32(bytes, start) & 0x00FF_FFFF == Self.get {
            method = .get
        } else if m.count == 4, Self.load32(bytes, start) == Self.head {
            method = .head
        } else {
            method = .other(String(decoding: m, as: UTF8.self))
        }
        i += 1
        let targetStart = i
        // Printable ASCII; noting whether the target is a plain path (no ? # %).
        var plain = i < lineEnd && bytes[i] == UInt8(ascii: "/")
        // Eight bytes at a time while none is a space, control, non-ASCII, ?, # or %.
        while i + 8 <= lineEnd {
            let w = Self.word(bytes, i)
            if Self.hasByteBelow(w, 0x21) || w & Self.highBits != 0 || Self.hasByte(w, 0x7F) || Self.hasByte(w, UInt8(ascii: "?"))
                || Self.hasByte(w, UInt8(ascii: "#")) || Self.hasByte(w, UInt8(ascii: "%"))
            {
                break
            }
            i += 8
        }
        while i < lineEnd {
            let b = bytes[i]
            guard b > 0x20, b < 0x7F else { break }
            if b == UInt8(ascii: "?") || b == UInt8(ascii: "#") || b == UInt8(ascii: "%") { plain = false }
            i += 1
        }
        guard i > targetStart, i < lineEnd, bytes[i] == 0x20 else { return Self.bad("malformed request target") }
        guard i - targetStart <= maxTargetBytes else {
            return .failure(RequestError(status: 414, reason: "URI Too Long", message: "request target longer than \(maxTargetBytes) bytes"))
        }
        let target = HeaderValue(borrowing: UnsafeRawBufferPointer(rebasing: bytes[targetStart..<i]))
        i += 1
        var versionEnd = lineEnd
        if versionEnd > i, bytes[versionEnd - 1] == 0x0D { versionEnd -= 1 }
        let version = UnsafeRawBufferPointer(rebasing: bytes[i..<versionEnd])
        let http11: Bool
        let versionWord = version.count == 8 ? Self.load64(bytes, i) : 0
        if versionWord == Self.http11 {
            http11 = true
        } else if versionWord == Self.http10 {
            http11 = false
        } else if version.count == 8, version.starts(with: "HTTP/1.".utf8), version[7] >= 0x30, version[7] <= 0x39 {
            http11 = true  // a later HTTP/1.x minor version is handled as 1.1 (RFC 9112 §2.3)
        } else if version.count == 8, version.starts(with: "HTTP/".utf8), version[5] >= 0x30, version[5] <= 0x39 {
            return .failure(RequestError(status: 505, reason: "HTTP Version Not Supported", message: "only HTTP/1.0 and HTTP/1.1 are served"))
        } else {
            return Self.bad("malformed HTTP version")
        }

        // Header fields.
        var request = ParsedRequest(method: method, target: target, targetIsPlainPath: plain, keepAlive: http11)
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
            var k = vs
            while k + 8 <= ve {
                let w = Self.word(bytes, k)
                if Self.hasByteBelow(w, 0x20) || Self.hasByte(w, 0x7F) { break }
                k += 8
            }
            while k < ve {
                let b = bytes[k]
                if b < 0x20 && b != 0x09 || b == 0x7F { return Self.bad("control character in a header value") }
                k += 1
            }
            let name = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<colon])
            let value = UnsafeRawBufferPointer(rebasing: bytes[vs..<ve])
            func text() -> HeaderValue { HeaderValue(borrowing: value) }
            switch name.count {
            case 4 where Self.isName(name, "host"): hostCount += 1
            case 5 where Self.isName(name, "range"): request.conditions.range = text()
            case 8 where Self.isName(name, "if-match"): request.conditions.ifMatch = text()
            case 8 where Self.isName(name, "if-range"): request.conditions.ifRange = text()
            case 10 where Self.isName(name, "connection"):
                for token in value.split(separator: UInt8(ascii: ",")) {
                    let t = HeaderText.trimBytes(token)
                    if HeaderText.equalsLowercase(t, "close") { connectionClose = true }
                    if HeaderText.equalsLowercase(t, "keep-alive") { connectionKeepAlive = true }
                }
            case 13 where Self.isName(name, "if-none-match"): request.conditions.ifNoneMatch = text()
            case 14 where Self.isName(name, "content-length"):
                guard !value.isEmpty, value.count <= 18, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    return Self.bad("malformed Content-Length")
                }
                let length = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                if let previous = contentLength, previous != length { return Self.bad("conflicting Content-Length headers") }
                contentLength = length
            case 15 where Self.isName(name, "accept-encoding"): request.acceptEncoding = text()
            case 15 where Self.isName(name, "accept-language"): request.acceptLanguage = text()
            case 17 where Self.isName(name, "if-modified-since"): request.conditions.ifModifiedSince = text()
            case 17 where Self.isName(name, "transfer-encoding"):
                guard http11 else { return Self.bad("Transfer-Encoding in an HTTP/1.0 request") }
                // The final coding of a request body must be chunked (RFC 9112 §6.3).
                let last = value.split(separator: UInt8(ascii: ",")).last.map { HeaderText.trimBytes($0) }
                guard let last, HeaderText.equalsLowercase(last, "chunked") else {
                    return Self.bad("Transfer-Encoding must end in chunked")
                }
                request.chunked = true
            case 19 where Self.isName(name, "if-unmodified-since"): request.conditions.ifUnmodifiedSince = text()
            default: break
            }
            lineStart = end + 1
        }
    }

    @inlinable static var get: UInt32 { 0x0054_4547 }  // "GET", little-endian
    @inlinable static var head: UInt32 { 0x4441_4548 }  // "HEAD"
    @inlinable static var http11: UInt64 { 0x312E_312F_5054_5448 }  // "HTTP/1.1"
    @inlinable static var http10: UInt64 { 0x302E_312F_5054_5448 }  // "HTTP/1.0"

    // Word-at-a-time tests (eight bytes in a UInt64): exact for whether any byte qualifies.
    @inlinable static var lowBits: UInt64 { 0x0101_0101_0101_0101 }
    @inlinable static var highBits: UInt64 { 0x8080_8080_8080_8080 }

    @inlinable @inline(__always)
    static func word(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)
    }

    /// Whether some byte of `w` is below `n` (n ≤ 128).
    @inlinable @inline(__always)
    static func hasByteBelow(_ w: UInt64, _ n: UInt8) -> Bool {
        (w &- lowBits &* UInt64(n)) & ~w & highBits != 0
    }

    /// Whether some byte of `w` equals `v`.
    @inlinable @inline(__always)
    static func hasByte(_ w: UInt64, _ v: UInt8) -> Bool {
        hasByteBelow(w ^ (lowBits &* UInt64(v)), 1)
    }

    /// Whether a header name (a token) is `lower`, ignoring case. `lower` must consist of
    /// lowercase letters and `-` only, whose bytes all have bit 0x20 set: OR-ing 0x20 into a
    /// token byte then matches exactly the two cases of a letter, and `-` only itself.
    @inlinable @inline(__always)
    package static func isName(_ name: UnsafeRawBufferPointer, _ lower: StaticString) -> Bool {
        let n = name.count
        guard n == lower.utf8CodeUnitCount else { return false }
        let l = UnsafeRawPointer(lower.utf8Start)
        var i = 0
        while i + 8 <= n {
            if name.loadUnaligned(fromByteOffset: i, as: UInt64.self) | 0x2020_2020_2020_2020
                != l.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            {
                return false
            }
            i += 8
        }
        while i < n {
            if name[i] | 0x20 != l.load(fromByteOffset: i, as: UInt8.self) { return false }
            i += 1
        }
        return true
    }

    @inlinable @inline(__always)
    static func load32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self))
    }

    @inlinable @inline(__always)
    static func load64(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// The index of the next LF at or after `from` and before `limit`.
    @inlinable @inline(__always)
    package static func findLF(_ bytes: UnsafeRawBufferPointer, from: Int, limit: Int) -> Int? {
        guard from < limit, let base = bytes.baseAddress else { return nil }
        guard let p = memchr(base + from, 0x0A, limit - from) else { return nil }
        return UnsafeRawPointer(p) - base
    }
}
