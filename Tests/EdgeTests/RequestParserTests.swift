import FolioTestSupport
import Testing

@testable import FolioEdge

/// The strict request-head parser (RFC 9112 §2–§5) with small limits.
@Suite("Request parser")
struct RequestParserTests {
    static let maxTarget = 64
    static let maxHead = 512
    static let maxHeaders = 8
    let parser = HTTPRequestParser(maxTargetBytes: maxTarget, maxHeadBytes: maxHead, maxHeaderCount: maxHeaders)

    // MARK: Helpers

    func parse(_ text: String) -> HTTPRequestParser.Result { parse(Array(text.utf8)) }

    /// Parses, then copies the request's views off the bytes (which end with the closure).
    func parse(_ bytes: [UInt8]) -> HTTPRequestParser.Result { bytes.withUnsafeBytes { parser.parse($0).owned() } }

    /// The parsed request and head length, or a recorded failure.
    func request(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> (ParsedRequest, Int)? {
        let result = parse(text)
        guard case .request(let request, let length) = result else {
            Issue.record("expected a request, got \(result)", sourceLocation: sourceLocation)
            return nil
        }
        return (request, length)
    }

    /// The status of a refused head, nil when the head was not refused.
    func status(_ text: String) -> Int? { status(parse(text)) }

    func status(_ result: HTTPRequestParser.Result) -> Int? {
        if case .failure(let error) = result { return error.status }
        return nil
    }

    func isIncomplete(_ text: String) -> Bool { parse(text) == .incomplete }

    /// A GET head of exactly `length` bytes, padded with one `X:` header (CRLF line ends).
    static func head(ofLength length: Int) -> String {
        let fixed = "GET /x HTTP/1.1\r\nHost: a\r\nX: \r\n\r\n"
        let padding = String(repeating: "a", count: length - fixed.utf8.count)
        let text = "GET /x HTTP/1.1\r\nHost: a\r\nX: \(padding)\r\n\r\n"
        precondition(text.utf8.count == length)
        return text
    }

    // MARK: Well-formed requests

    @Test func simpleGet() throws {
        let text = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n"
        let (r, length) = try #require(request(text))
        #expect(r.method == .get)
        #expect(r.target == "/x")
        #expect(r.keepAlive)
        #expect(length == text.utf8.count)
        #expect(r.conditions == Conditions())
        #expect(r.acceptEncoding == nil)
        #expect(r.contentLength == 0)
        #expect(!r.chunked)
    }

    @Test func head() throws {
        let (r, _) = try #require(request("HEAD /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\n\r\n"))
        #expect(r.method == .head)
        #expect(r.target == "/index.html?q=1")
    }

    @Test func plainPathTargets() throws {
        // A plain path is routed from the request's bytes as they are; anything else is decoded first.
        for (target, plain) in [
            ("/objects/ab.plist", true), ("/", true), ("/a?b", false), ("/a%20b", false), ("/a#f", false),
            ("http://h/x", false), ("*", false), ("/x?", false),
        ] {
            let (r, _) = try #require(request("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n"))
            #expect(r.targetIsPlainPath == plain, "\(target)")
            #expect(r.target == HeaderValue(target))
        }
    }

    @Test func methodsAndVersionsByWord() throws {
        // GET, HEAD and the versions are compared as machine words: near misses are not them.
        for (m, expected) in [("GET", RequestMethod.get), ("HEAD", .head), ("GETS", .other("GETS")), ("GE", .other("GE")),
                              ("get", .other("get")), ("HEAP", .other("HEAP")), ("HEADS", .other("HEADS"))] {
            let (r, _) = try #require(request("\(m) /x HTTP/1.1\r\nHost: a\r\n\r\n"))
            #expect(r.method == expected, "\(m)")
        }
        let (r10, _) = try #require(request("GET /x HTTP/1.0\r\n\r\n"))
        #expect(!r10.keepAlive)
        #expect(status("GET /x HTTP/1.1x\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/2.0\r\nHost: a\r\n\r\n") == 505)
        #expect(status("GET /x http/1.1\r\nHost: a\r\n\r\n") == 400)
    }

    @Test func otherMethods() throws {
        let text = "POST /form HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
        let (r, length) = try #require(request(text + "hello"))
        #expect(r.method == .other("POST"))
        #expect(r.method.name == "POST")
        #expect(r.contentLength == 5)
        #expect(length == text.utf8.count)  // the body is not part of the head
        // Methods are case-sensitive tokens.
        let (lower, _) = try #require(request("get /x HTTP/1.1\r\nHost: a\r\n\r\n"))
        #expect(lower.method == .other("get"))
        let (long, _) = try #require(request("GETS /x HTTP/1.1\r\nHost: a\r\n\r\n"))
        #expect(long.method == .other("GETS"))
    }

    @Test func http10IsNotKeepAliveByDefault() throws {
        let (r, _) = try #require(request("GET /x HTTP/1.0\r\n\r\n"))  // no Host needed
        #expect(!r.keepAlive)
        let (withHost, _) = try #require(request("GET /x HTTP/1.0\r\nHost: a\r\n\r\n"))
        #expect(!withHost.keepAlive)
    }

    @Test func http10WithKeepAlive() throws {
        let (r, _) = try #require(request("GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
        #expect(r.keepAlive)
        let (upper, _) = try #require(request("GET /x HTTP/1.0\r\nconnection: Upgrade, Keep-Alive\r\n\r\n"))
        #expect(upper.keepAlive)
    }

    @Test func http11WithClose() throws {
        let (r, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"))
        #expect(!r.keepAlive)
        let (list, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nCONNECTION: keep-alive ,  CLOSE \r\n\r\n"))
        #expect(!list.keepAlive)  // close wins
        let (other, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nConnection: closed, te\r\n\r\n"))
        #expect(other.keepAlive)
    }

    @Test func capturesTheHeadersTheEdgeUses() throws {
        let text = """
            GET /x HTTP/1.1\r
            host: a\r
            ACCEPT-ENCODING:   gzip, br \t\r
            If-None-Match: "abc", W/"def"\r
            if-modified-since: Sun, 06 Nov 1994 08:49:37 GMT\r
            IF-UNMODIFIED-SINCE:Tue, 14 Nov 2023 22:13:20 GMT\r
            if-match: *\r
            range: bytes=0-9\r
            If-Range: "abc"\r
            \r

            """
        let (r, length) = try #require(request(text))
        #expect(length == text.utf8.count)
        #expect(r.acceptEncoding == "gzip, br")
        #expect(
            r.conditions
                == Conditions(
                    ifMatch: "*",
                    ifNoneMatch: "\"abc\", W/\"def\"",
                    ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT",
                    ifUnmodifiedSince: "Tue, 14 Nov 2023 22:13:20 GMT",
                    ifRange: "\"abc\"",
                    range: "bytes=0-9"))
    }

    @Test func ignoresOtherHeadersAndKeepsTheLastValue() throws {
        let text = "GET /x HTTP/1.1\r\nUser-Agent: t\r\nHost: a\r\nRange: bytes=1-2\r\nX-Range: no\r\nRange: bytes=3-4\r\nIf-Match:\r\n\r\n"
        let (r, _) = try #require(request(text))
        #expect(r.conditions.range == "bytes=3-4")
        #expect(r.conditions.ifMatch == "")
        #expect(r.conditions.ifNoneMatch == nil)
        #expect(r.acceptEncoding == nil)
    }

    @Test func tabsInValuesAndHighBytesAreAllowed() throws {
        let (r, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nRange:\tbytes=0-1\t\r\nX: a\tb \u{E9}\r\n\r\n"))
        #expect(r.conditions.range == "bytes=0-1")
    }

    @Test func pipelinedRequests() throws {
        let first = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
        let second = "HEAD /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        let bytes = Array((first + second).utf8)
        guard case .request(let r1, let length1) = parse(bytes) else {
            Issue.record("first request not parsed")
            return
        }
        #expect(r1.method == .get)
        #expect(r1.target == "/a")
        #expect(length1 == first.utf8.count)
        guard case .request(let r2, let length2) = parse(Array(bytes[length1...])) else {
            Issue.record("second request not parsed")
            return
        }
        #expect(r2.method == .head)
        #expect(r2.target == "/b")
        #expect(!r2.keepAlive)
        #expect(length2 == second.utf8.count)
        // A partial second request does not disturb the first.
        let partial = Array((first + "GET /c HT").utf8)
        #expect(parse(partial) == .request(r1, length: first.utf8.count))
    }

    @Test func leadingEmptyLinesAreTolerated() throws {
        let text = "\r\n\r\n\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n"
        let (r, length) = try #require(request(text))
        #expect(r.target == "/x")
        #expect(length == text.utf8.count)  // the empty lines are consumed too
        #expect(isIncomplete("\r\n\r\n"))
        #expect(isIncomplete("\n"))
    }

    @Test func bareLineFeedsAreAccepted() throws {
        let text = "GET /x HTTP/1.1\nHost: a\nRange: bytes=0-1\n\n"
        let (r, length) = try #require(request(text))
        #expect(r.target == "/x")
        #expect(r.conditions.range == "bytes=0-1")
        #expect(length == text.utf8.count)
        let mixed = "GET /x HTTP/1.1\r\nHost: a\n\r\n"
        let (_, mixedLength) = try #require(request(mixed))
        #expect(mixedLength == mixed.utf8.count)
    }

    @Test func everyTruncationIsIncomplete() {
        let text = "GET /x HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"abc\"\r\n\r\n"
        let bytes = Array(text.utf8)
        #expect(parse([UInt8]()) == .incomplete)
        for cut in 0..<bytes.count {
            #expect(parse(Array(bytes[..<cut])) == .incomplete, "first \(cut) bytes")
        }
        #expect(status(parse(bytes)) == nil)
    }

    // MARK: Refused heads

    @Test func hostIsRequiredOnceInHTTP11() {
        #expect(status("GET /x HTTP/1.1\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n") == 400)
        // An empty Host is allowed (RFC 9112 §3.2).
        #expect(status("GET /x HTTP/1.1\r\nHost:\r\n\r\n") == nil)
    }

    /// RFC 9112 §3.2: a server MUST answer 400 to *any* request with more than one Host field line,
    /// but the check on HTTPRequestParser.swift:138 only runs for HTTP/1.1 (`if http11, hostCount != 1`).
    @Test func duplicateHostInHTTP10() {
        #expect(status("GET /x HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n") == 400)
    }

    @Test func obsoleteLineFoldingIsRefused() {
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX: b\r\n folded\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\n\tfolded\r\n\r\n") == 400)
        // Whitespace before the first header field.
        #expect(status("GET /x HTTP/1.1\r\n Host: a\r\n\r\n") == 400)
    }

    @Test func controlCharactersInValuesAreRefused() {
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX: a\u{01}b\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX: a\u{00}b\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX: a\u{7F}\r\n\r\n") == 400)
        // A bare CR inside a line is not a line end.
        #expect(status("GET /x HTTP/1.1\r\nHost: a\rX: b\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\r\n\r\n") == 400)
    }

    @Test func malformedHeaderFieldsAreRefused() {
        #expect(status("GET /x HTTP/1.1\r\nHost a\r\n\r\n") == 400)  // no colon
        #expect(status("GET /x HTTP/1.1\r\nHost : a\r\n\r\n") == 400)  // space before the colon
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n") == 400)  // empty name
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX(y): b\r\n\r\n") == 400)  // not a token
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX\u{E9}: b\r\n\r\n") == 400)
    }

    @Test func malformedRequestLinesAreRefused() {
        #expect(status("G(T /x HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GE\u{E9}T /x HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status(" GET /x HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET  /x HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x  HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET\t/x HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x\r\nHost: a\r\n\r\n") == 400)  // HTTP/0.9 style
        #expect(status("GET\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /a\u{7F}b HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /a\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n") == 400)
    }

    @Test func versions() {
        #expect(status("GET /x HTTP/2.0\r\nHost: a\r\n\r\n") == 505)
        #expect(status("GET /x HTTP/3.0\r\n\r\n") == 505)
        #expect(status("GET /x HTTX/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x http/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1 \r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.10\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x \r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET /x garbage\r\nHost: a\r\n\r\n") == 400)
    }

    @Test func targetLength() throws {
        let fits = "/" + String(repeating: "a", count: Self.maxTarget - 1)
        let (r, _) = try #require(request("GET \(fits) HTTP/1.1\r\nHost: a\r\n\r\n"))
        #expect(r.target == HeaderValue(fits))
        // One byte too long, with the request line complete.
        #expect(status("GET \(fits)b HTTP/1.1\r\nHost: a\r\n\r\n") == 414)
        // Much too long: the line end is past the request-line limit.
        let long = "/" + String(repeating: "a", count: 200)
        #expect(status("GET \(long) HTTP/1.1\r\nHost: a\r\n\r\n") == 414)
        // Long and still incomplete: refused before the rest arrives.
        #expect(status("GET \(long)") == 414)
        // Short and incomplete: wait.
        #expect(isIncomplete("GET /aaaa"))
        #expect(isIncomplete("GET \(fits) HTTP/1.1"))
    }

    @Test func headerCount() {
        let sevenMore = (1...7).map { "X-\($0): v\r\n" }.joined()
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\n\(sevenMore)\r\n") == nil)  // eight fields
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\n\(sevenMore)X-8: v\r\n\r\n") == 431)  // nine
        // Refused as soon as the ninth field is seen, before the head is complete.
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\n\(sevenMore)X-8: v\r\n") == 431)
    }

    @Test func headSize() {
        #expect(status(Self.head(ofLength: Self.maxHead)) == nil)
        #expect(status(Self.head(ofLength: Self.maxHead + 2)) == 431)
        #expect(status(Self.head(ofLength: 1000)) == 431)
        let longValue = String(repeating: "v", count: 600)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX: \(longValue)\r\n\r\n") == 431)
        // Incomplete but already over the limit: refused without waiting.
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX: \(longValue)") == 431)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nX: \(longValue)\r\n") == 431)
        // Incomplete and under the limit: wait.
        #expect(isIncomplete("GET /x HTTP/1.1\r\nHost: a\r\nX: \(String(repeating: "v", count: 400))"))
        // Leading empty lines do not count towards the head.
        #expect(status("\r\n\r\n" + Self.head(ofLength: Self.maxHead)) == nil)
    }

    /// A head one byte over `maxHeadBytes` is accepted: the final line-feed search runs up to
    /// `start + maxHeadBytes + 1` (HTTPRequestParser.swift:128), so a terminating LF at offset
    /// `maxHeadBytes` completes a head of `maxHeadBytes + 1` bytes.
    @Test func headOneByteOverTheLimit() {
        #expect(status(Self.head(ofLength: Self.maxHead + 1)) == 431)
        #expect(status("GET /x HTTP/1.1\nHost: a\nX: \(String(repeating: "a", count: Self.maxHead + 1 - 29))\n\n") == 431)
    }

    @Test func contentLength() throws {
        let (r, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 42\r\n\r\n"))
        #expect(r.contentLength == 42)
        let (same, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\ncontent-length: 7\r\n\r\n"))
        #expect(same.contentLength == 7)
        let (zero, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"))
        #expect(zero.contentLength == 0)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1234567890123456789\r\n\r\n") == 400)
    }

    @Test func transferEncoding() throws {
        let (r, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"))
        #expect(r.chunked)
        #expect(r.contentLength == 0)
        #expect(status("GET /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n") == 400)
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\ntransfer-encoding: chunked\r\nContent-Length: 3\r\n\r\n") == 400)
    }

    @Test func failuresCarryAReasonAndMessage() {
        guard case .failure(let error) = parse("GET /x HTTP/2.0\r\n\r\n") else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.status == 505)
        #expect(error.reason == "HTTP Version Not Supported")
        #expect(!error.message.isEmpty)
    }

    // MARK: Robustness

    /// Seeded random mutations and truncations of valid heads never crash the parser, and
    /// whatever it answers is consistent with the input.
    @Test func mutatedInputsNeverCrash() {
        let seeds = [
            "GET /x HTTP/1.1\r\nHost: a\r\n\r\n",
            "HEAD /a/b?c=d HTTP/1.0\r\nConnection: keep-alive\r\nRange: bytes=0-9\r\n\r\n",
            "\r\nGET / HTTP/1.1\nHost: example.com\nIf-None-Match: \"abc\", W/\"d\"\nAccept-Encoding: gzip;q=0.5\n\n",
            "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc",
            "GET /x HTTP/1.1\r\nHost: a\r\nGET /y HTTP/1.1\r\nHost: b\r\n\r\n",
        ].map { Array($0.utf8) }
        let interesting: [UInt8] = [0x0D, 0x0A, 0x20, 0x09, 0x3A, 0x00, 0x7F, 0xFF, 0x2C, 0x22]
        var rng = SplitMix64(seed: 0xF00D_CAFE)
        var outcomes = (requests: 0, incomplete: 0, failures: 0)
        for iteration in 0..<2000 {
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                guard !bytes.isEmpty else { break }
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                let byte = Bool.random(using: &rng) ? interesting.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
                switch Int.random(in: 0..<6, using: &rng) {
                case 0: bytes.removeSubrange(at...)  // truncate
                case 1: bytes[at] = byte  // replace
                case 2: bytes.insert(byte, at: at)  // insert
                case 3: bytes.remove(at: at)  // delete
                case 4: bytes.insert(contentsOf: repeatElement(byte, count: Int.random(in: 1...600, using: &rng)), at: at)  // blow up
                default: bytes.insert(contentsOf: bytes[at...].prefix(40), at: at)  // duplicate a slice
                }
            }
            let result = parse(bytes)
            switch result {
            case .incomplete:
                outcomes.incomplete += 1
            case .request(_, let length):
                outcomes.requests += 1
                #expect(length > 0 && length <= bytes.count, "iteration \(iteration)")
                if length > 0, length <= bytes.count {
                    #expect(bytes[length - 1] == 0x0A, "iteration \(iteration): a head ends with LF")
                }
            case .failure(let error):
                outcomes.failures += 1
                #expect([400, 414, 431, 505].contains(error.status), "iteration \(iteration)")
            }
        }
        // The mutations exercise every outcome.
        #expect(outcomes.requests > 0)
        #expect(outcomes.incomplete > 0)
        #expect(outcomes.failures > 0)
    }

    @Test("a later HTTP/1.x minor version is handled as HTTP/1.1")
    func laterMinorVersion() throws {
        let (r, _) = try #require(request("GET /x HTTP/1.2\r\nHost: a\r\n\r\n"))
        #expect(r.keepAlive)
        #expect(status("GET /x HTTP/1.2\r\n\r\n") == 400)  // still needs Host
    }

    @Test("a Transfer-Encoding whose final coding is not chunked is refused")
    func nonChunkedTransferEncoding() throws {
        #expect(status("GET /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n") == 400)
        let (r, _) = try #require(request("GET /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"))
        #expect(r.chunked)
    }
}
