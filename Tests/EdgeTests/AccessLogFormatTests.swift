import FolioTestSupport
import Foundation
import Testing

@testable import FolioEdge

/// The access log's lines and its writer, without a server: what the combined and JSON formats
/// make of awkward requests, and the buffered file across a reopen.
@Suite("access log lines and writer")
struct AccessLogFormatTests {
    static func details(_ head: String, protocolName: String? = nil) -> RequestDetails {
        Array(head.utf8).withUnsafeBytes { RequestDetails(head: $0, remoteAddress: "192.0.2.7", protocolName: protocolName) }
    }

    static func record(_ details: RequestDetails, target: String = "/a b") -> AccessLogRecord {
        AccessLogRecord(
            time: Date(timeIntervalSince1970: 1_700_000_000.25), details: details, method: "GET", target: target, status: 200, bytes: 12,
            durationMicroseconds: 345, requestID: "7-2")
    }

    @Test("the head's version, Referer and User-Agent, any case, CRLF or LF, and nothing past the blank line")
    func details() {
        let d = Self.details("GET / HTTP/1.0\r\nuser-AGENT:  curl/8 \r\nREFERER: https://x.example/\r\n\r\nUser-Agent: later\r\n")
        #expect(d.protocolName == "HTTP/1.0" && d.userAgent == "curl/8" && d.referer == "https://x.example/")
        let bare = Self.details("GET / HTTP/1.1\nHost: a\n\n", protocolName: "HTTP/2.0")
        #expect(bare.protocolName == "HTTP/2.0" && bare.userAgent == nil && bare.referer == nil)
    }

    @Test("combined: nginx's escapes for quotes, backslashes, control and non-ASCII bytes; - for what is missing")
    func combined() {
        var d = Self.details("GET / HTTP/1.1\r\nUser-Agent: Zoë \"x\" \\ \u{7F}\r\n\r\n")
        d.referer = nil
        let line = Self.record(d, target: "/caf\u{E9}?q=\"1\"").combinedLine
        #expect(line.hasPrefix("192.0.2.7 - - ["))
        #expect(line.hasSuffix("] \"GET /caf\\xC3\\xA9?q=\\x221\\x22 HTTP/1.1\" 200 12 \"-\" \"Zo\\xC3\\xAB \\x22x\\x22 \\x5C \\x7F\"\n"), "\(line)")
        let unread = AccessLogRecord(
            time: Date(), details: RequestDetails(remoteAddress: "-", protocolName: "-"), method: "-", target: "-", status: 400, bytes: 0,
            durationMicroseconds: 1, requestID: "1-1")
        #expect(unread.combinedLine.contains("] \"-\" 400 0 \"-\" \"-\"\n"), "\(unread.combinedLine)")
    }

    @Test("json: the fixed fields in order, escapes, null for what is missing, and a parser reads it back")
    func json() throws {
        var d = Self.details("GET / HTTP/1.1\r\nUser-Agent: tab\there \"q\" \\ é\r\n\r\n")
        d.referer = nil
        let line = Self.record(d).jsonLine
        #expect(line.hasPrefix("{\"time\":\"2023-11-14T22:13:20.250Z\",\"remote_addr\":\"192.0.2.7\",\"method\":\"GET\",\"path\":\"/a b\""), "\(line)")
        #expect(line.hasSuffix(",\"referer\":null,\"user_agent\":\"tab\\there \\\"q\\\" \\\\ é\",\"request_id\":\"7-2\"}\n"), "\(line)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["user_agent"] as? String == "tab\there \"q\" \\ é")
        #expect(object["duration_us"] as? Int == 345 && object["status"] as? Int == 200 && object["protocol"] as? String == "HTTP/1.1")
    }

    @Test("the writer buffers, writes on flush, and after the file is moved writes to a new one on reopen")
    func writerReopen() throws {
        let dir = Harness.tempDir("access-writer")
        defer { Harness.cleanup(dir) }
        let path = dir + "/access.log"
        let writer = try AccessLogWriter(path: path)
        writer.write("one\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "", "a line is buffered until a flush")
        writer.flush()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\n")
        writer.write("two\n")
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        #expect(writer.reopen() == nil)
        writer.write("three\n")
        writer.flush()
        #expect(try String(contentsOfFile: path + ".1", encoding: .utf8) == "one\ntwo\n", "the buffer goes to the old file before the switch")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "three\n")
        // A reopen that fails keeps the old file.
        try FileManager.default.removeItem(atPath: dir)
        #expect(writer.reopen()?.description.contains("cannot open the access log") == true)
    }

    @Test("a file that cannot be opened is an error naming it and what to check")
    func unopenable() {
        #expect(throws: AccessLogError.self) { try AccessLogWriter(path: "/nonexistent-folio/access.log") }
    }
}
