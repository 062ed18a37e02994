import FolioTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import FolioEdge

/// The edge's own request-head parser (its fast path) against SwiftNIO's general one
/// (`HTTPRequestDecoder`, llhttp) on seeded random requests: where both read a head they must
/// agree on everything the edge uses.
@Suite("request parser vs NIOHTTP1")
struct RequestParserDifferentialTests {
    let parser = HTTPRequestParser(maxTargetBytes: 8192, maxHeadBytes: 65536, maxHeaderCount: 100)

    /// What NIOHTTP1 reads from `bytes`: the head, or nil when it refuses them or wants more.
    func nioHead(_ bytes: [UInt8]) -> HTTPRequestHead? {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        defer { _ = try? channel.finish() }
        guard (try? channel.writeInbound(ByteBuffer(bytes: bytes))) != nil,
            case .head(let head)? = try? channel.readInbound(as: HTTPServerRequestPart.self)
        else { return nil }
        return head
    }

    /// A random well-formed GET/HEAD/other request with headers in random case and spacing.
    func randomRequest(_ rng: inout SplitMix64) -> [UInt8] {
        let methods = ["GET", "HEAD", "POST", "OPTIONS", "DELETE", "PUT"]
        let pathChars = Array("abcdefghijklmnopqrstuvwxyz0123456789-._~/%20?=&")
        var target = "/"
        for _ in 0..<rng.int(0...40) { target.append(rng.pick(pathChars)) }
        target = target.replacingOccurrences(of: "%", with: "%25")
        let version = rng.chance(0.8) ? "HTTP/1.1" : "HTTP/1.0"
        var head = "\(rng.pick(methods)) \(target) \(version)\r\n"
        func casing(_ name: String) -> String {
            String(name.map { rng.chance(0.5) ? Character($0.uppercased()) : Character($0.lowercased()) })
        }
        func space() -> String { String(repeating: rng.chance(0.5) ? " " : "\t", count: rng.int(0...2)) }
        var headers: [(String, String)] = [("Host", "127.0.0.1:8080")]
        if rng.chance(0.6) { headers.append(("Accept-Encoding", rng.pick(["gzip", "gzip, deflate, br", "identity;q=0", "*;q=0.5, gzip;q=1"]))) }
        if rng.chance(0.5) { headers.append(("If-None-Match", rng.pick(["\"abc\"", "W/\"x\", \"y\"", "*"]))) }
        if rng.chance(0.4) { headers.append(("Accept-Language", rng.pick(["fr-CA, fr;q=0.9", "en", "*"]))) }
        if rng.chance(0.4) { headers.append(("Connection", rng.pick(["close", "keep-alive", "Keep-Alive", "upgrade, close"]))) }
        if rng.chance(0.3) { headers.append(("Range", rng.pick(["bytes=0-99", "bytes=-5", "bytes=10-"]))) }
        if rng.chance(0.3) { headers.append(("X-Custom-\(rng.int(0...99))", "value \(rng.int(0...9999))")) }
        headers.shuffle(using: &rng)
        for (name, value) in headers { head += "\(casing(name)):\(space())\(value)\(space())\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }

    func compare(_ bytes: [UInt8], mustAccept: Bool) {
        let ours: ParsedRequest? = bytes.withUnsafeBytes { raw in
            if case .request(let r, _) = parser.parse(raw) { return r.owned() }
            return nil
        }
        let theirs = nioHead(bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        if mustAccept {
            #expect(ours != nil, "the edge refused \(text.debugDescription)")
            #expect(theirs != nil, "NIOHTTP1 refused \(text.debugDescription)")
        }
        guard let ours, let theirs else { return }
        #expect(ours.method.name == theirs.method.rawValue, "\(text.debugDescription)")
        #expect(ours.target.string == theirs.uri, "\(text.debugDescription)")
        // Persistence by RFC 9112 §9.3 over the headers NIOHTTP1 read. Not `theirs.isKeepAlive`:
        // it compares Connection's tokens untrimmed, so `close<TAB>` (HTAB is optional whitespace,
        // RFC 9110 §5.6.3) does not close there; the edge trims it.
        let tokens = theirs.headers["connection"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: [" ", "\t"]).lowercased() }
        let persistent = tokens.contains("close") ? false : (theirs.version.minor >= 1 || tokens.contains("keep-alive"))
        #expect(ours.keepAlive == persistent, "keep-alive: \(text.debugDescription)")
        func first(_ name: String) -> String? {
            theirs.headers[name].first.map { $0.trimmingCharacters(in: [" ", "\t"]) }
        }
        #expect(ours.acceptEncoding?.string == first("accept-encoding"), "\(text.debugDescription)")
        #expect(ours.acceptLanguage?.string == first("accept-language"), "\(text.debugDescription)")
        #expect(ours.conditions.ifNoneMatch?.string == first("if-none-match"), "\(text.debugDescription)")
        #expect(ours.conditions.range?.string == first("range"), "\(text.debugDescription)")
    }

    @Test("2,000 well-formed requests: both accept and agree")
    func wellFormed() {
        var rng = SplitMix64(seed: 0xED6E_0001)
        for _ in 0..<2000 { compare(randomRequest(&rng), mustAccept: true) }
    }

    @Test("2,000 requests with a byte changed: where both accept, they agree")
    func mutated() {
        var rng = SplitMix64(seed: 0xED6E_0002)
        for _ in 0..<2000 {
            var bytes = randomRequest(&rng)
            let i = rng.int(0...(bytes.count - 5))  // keep the final CRLF CRLF
            bytes[i] = rng.pick([0x20, 0x09, 0x3A, 0x0D, 0x0A, 0x00, 0x7F, 0xC3, 0x41, 0x2C])
            compare(bytes, mustAccept: false)
        }
    }
}
