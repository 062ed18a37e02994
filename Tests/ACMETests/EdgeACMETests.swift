import FolioSupport
import FolioTestSupport
import Foundation
import Testing
import X509

/// `folio-edge --acme` end to end against pebble: the edge answers the HTTP-01 challenge on its
/// `--http-port` listener, serves the issued certificate, and renews it (a small renewal fraction
/// of pebble's one-hour certificates) while clients keep connecting, none of them failing.
@Suite("folio-edge --acme against pebble", .serialized, .timeLimit(.minutes(2)))
struct EdgeACMETests {
    static let domain = "edge.folio.test"

    /// A published directory from the repository's content.
    static func publish(_ dir: String) throws -> String {
        let content = Harness.copyContent(to: dir)
        let out = try Harness.run(Harness.binary("folio-build"), ["--content", content, "--output", dir + "/public", "--quiet"])
        guard out.status == 0 else { throw HarnessError("folio-build: \(out.stderr)") }
        return dir + "/public"
    }

    /// The serial number of the certificate the edge serves for `domain`, read by openssl.
    static func servedSerial(port: Int) throws -> String? {
        let out = try TestPKI.handshake(port: port, ["-servername", domain])
        guard let pem = TestPKI.servedCertificate(out) else { return nil }
        let certificate = try Certificate(pemEncoded: pem)
        guard certificate.issuer != certificate.subject else { return nil }  // still the temporary self-signed one
        return certificate.serialNumber.description
    }

