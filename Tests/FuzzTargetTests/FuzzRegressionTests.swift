import FolioBuilder
import FolioHTTPCore
import Testing

/// What the crashes the fuzzers found now do instead (the reproducers are in Fuzz/Regressions).
@Suite("Fuzz regressions: bad input is an error, not a trap")
struct FuzzRegressionTests {
    /// Reads `text` as one response delivered at once, then as a closed connection.
    static func read(_ text: [UInt8]) throws -> QuickHTTP.Response {
        var reader = QuickHTTP.ResponseReader(maxBody: 1 << 16)
        let complete = try reader.append(text[...])
        return try reader.finish(closed: !complete).0
    }

    @Test("http-response: a header name that is not a token is a malformed head (NIO's HTTPHeaders trapped on non-ASCII)")
    func nonASCIIHeaderName() throws {
        for head in ["Cont\u{E9}nt-Type: x", ": empty name", "Bad Name: x", "Tab\tName: x"] {
            let text = Array("HTTP/1.1 200 OK\r\n\(head)\r\nContent-Length: 0\r\n\r\n".utf8)
            #expect(throws: QuickHTTP.Failure.self, "\(head)") { try Self.read(text) }
        }
        let good = Array("HTTP/1.1 200 OK\r\nX-Custom_Header.1~!: x\r\nContent-Length: 2\r\n\r\nok".utf8)
        #expect(try Self.read(good).body == Array("ok".utf8))
    }

    @Test("http-response: a negative Content-Length is refused (cutting the body to it trapped)")
    func negativeContentLength() throws {
        for value in ["-1", "-9223372036854775808"] {
            let text = Array("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\nbody".utf8)
            #expect(throws: QuickHTTP.Failure.self, "\(value)") { try Self.read(text) }
        }
    }
    @Test("project-file: runs of `*` and `*a*a*…` patterns answer at once (the backtracking was exponential)")
    func globBacktracking() throws {
        let a60 = String(repeating: "a", count: 60)
        let cases: [(String, String, Bool)] = [
            (String(repeating: "*", count: 102) + ",NesoME..md", "articles/x.md", false),
            (String(repeating: "*", count: 40), a60, true),
            (String(repeating: "*", count: 40) + "/b", a60, false),
            (String(repeating: "*a", count: 20) + "*b", a60, false),
            (String(repeating: "*a", count: 20) + "*", a60, true),
            (String(repeating: "**/", count: 12) + "*.md", String(repeating: "d/", count: 30) + "x.md", true),
            (String(repeating: "**/", count: 12) + "*.md", String(repeating: "d/", count: 30) + "x.mdx", false),
            ("**/x/**/*.md", "a/x/b/c/y.md", true), ("**/x/**/*.md", "x/y.md", true), ("**/x/**/*.md", "a/y.md", false),
            ("a*b", "a/b", false), ("a*b", "aXYb", true), ("images/**", "images/a/b.png", true),
            ("{a,b}/*.{png,jpg}", "b/c.jpg", true), ("[!a]?.txt", "bc.txt", true), ("[!a]?.txt", "ac.txt", false),
        ]
        for (pattern, path, expected) in cases {
            let glob = try Glob(pattern)
            #expect(glob.matches(path) == expected, "\(pattern) against \(path)")
        }
    }

    @Test("content-json: a key that starts with a combining mark locates (the `/` before it joined it in one character)")
    func combiningMarkKey() throws {
        for key in ["\u{64B}neg", "\u{301}", "a/\u{301}b", "~\u{301}", "~0~1", "plain"] {
            let json = Array("{\"x\": 1, \"\(key.replacingOccurrences(of: "\\", with: "\\\\"))\": 2}".utf8)
            let pointer = StructuredReader.pointer([key])
            #expect(StructuredReader.locate(pointer, in: json, format: .json) != nil, "\(key) as \(pointer)")
        }
    }
}
