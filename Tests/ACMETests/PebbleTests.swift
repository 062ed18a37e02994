import Crypto
@testable import FolioACME
import FolioTestSupport
import Foundation
import Logging
import Testing
import X509

/// The whole exchange against pebble, Let's Encrypt's test CA, run by the test on loopback:
/// real HTTP-01 validation of the test's challenge server, and pebble's rejected nonces.
// The limit is a safety net, not a speed check: on a 2-core machine running every suite at once
// with builds beside it, the first exchange has taken 98 s.
@Suite("ACME against pebble", .serialized, .timeLimit(.minutes(6)))
struct PebbleTests {
    /// What a test gets: pebble, the HTTP-01 and TLS-ALPN-01 servers answering from
    /// `responder`, and a state directory that does not exist yet.
    struct Setup {
        var pebble: Pebble
        var http: LoopbackServer
        var alpn: LoopbackServer
        var responder: ACMEChallengeResponder
        var state: String
    }

    /// Runs `body` with a fresh setup; everything is stopped and removed afterwards.
    static func withPebble(_ body: (Setup) async throws -> Void) async throws {
        try Pebble.requireInstalled()
        let responder = ACMEChallengeResponder()
        let http = try await ChallengeServer.start(responder: responder)
        let scratch = Harness.tempDir("acme-state")
        defer { Harness.cleanup(scratch) }
        var failure: (any Error)?
        do {
            let alpn = try await ALPNChallengeServer.start(responder: responder)
            do {
                let pebble = try Pebble.start(httpPort: http.port, tlsALPNPort: alpn.port)
                defer { pebble.stop() }
                try await body(Setup(pebble: pebble, http: http, alpn: alpn, responder: responder, state: scratch + "/state"))
            } catch { failure = error }
            await alpn.stop()
        } catch { failure = failure ?? error }
        await http.stop()
        if let failure { throw failure }
    }

    /// A manager for the setup's pebble and state directory, logging nowhere.
    static func manager(_ setup: Setup, clock: any ACMEClock = ACMESystemClock(), logger: Logger = Fixtures.quietLogger, _ adjust: (inout ACMEConfiguration) -> Void = { _ in }) throws -> ACMEManager {
        var config = configuration(setup.pebble, state: setup.state)
        adjust(&config)
        return try ACMEManager(configuration: config, responder: setup.responder, logger: logger, clock: clock)
    }

