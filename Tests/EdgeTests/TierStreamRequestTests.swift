import FolioHTTPCore
import NIOCore
import NIOHTTP1
import Testing

@testable import FolioEdge

/// How the tier's HTTP/2 path reads a stream's request: the head `EdgeNGHTTP2Handler` wrote,
/// through the origin mode's parser and limits, into the request the cache answers.
@Suite("Tier HTTP/2 requests")
struct TierStreamRequestTests {
    let parser = HTTPRequestParser(maxTargetBytes: 64, maxHeadBytes: 512, maxHeaderCount: 3)

    func request(_ head: String, body: String? = nil) -> Result<ProxyRequest, RequestError> {
        TierStreamResponder.request(ByteBuffer(string: head), body.map { ByteBuffer(string: $0) }, parser)
    }

    @Test("method, target and every field, in order, with repeated names and an empty value")
    func fields() throws {
        let r = try request("GET /a?b=1 HTTP/1.1\r\nHost: x\r\naccept: text/plain\r\naccept: */*\r\n\r\n").get()
        #expect(r.method == .GET && r.target == "/a?b=1" && r.body == nil)
        #expect(r.headers.map { "\($0.name)=\($0.value)" } == ["Host=x", "accept=text/plain", "accept=*/*"])
        let empty = try request("HEAD / HTTP/1.1\r\nHost: x\r\nx-e: \r\n\r\n").get()
        #expect(empty.method == .HEAD && empty.headers.first(name: "x-e") == "")
    }

    @Test("a body is passed on with its Content-Length; another method keeps its name")
    func body() throws {
        let r = try request("PUT /config/1 HTTP/1.1\r\nHost: x\r\n\r\n", body: "{\"a\":1}").get()
        #expect(r.method == .PUT && r.body.map { String(buffer: $0) } == "{\"a\":1}")
        #expect(r.headers.first(name: "content-length") == "7")
        #expect(try request("M-SEARCH /x HTTP/1.1\r\nHost: x\r\n\r\n").get().method == .RAW(value: "M-SEARCH"))
    }

    @Test("the origin mode's limits and rules: 414 for a long target, 431 for too many fields, 400 without Host")
    func limits() throws {
        let long = request("GET /\(String(repeating: "a", count: 64)) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(long.failureStatus == 414)
        let many = request("GET / HTTP/1.1\r\nHost: x\r\na: 1\r\nb: 2\r\nc: 3\r\n\r\n")
        #expect(many.failureStatus == 431)
        #expect(try request("GET / HTTP/1.1\r\nHost: x\r\na: 1\r\nb: 2\r\n\r\n").get().headers.count == 3)
        // A request with neither :authority nor Host, as the origin answers it over HTTP/2.
        #expect(request("GET / HTTP/1.1\r\na: 1\r\n\r\n").failureStatus == 400)
    }
}

extension Result where Failure == RequestError {
    var failureStatus: Int? {
        if case .failure(let e) = self { e.status } else { nil }
    }
}
