import FolioSupport
import Foundation
import Synchronization

/// A private certificate authority and server certificates made by the real `openssl`.
package struct TestPKI: Sendable {
    package let dir: String

    /// The CA in `dir`: the one there already (`ca.pem`, `ca.key`), else a new one.
    package init(_ dir: String) throws {
        self.dir = dir
        if FileIO.exists(dir + "/ca.pem"), FileIO.exists(dir + "/ca.key") { return }
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", dir + "/ca.key", "-out",
            dir + "/ca.pem", "-days", "30", "-subj", "/CN=Folio Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign",
        ])
    }

    package var ca: String { dir + "/ca.pem" }

    /// A certificate for `name` (and 127.0.0.1) signed by the CA, valid for `days` (negative:
    /// already expired); its key is mode 600. Returns the certificate and key paths.
    @discardableResult
    package func leaf(_ name: String, file: String? = nil, days: Int = 10) throws -> (cert: String, key: String) {
        let base = dir + "/" + (file ?? name)
        try Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", base + ".key", "-out", base + ".csr",
            "-subj", "/CN=\(name)",
        ])
        try Data("subjectAltName=DNS:\(name),IP:127.0.0.1\nextendedKeyUsage=serverAuth\n".utf8).write(to: URL(fileURLWithPath: base + ".ext"))
        try Self.openssl([
            "x509", "-req", "-in", base + ".csr", "-CA", ca, "-CAkey", dir + "/ca.key", "-CAcreateserial", "-out", base + ".pem",
            "-days", String(days), "-extfile", base + ".ext",
        ])
        chmod(base + ".key", 0o600)
        return (base + ".pem", base + ".key")
    }

    package static func openssl(_ args: [String], stdin: [UInt8]? = nil) throws {
        let r = try Harness.run("/usr/bin/openssl", args, stdin: stdin)
        guard r.status == 0 else { throw HarnessError("openssl \(args.prefix(2).joined(separator: " ")) failed: \(r.stderr)") }
    }

    /// The PEM of the server certificate in `openssl s_client` output.
    package static func servedCertificate(_ output: String) -> String? {
        guard let start = output.range(of: "-----BEGIN CERTIFICATE-----"), let end = output.range(of: "-----END CERTIFICATE-----") else { return nil }
        return String(output[start.lowerBound..<end.upperBound])
    }

    /// What `openssl s_client` reports for one handshake: its output (protocol, cipher, subject).
    package static func handshake(port: Int, _ extra: [String]) throws -> String {
        let r = try Harness.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)"] + extra, stdin: [])
        return r.stdout + r.stderr
    }
}

/// The protocol stack the edge tests run over (`FOLIO_TEST_STACK`): HTTP/1.1 in cleartext (the
/// default), HTTP/1.1 over TLS (`https1`) or HTTP/2 over TLS (`h2`). Over TLS every edge the
/// tests start gets a certificate from one private CA, a tier's https origin is trusted through
/// it, `RawHTTPConnection.fetch` goes through curl with the stack's protocol, the CLI trusts the
/// CA through `FOLIO_CA_FILE`, and FolioKit (URLSession) through the system's bundle, which
/// `scripts/test-stack.sh` extends in a mount namespace of the run's own. Tests that write raw
/// HTTP/1.1 bytes run in the cleartext stack only (`.http1Only`).
package enum TestStack: String, Sendable {
    case http1, https1, h2

    package static let current: TestStack = {
        let name = ProcessInfo.processInfo.environment["FOLIO_TEST_STACK"] ?? "http1"
        guard let stack = TestStack(rawValue: name) else { fatalError("FOLIO_TEST_STACK must be http1, https1 or h2, not \(name)") }
        return stack
    }()

    package var isTLS: Bool { self != .http1 }

    /// The ports of the TLS edges started in this run (`EdgeProcess` adds them): requests to
    /// other ports (an admin listener, a Python origin) stay cleartext HTTP/1.1.
    private static let tlsPorts = Mutex<Set<Int>>([])

    package static func addTLSPort(_ port: Int) { _ = tlsPorts.withLock { $0.insert(port) } }

    /// Whether a request to `port` goes through this stack's TLS client.
    package func isTLS(port: Int) -> Bool { isTLS && Self.tlsPorts.withLock { $0.contains(port) } }

    /// The CA and the certificate every edge of a TLS stack serves (made once per test run; the
    /// CA is `FOLIO_TEST_CA_DIR`'s when set: `scripts/test-stack.sh` also puts it in the system's
    /// bundle, which FolioKit's URLSession trusts on Linux).
    package static let pki: (pki: TestPKI, cert: String, key: String) = {
        let dir = ProcessInfo.processInfo.environment["FOLIO_TEST_CA_DIR"] ?? Harness.tempDir("stack-pki")
        do {
            let pki = try TestPKI(dir)
            let (cert, key) = try pki.leaf("localhost")
            setenv("FOLIO_CA_FILE", pki.ca, 1)
            return (pki, cert, key)
        } catch {
            fatalError("cannot make the test stack's certificates: \(error)")
        }
    }()

    /// An edge's arguments in this stack: over TLS, the certificate, and the CA for an https origin.
    package func edgeArguments(_ args: [String]) -> [String] {
        guard isTLS, !args.contains("--tls-cert") else { return args }
        var args = args + ["--tls-cert", Self.pki.cert, "--tls-key", Self.pki.key]
        if self == .https1 { args.append("--no-http2") }
        if let i = args.firstIndex(of: "--origin"), i + 1 < args.count, args[i + 1].hasPrefix("https://127.0.0.1"),
            !args.contains("--origin-ca")
        {
            args += ["--origin-ca", Self.pki.pki.ca]
        }
        return args
    }

    /// One request through curl over this stack's protocol (HEAD reads the head only).
    package func fetch(port: Int, _ method: String, _ target: String, headers: [(String, String)]) throws -> EdgeResponse {
        var options = ["--cacert", Self.pki.pki.ca, self == .h2 ? "--http2" : "--http1.1", "--path-as-is"]
        options += method == "HEAD" ? ["-I"] : method == "GET" ? [] : ["-X", method]
        return try EdgeCurl.request(
            "https://127.0.0.1:\(port)\(target)", options: options, headers: headers.map { "\($0): \($1)" }, readBody: method != "HEAD"
        ).response
    }
}
