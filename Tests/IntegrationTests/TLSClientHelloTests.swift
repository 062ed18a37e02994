import FolioHTTPCore
import FolioTestSupport
import Foundation
import Testing

/// The ClientHello reader the edge runs before TLS while it does ACME (TLS-ALPN-01), on the first
/// flights of a real TLS client: OpenSSL's, through Python's ssl module (`client_hello.py`).
@Suite("TLS ClientHello: SNI and ALPN")
struct TLSClientHelloTests {
    static func hello(_ name: String, _ protocols: [String]) throws -> [UInt8] {
        let script = Harness.repoRoot + "/Tests/IntegrationTests/client_hello.py"
        let r = try Harness.run("/usr/bin/env", ["python3", script, name] + protocols)
        guard r.status == 0, !r.stdoutBytes.isEmpty else { throw HarnessError("client_hello.py: \(r.stderr)") }
        return r.stdoutBytes
    }

    @Test("OpenSSL's ClientHello: the server name and the offered protocols, in order")
    func openSSL() throws {
        let acme = try Self.hello("edge.folio.test", ["acme-tls/1"])
        #expect(TLSClientHello.parse(acme) == .hello(TLSClientHello(serverName: "edge.folio.test", alpn: ["acme-tls/1"])))
        let browser = try Self.hello("localhost", ["h2", "http/1.1"])
        #expect(TLSClientHello.parse(browser) == .hello(TLSClientHello(serverName: "localhost", alpn: ["h2", "http/1.1"])))
        let none = try Self.hello("folio.test", [])
        #expect(TLSClientHello.parse(none) == .hello(TLSClientHello(serverName: "folio.test", alpn: [])))
    }

    @Test("every prefix is incomplete; the hello split over two handshake records reads the same")
    func prefixesAndRecords() throws {
        let bytes = try Self.hello("edge.folio.test", ["acme-tls/1"])
        let whole = TLSClientHello.parse(bytes)
        for n in 0..<bytes.count {
            #expect(TLSClientHello.parse(bytes[..<n]) == .incomplete, "\(n) of \(bytes.count) bytes")
        }
        // One handshake message across two records, as RFC 8446 §5.1 allows.
        let message = Array(bytes[5...])
        let half = message.count / 2
        func record(_ fragment: ArraySlice<UInt8>) -> [UInt8] {
            [0x16, 0x03, 0x01, UInt8(fragment.count >> 8), UInt8(fragment.count & 0xFF)] + fragment
        }
        #expect(TLSClientHello.parse(record(message[..<half]) + record(message[half...])) == whole)
    }

    @Test("not a ClientHello: HTTP, another record type, a server hello, lengths that lie")
    func notHello() throws {
        #expect(TLSClientHello.parse(Array("GET / HTTP/1.1\r\n\r\n".utf8)) == .notHello)
        var bytes = try Self.hello("edge.folio.test", ["acme-tls/1"])
        var alert = bytes
        alert[0] = 21
        #expect(TLSClientHello.parse(alert) == .notHello)
        var serverHello = bytes
        serverHello[5] = 2
        #expect(TLSClientHello.parse(serverHello) == .notHello)
        // The cipher suites claim more bytes than the message has.
        bytes[5 + 4 + 2 + 32 + 1 + Int(bytes[5 + 4 + 2 + 32])] = 0xFF
        #expect(TLSClientHello.parse(bytes) == .notHello)
    }
}
