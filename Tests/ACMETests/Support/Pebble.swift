import Crypto
import FolioSupport
import FolioTestSupport
import Foundation
import SwiftASN1
import X509

/// Let's Encrypt's test CA on loopback: `pebble-challtestsrv` as its DNS (every name resolves to
/// 127.0.0.1) and `pebble` itself, with a TLS certificate the test made, validating HTTP-01 on
/// `httpPort`, without its random validation sleeps but with its 5 % of rejected nonces; its
/// certificates are valid for an hour, so a renewal can be forced with a small fraction of it.
final class Pebble: @unchecked Sendable {
    static let binary = "/usr/bin/pebble"
    static let challengeTestServer = "/usr/bin/pebble-challtestsrv"

    let dir: String
    /// The PEM file of the CA that signed pebble's TLS certificate: the client's extra root.
    let tlsRootPath: String
    let acmePort: Int
    let managementPort: Int
    private let pebble: ChildProcess
    private let dns: ChildProcess

    var directoryURL: String { "https://127.0.0.1:\(acmePort)/dir" }

    private init(dir: String, tlsRootPath: String, acmePort: Int, managementPort: Int, pebble: ChildProcess, dns: ChildProcess) {
        self.dir = dir
        self.tlsRootPath = tlsRootPath
        self.acmePort = acmePort
        self.managementPort = managementPort
        self.pebble = pebble
        self.dns = dns
    }

    /// Fails with what to do when pebble is not installed.
    static func requireInstalled() throws {
        for program in [binary, challengeTestServer] where !FileManager.default.isExecutableFile(atPath: program) {
            throw HarnessError("\(program) is missing: `make test` installs it (Debian package pebble), or `apt-get install pebble`")
        }
    }

    /// Starts both programs on free loopback ports (new ones, up to three times, when another
    /// process took a port first). `httpPort` is where pebble sends HTTP-01 validations.
    static func start(httpPort: Int, tlsALPNPort: Int? = nil) throws -> Pebble {
        try requireInstalled()
        let dir = Harness.tempDir("pebble")
        do {
            let tls = try makeTLS(in: dir)
            var failures: [String] = []
            for attempt in 1...3 {
                if let started = try attemptStart(dir: dir, tls: tls, httpPort: httpPort, tlsALPNPort: tlsALPNPort, attempt: attempt, failures: &failures) {
                    return started
                }
            }
            throw HarnessError("pebble did not start: " + failures.joined(separator: " | "))
        } catch {
            Harness.cleanup(dir)
            throw error
        }
    }

    private static func attemptStart(
        dir: String, tls: (root: String, cert: String, key: String), httpPort: Int, tlsALPNPort: Int?, attempt: Int, failures: inout [String]
    ) throws -> Pebble? {
        let dnsPort = try FreePort.take(1, udp: true)[0]
        let ports = try FreePort.take(4).filter { $0 != dnsPort && $0 != httpPort }
        guard ports.count == 4 else { return nil }
        let (dnsManagement, acme, management, unusedTLS) = (ports[0], ports[1], ports[2], ports[3])
        let dns = try ChildProcess.start(
            challengeTestServer,
            [
                "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "", "-http01", "", "-https01", "", "-tlsalpn01", "",
                "-dns01", "127.0.0.1:\(dnsPort)", "-management", "127.0.0.1:\(dnsManagement)",
            ], logPath: dir + "/challtestsrv-\(attempt).log")
        guard dns.waitForPort(dnsManagement, timeout: 10) else {
            failures.append("pebble-challtestsrv: " + dns.log.suffix(300))
            dns.stop()
            return nil
        }
        let config = """
            {"pebble": {"listenAddress": "127.0.0.1:\(acme)", "managementListenAddress": "127.0.0.1:\(management)",
              "certificate": "\(tls.cert)", "privateKey": "\(tls.key)", "httpPort": \(httpPort), "tlsPort": \(tlsALPNPort ?? unusedTLS),
              "ocspResponderURL": "", "externalAccountBindingRequired": false, "certificateValidityPeriod": 3600}}
            """
        try FileIO.writeAtomically(Array(config.utf8), to: dir + "/pebble-config.json")
        let pebble = try ChildProcess.start(
            binary, ["-config", dir + "/pebble-config.json", "-dnsserver", "127.0.0.1:\(dnsPort)", "-strict=false"],
            environment: ["PEBBLE_VA_NOSLEEP": "1"], logPath: dir + "/pebble-\(attempt).log")
        guard pebble.waitForPort(acme, timeout: 10), pebble.waitForPort(management, timeout: 5) else {
            failures.append("pebble: " + pebble.log.suffix(300))
            pebble.stop()
            dns.stop()
            return nil
        }
        return Pebble(dir: dir, tlsRootPath: tls.root, acmePort: acme, managementPort: management, pebble: pebble, dns: dns)
    }

    /// Stops both programs by PID and removes the directory; safe to call twice.
    func stop() {
        pebble.stop()
        dns.stop()
        Harness.cleanup(dir)
    }

    /// What pebble logged.
    var log: String { pebble.log }

    /// The root that pebble's issuing chain ends in (its management interface, `/roots/0`).
    func issuingRoot() throws -> Certificate {
        let out = try Harness.run(
            "/usr/bin/curl", ["-sS", "--fail", "--max-time", "5", "--cacert", tlsRootPath, "https://127.0.0.1:\(managementPort)/roots/0"])
        guard out.status == 0 else { throw HarnessError("cannot fetch pebble's root: \(out.stderr)") }
        return try Certificate(pemEncoded: out.stdout)
    }

    /// A CA and, signed by it, a certificate for 127.0.0.1 and localhost: pebble's TLS identity.
    static func makeTLS(in dir: String) throws -> (root: String, cert: String, key: String) {
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Folio ACME test CA") }
        let now = Date()
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey), notValidBefore: now - 3600, notValidAfter: now + 86400,
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            }, issuerPrivateKey: .init(caKey))
        let key = P256.Signing.PrivateKey()
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: now - 3600, notValidAfter: now + 86400,
            issuer: caName, subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            }, issuerPrivateKey: .init(caKey))
        let paths = (root: dir + "/tls-root.pem", cert: dir + "/tls-cert.pem", key: dir + "/tls-key.pem")
        try FileIO.writeAtomically(Array(try ca.serializeAsPEM().pemString.utf8), to: paths.root)
        try FileIO.writeAtomically(Array(try leaf.serializeAsPEM().pemString.utf8), to: paths.cert)
        try FileIO.writeAtomically(Array(key.pemRepresentation.utf8), to: paths.key)
        return paths
    }
}
