import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// The cache tier's HTTP/2 (`folio-edge --origin` over TLS) on both frame layers: libnghttp2
/// (the default) and swift-nio-http2 (`FOLIO_EDGE_H2=swift-nio-http2`), the differential
/// reference. The same semantics, RFC 9113 cases, abuse defences and drain as the origin's
/// (`EdgeHTTP2Tests`), and the origin mode's request limits.
@Suite("cache tier over HTTP/2", .serialized)
struct TierHTTP2Tests {
    static let layers = ["libnghttp2", "swift-nio-http2"]

    /// A tier over TLS on `layer`, in front of a cleartext origin that serves a fixture.
    static func withTier(
        _ label: String, layer: String, extra: [String] = [], _ body: (EdgeProcess, TestPKI, EdgeFixture) throws -> Void
    ) throws {
        let fixture = try EdgeFixture.make(label)
        defer { fixture.cleanup() }
        let origin = try EdgeProcess.start(root: fixture.root)
        defer { origin.stop() }
        let pki = try TestPKI(fixture.dir)
        let (cert, key) = try pki.leaf("localhost")
        let tier = try EdgeProcess.start(
            root: fixture.root, args: ["--origin", origin.baseURL, "--tls-cert", cert, "--tls-key", key] + extra,
            env: EdgeHTTP2Tests.layerEnv(layer))
        defer { tier.stop() }
        try body(tier, pki, fixture)
    }

    @Test("misses, hits, gzip, 304, HEAD, 206, 404 and 405 as over HTTP/1.1", arguments: layers)
    func semantics(layer: String) throws {
        try Self.withTier("h2-tier-semantics", layer: layer) { tier, pki, fixture in
            let base = "https://localhost:\(tier.port)"
            try EdgeHTTP2Tests.checkSemantics(pki, base, fixture)
            let again = try EdgeHTTP2Tests.get(pki, base + "/manifest.plist").response
            #expect(again.header("cache-status") == "folio-edge; hit", "\(again.headers)")
            #expect(again.body == (try fixture.bytes("manifest.plist")))
        }
    }

    @Test("RFC 9113 conformance: every case of h2_conformance.py", arguments: layers)
    func conformance(layer: String) throws {
        try Self.withTier("h2-tier-conformance", layer: layer) { tier, _, _ in try EdgeHTTP2Tests.checkConformance(tier) }
    }

    @Test("floods and malformed requests end that connection with the right GOAWAY", arguments: layers)
    func defences(layer: String) throws {
        try Self.withTier("h2-tier-abuse", layer: layer) { tier, pki, _ in try EdgeHTTP2Tests.checkDefences(tier, pki) }
    }

    /// The swift-nio-http2 path's final GOAWAY names stream 0 though stream 1 was answered (its
    /// `HTTP2ConnectionGuard`, behind the stream multiplexer, counts no stream as taken: the old
    /// behaviour, checked as it is); libnghttp2's names stream 1, as both origin layers do.
    @Test("on SIGTERM: GOAWAY for every stream, then the last stream taken, then the close", arguments: layers)
    func drain(layer: String) throws {
        try Self.withTier("h2-tier-drain", layer: layer) { tier, _, _ in
            try EdgeHTTP2Tests.checkDrain(tier, lastStream: layer == "libnghttp2" ? 1 : 0)
        }
    }

    @Test("an idle HTTP/2 connection is closed after --request-timeout", arguments: layers)
    func idle(layer: String) throws {
        try Self.withTier("h2-tier-idle", layer: layer, extra: ["--request-timeout", "1"]) { tier, _, _ in try EdgeHTTP2Tests.checkIdle(tier) }
    }

    @Test("the origin mode's limits over HTTP/2: 414 for a long target, 431 for too many fields")
    func limits() throws {
        try Self.withTier("h2-tier-limits", layer: "libnghttp2") { tier, pki, _ in
            let base = "https://localhost:\(tier.port)"
            let long = try EdgeHTTP2Tests.get(pki, base + "/" + String(repeating: "a", count: 9000))
            #expect(long.version == "2" && long.response.status == 414, "\(long.version) \(long.response.status)")
            let many = (0...100).map { "X-Field-\($0): v" }
            let fields = try EdgeHTTP2Tests.get(pki, base + "/manifest.plist", many)
            #expect(fields.version == "2" && fields.response.status == 431, "\(fields.version) \(fields.response.status)")
            // Both refusals were streams of their own: the next request on the tier is served.
            #expect(try EdgeHTTP2Tests.get(pki, base + "/manifest.plist").response.status == 200)
        }
    }
}
