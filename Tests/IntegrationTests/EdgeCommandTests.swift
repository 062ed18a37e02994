import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// `folio-edge`'s two modes take their own options: each refuses the other's, by name, before
/// anything starts.
@Suite("folio-edge options by mode")
struct EdgeCommandTests {
    static func start(_ args: [String]) throws -> Harness.Output {
        try Harness.run(Harness.binary("folio-edge"), ["--port", "0"] + args)
    }

    @Test(arguments: [
        (["--origin", "http://127.0.0.1:1", "--root", "public"], "--root is for serving a published directory"),
        (["--origin", "http://127.0.0.1:1", "--memory-budget", "1000"], "--memory-budget is for serving a published directory"),
        (["--origin", "http://127.0.0.1:1", "--manifest-max-age", "5"], "--manifest-max-age is for serving a published directory"),
        (["--cache-dir", "/tmp/x"], "--cache-dir is for a cache tier: add --origin URL, or remove --cache-dir"),
        (["--purge-origin"], "--purge-origin is for a cache tier"),
        (["--cache-size", "2G"], "--cache-size is for a cache tier"),
        (["--maintenance-file", "/tmp/m"], "--maintenance-file is for a cache tier"),
        (["--memory-size", "64M"], "--memory-size is for a cache tier"),
        (["--origin", "http://127.0.0.1:1", "--memory-size", "64M"], "--memory-size bounds the hot set of a cache on disk: add --cache-dir DIR"),
        (["--origin", "http://127.0.0.1:1", "--cache-dir", "/tmp/x", "--memory-size", "lots"], "--memory-size must be a byte count like 512M or 4G, got 'lots'"),
        (["--origin", "http://127.0.0.1:1", "--cache-size", "0"], "--cache-size must be a byte count like 512M or 4G, got '0'"),
        (["--origin-policy", "round-robin"], "--origin-policy is for a cache tier"),
        (["--health-interval-ms", "500"], "--health-interval-ms is for a cache tier"),
        (["--origin", "http://127.0.0.1:1", "--origin", "ftp://127.0.0.1:2"], "--origin must be an http:// or https:// URL or s3://BUCKET/PREFIX, got 'ftp://127.0.0.1:2'"),
        (["--origin", "http://127.0.0.1:1", "--origin-policy", "random"], "--origin-policy is primary or round-robin, got 'random'"),
        (["--origin", "http://127.0.0.1:1", "--origin-timeout", "0"], "--origin-timeout must be at least 1 second"),
    ])
    func refusesTheOtherModesOptions(args: [String], message: String) throws {
        let r = try Self.start(args)
        #expect(r.status != 0 && r.stderr.contains(message), "\(args): exit \(r.status), \(r.stderr)")
        #expect(!r.stdout.contains("listening"))
    }
}

/// `--admin-listen`: the operating endpoints move off the public port, in both modes.
@Suite("folio-edge --admin-listen")
struct EdgeAdminListenerTests {
    @Test("origin mode: /metrics only on the admin port, content only on the public one, /healthz on both")
    func origin() throws {
        let fixture = try EdgeFixture.make("admin-origin")
        defer { fixture.cleanup() }
        let edge = try EdgeProcess.start(root: fixture.root, args: ["--admin-listen", "127.0.0.1:0"])
        defer { edge.stop() }
        let admin = try #require(edge.adminPort)
        #expect(try RawHTTPConnection.fetch(port: edge.port, "/metrics").status == 404)
        #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").status == 200)
        #expect(try RawHTTPConnection.fetch(port: edge.port, "/healthz").status == 200)
        let metrics = try RawHTTPConnection.fetch(port: admin, "/metrics")
        #expect(metrics.status == 200 && metrics.text.contains("folio_edge_requests_total"), "\(metrics.text.prefix(200))")
        #expect(try RawHTTPConnection.fetch(port: admin, "/manifest.plist").status == 404)
        #expect(try RawHTTPConnection.fetch(port: admin, "/healthz").status == 200)
    }

    @Test("cache tier: /.folio/ endpoints and PURGE only on the admin port, content only on the public one")
    func tier() throws {
        let fixture = try EdgeFixture.make("admin-tier")
        defer { fixture.cleanup() }
        let origin = try EdgeProcess.start(root: fixture.root)
        defer { origin.stop() }
        let tokenFile = fixture.dir + "/token"
        try FileIO.createExclusive(Array("s3cret-token-for-tests\n".utf8), at: tokenFile, mode: 0o600)
        let tier = try EdgeProcess.start(
            root: fixture.root, args: ["--origin", origin.baseURL, "--purge-token-file", tokenFile, "--admin-listen", "127.0.0.1:0"])
        defer { tier.stop() }
        let admin = try #require(tier.adminPort)
        let auth = [("Authorization", "Bearer s3cret-token-for-tests")]
        #expect(try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist").status == 200)
        #expect(try RawHTTPConnection.fetch(port: tier.port, "/.folio/metrics").status == 404)
        #expect(try RawHTTPConnection.fetch(port: tier.port, "/.folio/status", headers: auth).status == 404)
        #expect(try RawHTTPConnection.fetch(port: tier.port, "PURGE", "/manifest.plist", headers: auth).status == 404)
        #expect(try RawHTTPConnection.fetch(port: admin, "/.folio/metrics").status == 200)
        #expect(try RawHTTPConnection.fetch(port: admin, "PURGE", "/manifest.plist", headers: auth).status == 200)
        #expect(try RawHTTPConnection.fetch(port: admin, "/manifest.plist").status == 404)
        // The purge on the admin port reached the cache the public port serves from.
        let again = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
        #expect(again.status == 200 && again.header("Cache-Status")?.contains("fwd=") == true, "\(again.headers)")
    }

    @Test("--admin-listen takes HOST:PORT")
    func address() throws {
        let r = try Harness.run(Harness.binary("folio-edge"), ["--port", "0", "--admin-listen", "9090"])
        #expect(r.status != 0 && r.stderr.contains("--admin-listen takes HOST:PORT"), "\(r.stderr)")
    }
}