    static func configuration(_ pebble: Pebble, state: String) -> ACMEConfiguration {
        var config = ACMEConfiguration(
            directoryURL: pebble.directoryURL, domains: Fixtures.domains, contactEmail: "ops@folio.test",
            extraTrustRootsPath: pebble.tlsRootPath, stateDirectory: state)
        config.pollInterval = 0.05
        config.pollTimeout = 15
        config.requestTimeout = 10
        return config
    }

    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
    }

    @Test("a certificate for two names: it verifies to pebble's root, names both, matches its key; the state is complete")
    func obtainsCertificate() async throws {
        try await Self.withPebble { setup in
            let (pebble, state) = (setup.pebble, setup.state)
            let issued = try await Self.manager(setup).obtain()

            let chain = try Fixtures.certificates(issued.chainPEM)
            #expect(chain.count >= 2)
            var verifier = Verifier(rootCertificates: CertificateStore([try pebble.issuingRoot()])) { RFC5280Policy() }
            let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore(Array(chain.dropFirst())))
            guard case .validCertificate = result else {
                Issue.record("the chain does not verify to pebble's root: \(result)")
                return
            }
            #expect(try Fixtures.dnsNames(chain[0]).sorted() == Fixtures.domains)
            #expect(issued.domains.sorted() == Fixtures.domains)
            let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: state + "/certificate.key", encoding: .utf8))
            #expect(chain[0].publicKey == Certificate.PublicKey(key.publicKey))
            #expect(issued.notBefore == chain[0].notValidBefore && issued.notAfter == chain[0].notValidAfter)

            #expect(issued.chainPath == state + "/certificate.pem" && issued.keyPath == state + "/certificate.key")
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: issued.chainPath))) == issued.chainPEM)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: issued.keyPath))) == issued.keyPEM)
            #expect(try FileManager.default.contentsOfDirectory(atPath: state).sorted() == ["account.json", "account.key", "certificate.key", "certificate.pem"])
            #expect(Self.mode(state) == 0o700)
            #expect(Self.mode(state + "/account.key") == 0o600 && Self.mode(state + "/certificate.key") == 0o600)
            #expect(Self.mode(state + "/account.json") == 0o644 && Self.mode(state + "/certificate.pem") == 0o644)
            let account = try JSONDecoder().decode(ACMEStateStore.Account.self, from: Data(contentsOf: URL(fileURLWithPath: state + "/account.json")))
            #expect(account.directory == pebble.directoryURL)
            #expect(account.account.hasPrefix("https://127.0.0.1:\(pebble.acmePort)/"))
            _ = try ACMEAccountKey(pem: String(contentsOfFile: state + "/account.key", encoding: .utf8))
            #expect(setup.http.answers >= 2, "pebble fetched \(setup.http.answers) key authorizations")
            #expect(setup.alpn.answers == 0)
            #expect(setup.responder.isEmpty)
        }
    }

    @Test("a second obtain() reuses the account and gets a new certificate and key")
    func reusesAccount() async throws {
        try await Self.withPebble { setup in
            let state = setup.state
            let first = try await Self.manager(setup).obtain()
            let accountKey = try Data(contentsOf: URL(fileURLWithPath: state + "/account.key"))
            let accountJSON = try Data(contentsOf: URL(fileURLWithPath: state + "/account.json"))
            let again = try Self.manager(setup)
            let second = try await again.obtain()
            #expect(try Data(contentsOf: URL(fileURLWithPath: state + "/account.key")) == accountKey)
            #expect(try Data(contentsOf: URL(fileURLWithPath: state + "/account.json")) == accountJSON)
            #expect(second.serialNumber != first.serialNumber)
            #expect(second.keyPEM != first.keyPEM)
            #expect(await again.loadCertificate()?.serialNumber == second.serialNumber)
            #expect(setup.pebble.log.components(separatedBy: "accounts in memory").count == 2, "pebble made one account")
        }
    }

    @Test("run() obtains, renews when the injected clock passes the renewal point, and at restart hands over the stored certificate")
    func runRenews() async throws {
        // On a thread of its own: its deadlines are wall time across many awaits, which a full
        // `make test` keeps waiting for the cooperative threads (ThreadsExecutor).
        try await Harness.onOwnThread { executor in try await runRenewsBody(executor) }
    }

    func runRenewsBody(_ executor: ThreadsExecutor) async throws {
        try await Self.withPebble { setup in
            let state = setup.state
            let clock = TestClock()
            let sink = LogSink()
            let manager = try Self.manager(setup, clock: clock, logger: sink.logger)
            let seen = Recorder<ACMEIssued>()
            let task = Task(executorPreference: executor) {
                try await manager.run { issued in
                    // The first certificate: move past its renewal point. The second: back to now.
                    if seen.append(issued) == 1 { clock.set(manager.renewalDate(for: issued) + 1) } else { clock.reset() }
                }
            }
            let renewed = await Fixtures.eventually(timeout: 30) { seen.all.count >= 2 }
            task.cancel()
            try await task.value
            #expect(renewed, "run() handed over \(seen.all.count) certificates; log: \(sink.messages)")
            let issued = seen.all
            guard issued.count == 2 else { return }
            #expect(issued[0].serialNumber != issued[1].serialNumber)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: state + "/certificate.pem"))) == issued[1].chainPEM)
            #expect(sink.messages.contains { $0.contains("next renewal at") })

            // A restart: the stored certificate at once, and no renewal before its time.
            let restarted = try Self.manager(setup, clock: TestClock())
            let handed = Recorder<String>()
            let again = Task(executorPreference: executor) { try await restarted.run { issued in handed.append(issued.serialNumber) } }
            let started = await Fixtures.eventually(timeout: 5) { !handed.all.isEmpty }
            try await Task.sleep(for: .milliseconds(200))
            again.cancel()
            try await again.value
            #expect(started)
            #expect(handed.all == [issued[1].serialNumber])
        }
    }

    @Test("pebble's problem documents come back as one line: step, ACME error type, detail")
    func problemFromPebble() async throws {
        try await Self.withPebble { setup in
            let manager = try Self.manager(setup) { $0.contactEmail = "nobody" }
            let error = try await #require(throws: ACMEError.self) { try await manager.obtain() }
            #expect(error.description == #"ACME newAccount: invalidContact: contact email "nobody" is invalid (HTTP 400)"#)
            #expect(try FileManager.default.contentsOfDirectory(atPath: setup.state).isEmpty)
        }
    }

    @Test("TLS-ALPN-01 when preferred: pebble accepts the challenge certificates")
    func tlsALPN() async throws {
        try await Self.withPebble { setup in
            let manager = try Self.manager(setup) { $0.challengeTypes = [.tlsALPN01, .http01] }
            let issued = try await manager.obtain()
            #expect(issued.domains.sorted() == Fixtures.domains)
            #expect(setup.alpn.answers >= 2, "pebble completed \(setup.alpn.answers) acme-tls/1 handshakes")
            #expect(setup.http.answers == 0)
            #expect(setup.responder.isEmpty)
        }
    }
}