    static func waitForSerial(port: Int, otherThan old: String?, timeout: Double) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let serial = try servedSerial(port: port), serial != old { return serial }
            usleep(200_000)
        }
        return nil
    }

    @Test("the edge gets a certificate from pebble over HTTP-01, serves it, and renews it under load with no failed request")
    func obtainsServesRenews() async throws {
        try Pebble.requireInstalled()
        let dir = Harness.tempDir("edge-acme")
        defer { Harness.cleanup(dir) }
        let root = try Self.publish(dir)
        let httpPort = try FreePort.take(1)[0]
        let pebble = try Pebble.start(httpPort: httpPort)
        defer { pebble.stop() }
        let rootPEM = dir + "/pebble-root.pem"
        try FileIO.writeAtomically(Array(try pebble.issuingRoot().serializeAsPEM().pemString.utf8), to: rootPEM)
        // Renewal at 0.2 % of a one-hour lifetime: every 7.2 s.
        let edge = try EdgeProcess.start(
            root: root,
            args: [
                "--acme", Self.domain, "--acme-directory", pebble.directoryURL, "--acme-ca", pebble.tlsRootPath, "--acme-state", dir + "/state",
                "--acme-email", "ops@folio.test", "--http-port", String(httpPort), "--acme-renewal-fraction", "0.002",
            ])
        defer { edge.stop() }
        let issued = try Self.waitForSerial(port: edge.port, otherThan: nil, timeout: 30)
        let log = edge.log
        let first = try #require(issued, "no certificate from pebble: \(log)")
        let url = "https://\(Self.domain):\(edge.port)/manifest.plist"
        let curl = ["-s", "--max-time", "5", "--cacert", rootPEM, "--resolve", "\(Self.domain):\(edge.port):127.0.0.1", "-o", "/dev/null", "-w", "%{http_code}"]
        #expect(try Harness.run("/usr/bin/curl", curl + [url]).stdout == "200")
        // The HTTP-01 answers are served only while a challenge is pending; anything else redirects.
        let plain = try Harness.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(httpPort)/.well-known/acme-challenge/nothing"])
        #expect(plain.stdout == "308")

        // Clients on new TLS connections while the certificate is renewed.
        let stop = EdgeStopFlag()
        let results = EdgeLocked<(ok: Int, failed: [String])>((0, []))
        let load = EdgeThreads.spawn(2) { _ in
            while !stop.isSet {
                let r = (try? Harness.run("/usr/bin/curl", curl + [url]))?.stdout ?? "error"
                results.with { if r == "200" { $0.ok += 1 } else { $0.failed.append(r) } }
            }
        }
        let renewed = try Self.waitForSerial(port: edge.port, otherThan: first, timeout: 30)
        let again = try renewed.flatMap { try Self.waitForSerial(port: edge.port, otherThan: $0, timeout: 30) }
        stop.stop()
        #expect(await load.join(timeout: 20))
        let after = edge.log
        #expect(renewed != nil && again != nil, "the certificate was not renewed twice: \(after)")
        let (ok, failed) = results.with { $0 }
        #expect(failed.isEmpty && ok > 10, "\(ok) answered, failed: \(failed.prefix(5))")
        #expect(FileManager.default.fileExists(atPath: dir + "/state/certificate.pem"))
    }

    @Test("without --http-port the edge answers TLS-ALPN-01 on its https port; other clients there are served as usual")
    func tlsALPN() async throws {
        try Pebble.requireInstalled()
        let dir = Harness.tempDir("edge-acme-alpn")
        defer { Harness.cleanup(dir) }
        let root = try Self.publish(dir)
        // pebble validates TLS-ALPN-01 on this port: the edge's https listener.
        let port = try FreePort.take(1)[0]
        let pebble = try Pebble.start(httpPort: try FreePort.take(1)[0], tlsALPNPort: port)
        defer { pebble.stop() }
        let edge = try EdgeProcess.start(
            root: root,
            args: [
                "--port", String(port), "--acme", Self.domain, "--acme-directory", pebble.directoryURL, "--acme-ca", pebble.tlsRootPath,
                "--acme-state", dir + "/state",
            ])
        defer { edge.stop() }
        let issued = try Self.waitForSerial(port: edge.port, otherThan: nil, timeout: 30)
        let log = edge.log
        #expect(issued != nil, "no certificate from pebble over TLS-ALPN-01: \(log)")
        // A client offering acme-tls/1 for a name with no challenge pending gets the usual
        // certificate, and an ordinary client its answers.
        let probe = try TestPKI.handshake(port: edge.port, ["-servername", Self.domain, "-alpn", "acme-tls/1"])
        let served = try #require(TestPKI.servedCertificate(probe))
        let certificate = try Certificate(pemEncoded: served)
        #expect(certificate.serialNumber.description == issued)
        let ok = try Harness.run("/usr/bin/curl", ["-sk", "-o", "/dev/null", "-w", "%{http_code}", "\(edge.baseURL)/manifest.plist"])
        #expect(ok.stdout == "200")
    }

    @Test(arguments: [
        (["--acme", "edge.folio.test", "--http-port", "0", "--acme-ca", "/nonexistent.pem"], "--acme-ca /nonexistent.pem does not exist"),
        (["--acme", "*.folio.test", "--http-port", "0"], "--acme:"),
        (["--http-port", "0"], "give --tls-cert and --tls-key (or --acme) too"),
    ])
    func refusedAtStart(args: [String], message: String) throws {
        let dir = Harness.tempDir("edge-acme-refused")
        defer { Harness.cleanup(dir) }
        let root = try Self.publish(dir)
        let r = try Harness.run(Harness.binary("folio-edge"), ["--root", root, "--port", "0", "--acme-state", dir + "/state"] + args)
        #expect(r.status != 0 && r.stderr.contains(message), "\(args): exit \(r.status), \(r.stderr)")
        #expect(!r.stdout.contains("listening"))
    }

    @Test("an ACME directory that cannot be reached never stops the edge: it serves https with its temporary certificate and retries")
    func unreachableDirectory() throws {
        let dir = Harness.tempDir("edge-acme-down")
        defer { Harness.cleanup(dir) }
        let root = try Self.publish(dir)
        let edge = try EdgeProcess.start(
            root: root,
            args: ["--acme", Self.domain, "--acme-directory", "https://127.0.0.1:1/dir", "--acme-state", dir + "/state", "--http-port", "0"])
        defer { edge.stop() }
        let r = try Harness.run("/usr/bin/curl", ["-sk", "-o", "/dev/null", "-w", "%{http_code}", "\(edge.baseURL)/manifest.plist"])
        #expect(r.stdout == "200")
        // async-http-client retries a refused connection until its 10 s connect timeout.
        let deadline = Date().addingTimeInterval(25)
        while Date() < deadline, !edge.log.contains("ACME directory:") { usleep(200_000) }
        let log = edge.log
        #expect(log.contains("ACME directory:") && log.contains("retrying in") && edge.isAlive, "\(log)")
        #expect(try Harness.run("/usr/bin/curl", ["-sk", "-o", "/dev/null", "-w", "%{http_code}", "\(edge.baseURL)/healthz"]).stdout == "200")
        #expect(!FileManager.default.fileExists(atPath: dir + "/state/certificate.pem"))
    }
}
