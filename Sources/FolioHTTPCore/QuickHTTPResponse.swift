import Foundation
import NIOHTTP1

/// The client's plain-HTTP GET (see `QuickHTTP` in the client): the response it reads and the
/// reading of one response from the bytes received, kept apart from the socket so it can be
/// fuzzed. The client adds the connection handling in an extension.
package enum QuickHTTP {
    package struct Response: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: [UInt8]
        package var headBytes: Int

        package init(status: Int, headers: HTTPHeaders, body: [UInt8], headBytes: Int) {
            self.status = status
            self.headers = headers
            self.body = body
            self.headBytes = headBytes
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package enum Kind: Sendable { case refused, timedOut, other }
        package var description: String
        /// Nothing of the response had arrived (the request may be sent again on a new socket).
        package var beforeResponse = false
        package var kind: Kind

        package init(description: String, beforeResponse: Bool = false, kind: Kind = .other) {
            self.description = description
            self.beforeResponse = beforeResponse
            self.kind = kind
        }
    }

    /// One response read from the bytes as they arrive: framed by Content-Length (none for 204
    /// and 304), by chunked transfer coding, else by the server closing the connection
    /// (RFC 9112 §6.3). Interim 1xx responses (103 Early Hints, …) are skipped.
    package struct ResponseReader {
        /// Everything received so far.
        package private(set) var data: [UInt8] = []
        private var head: (end: Int, status: Int, headers: HTTPHeaders)?
        private var contentLength: Int?
        /// Set for a chunked body: where decoding has got to and what it decoded.
        private var chunked: ChunkedBody?
        /// Head bytes of interim responses already skipped.
        private var interimBytes = 0
        private let maxBody: Int

        package init(maxBody: Int) { self.maxBody = maxBody }

        /// Takes the next bytes received; true once the response is complete (by its
        /// Content-Length or last chunk), false while more is expected. Throws for a response it
        /// cannot read.
        package mutating func append(_ bytes: ArraySlice<UInt8>) throws -> Bool {
            data.append(contentsOf: bytes)
            while head == nil, let end = QuickHTTP.find(data, [13, 10, 13, 10]) {
                guard let parsed = QuickHTTP.parseHead(Array(data[0..<end])) else { throw Failure(description: "malformed response head") }
                if (100..<200).contains(parsed.status) {
                    guard parsed.status != 101 else { throw Failure(description: "unexpected 101 Switching Protocols") }
                    interimBytes += end + 4
                    data.removeFirst(end + 4)
                    continue
                }
                head = (end + 4, parsed.status, parsed.headers)
                let noBody = parsed.status == 304 || parsed.status == 204
                if let te = parsed.headers.first(name: "transfer-encoding"), !noBody {
                    // Transfer-Encoding overrides Content-Length; chunked must be the last coding.
                    guard te.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) == ["chunked"] else {
                        throw Failure(description: "unsupported transfer coding \(te)")
                    }
                    chunked = ChunkedBody(cursor: end + 4)
                } else {
                    let lengths = parsed.headers[canonicalForm: "content-length"]
                    if let first = lengths.first {
                        guard lengths.allSatisfy({ $0 == first }), first.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let cl = Int(first) else {
                            throw Failure(description: "malformed Content-Length \(lengths.joined(separator: ", "))")
                        }
                        contentLength = cl
                    }
                    if noBody { contentLength = 0 }
                }
            }
            guard let h = head?.end else {
                if data.count > 65536 { throw Failure(description: "response head larger than 64 KiB") }
                return false
            }
            if chunked != nil {
                try chunked!.decode(data, maxBody: maxBody)
                return chunked!.done
            }
            if data.count - h > maxBody { throw Failure(description: "response body larger than \(maxBody) bytes") }
            if let cl = contentLength, data.count - h >= cl { return true }
            return false
        }

        /// The response once complete or once the server closed the connection (`closed`), and
        /// whether the connection can carry another request.
        package func finish(closed: Bool) throws -> (Response, reusable: Bool) {
            guard let head else {
                throw Failure(description: "connection closed before a complete response", beforeResponse: data.isEmpty && interimBytes == 0)
            }
            var body: [UInt8]
            if let chunked {
                guard chunked.done else { throw Failure(description: "response body truncated (chunked)") }
                body = chunked.body
            } else {
                body = Array(data[head.end...])
                if let cl = contentLength {
                    guard body.count >= cl else { throw Failure(description: "response body truncated") }
                    body = Array(body[0..<cl])
                }
            }
            let framed = contentLength != nil || chunked != nil
            let reusable = !closed && framed
                && head.headers.first(name: "connection")?.lowercased().contains("close") != true
            return (Response(status: head.status, headers: head.headers, body: body, headBytes: interimBytes + head.end), reusable)
        }
    }

    /// Decodes a chunked body incrementally (RFC 9112 §7.1): chunk extensions are ignored and
    /// trailer fields dropped.
    struct ChunkedBody {
        enum State { case size, data(remaining: Int), dataEnd, trailer }
        var cursor: Int
        var state = State.size
        var body: [UInt8] = []
        var done = false

        init(cursor: Int) { self.cursor = cursor }

        mutating func decode(_ data: [UInt8], maxBody: Int) throws {
            while !done {
                switch state {
                case .size:
                    guard let lineEnd = QuickHTTP.find(data, [13, 10], from: cursor) else {
                        if data.count - cursor > 4096 { throw Failure(description: "chunk size line too long") }
                        return
                    }
                    var size = 0
                    var digits = 0
                    var i = cursor
                    while i < lineEnd, let d = Self.hexValue(data[i]) {
                        guard digits < 15 else { throw Failure(description: "chunk size too large") }
                        size = size << 4 | d
                        digits += 1
                        i += 1
                    }
                    // After the size: nothing, or whitespace and/or a `;` chunk extension.
                    guard digits > 0, i == lineEnd || data[i] == 59 || data[i] == 32 || data[i] == 9 else {
                        throw Failure(description: "malformed chunk size")
                    }
                    cursor = lineEnd + 2
                    if size == 0 {
                        state = .trailer
                    } else {
                        guard body.count + size <= maxBody else { throw Failure(description: "response body larger than \(maxBody) bytes") }
                        state = .data(remaining: size)
                    }
                case .data(let remaining):
                    let take = min(remaining, data.count - cursor)
                    guard take > 0 else { return }
                    body.append(contentsOf: data[cursor..<(cursor + take)])
                    cursor += take
                    state = take == remaining ? .dataEnd : .data(remaining: remaining - take)
                case .dataEnd:
                    guard data.count - cursor >= 2 else { return }
                    guard data[cursor] == 13, data[cursor + 1] == 10 else { throw Failure(description: "malformed chunk: no CRLF after its data") }
                    cursor += 2
                    state = .size
                case .trailer:
                    guard let lineEnd = QuickHTTP.find(data, [13, 10], from: cursor) else {
                        if data.count - cursor > 65536 { throw Failure(description: "trailer section larger than 64 KiB") }
                        return
                    }
                    if lineEnd == cursor { done = true }
                    cursor = lineEnd + 2
                }
            }
        }

        static func hexValue(_ c: UInt8) -> Int? {
            switch c {
            case 48...57: Int(c - 48)
            case 65...70: Int(c - 55)
            case 97...102: Int(c - 87)
            default: nil
            }
        }
    }

    static func find(_ data: [UInt8], _ needle: [UInt8], from start: Int = 0) -> Int? {
        guard data.count - start >= needle.count else { return nil }
        for i in start...(data.count - needle.count) where data[i] == needle[0] && Array(data[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }

    static func parseHead(_ bytes: [UInt8]) -> (status: Int, headers: HTTPHeaders)? {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else { return nil }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            // A field name is a token (RFC 9110 §5.1); HTTPHeaders traps on one that is not ASCII.
            guard colon > line.startIndex, line[..<colon].utf8.allSatisfy(HTTPRequestParser.isTokenChar) else { return nil }
            headers.add(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return (status, headers)
    }
}
