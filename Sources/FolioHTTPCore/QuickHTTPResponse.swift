import Foundation
import NIOHTTP1

/// The client's plain-HTTP GET (see `QuickHTTP` in the client): the response it reads and the
/// reading of one response from the bytes received, kept apart from the socket so it can be
/// fuzzed. The client adds the connection handling in an extension.
package enum QuickHTTP {
    package struct Response {
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
        package var description: String
        /// Nothing of the response had arrived (the request may be sent again on a new socket).
        package var beforeResponse = false

        package init(description: String, beforeResponse: Bool = false) {
            self.description = description
            self.beforeResponse = beforeResponse
        }
    }

    /// One response read from the bytes as they arrive: framed by Content-Length (none for 204
    /// and 304), else by the server closing the connection.
    package struct ResponseReader {
        /// Everything received so far.
        package private(set) var data: [UInt8] = []
        private var head: (end: Int, status: Int, headers: HTTPHeaders)?
        private var contentLength: Int?
        private let maxBody: Int

        package init(maxBody: Int) { self.maxBody = maxBody }

        /// Takes the next bytes received; true once the response is complete (by its
        /// Content-Length), false while more is expected. Throws for a response it cannot read.
        package mutating func append(_ bytes: ArraySlice<UInt8>) throws -> Bool {
            data.append(contentsOf: bytes)
            if head == nil, let end = QuickHTTP.find(data, [13, 10, 13, 10]) {
                guard let parsed = QuickHTTP.parseHead(Array(data[0..<end])) else { throw Failure(description: "malformed response head") }
                if parsed.headers.first(name: "transfer-encoding") != nil { throw Failure(description: "unexpected chunked response") }
                head = (end + 4, parsed.status, parsed.headers)
                contentLength = parsed.headers.first(name: "content-length").flatMap { Int($0) }
                if let cl = contentLength, cl < 0 { throw Failure(description: "malformed Content-Length \(cl)") }
                if parsed.status == 304 || parsed.status == 204 { contentLength = 0 }
            }
            if let h = head?.end {
                if data.count - h > maxBody { throw Failure(description: "response body larger than \(maxBody) bytes") }
                if let cl = contentLength, data.count - h >= cl { return true }
            } else if data.count > 65536 {
                throw Failure(description: "response head larger than 64 KiB")
            }
            return false
        }

        /// The response once complete or once the server closed the connection (`closed`), and
        /// whether the connection can carry another request.
        package func finish(closed: Bool) throws -> (Response, reusable: Bool) {
            guard let head else {
                throw Failure(description: "connection closed before a complete response", beforeResponse: data.isEmpty)
            }
            var body = Array(data[head.end...])
            if let cl = contentLength {
                guard body.count >= cl else { throw Failure(description: "response body truncated") }
                body = Array(body[0..<cl])
            }
            let reusable = !closed && contentLength != nil
                && head.headers.first(name: "connection")?.lowercased().contains("close") != true
            return (Response(status: head.status, headers: head.headers, body: body, headBytes: head.end), reusable)
        }
    }

    static func find(_ data: [UInt8], _ needle: [UInt8]) -> Int? {
        guard data.count >= needle.count else { return nil }
        for i in 0...(data.count - needle.count) where data[i] == needle[0] && Array(data[i..<(i + needle.count)]) == needle {
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
