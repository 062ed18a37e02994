import Crypto
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps a certificate for the configured domains in the state directory: obtains one when
/// there is none, renews it when the configured fraction of its lifetime has passed, and
/// retries failures with exponential backoff. The edge runs `run(onCertificate:)` for its
/// lifetime and serves `responder`'s challenge answers.
package actor ACMEManager {
    package nonisolated let configuration: ACMEConfiguration
    package nonisolated let responder: ACMEChallengeResponder
    private let logger: Logger
    private let clock: any ACMEClock
    private let jitter: @Sendable () -> Double
    private var store: ACMEStateStore { ACMEStateStore(path: configuration.stateDirectory) }

    /// A manager for `configuration` (checked here: an invalid domain or an unreadable trust
    /// root file is an error now, not at the first renewal). `clock` and `jitter` (a random
    /// number in 0..<1 for the backoff) are the tests' to replace.
    package init(
        configuration: ACMEConfiguration, responder: ACMEChallengeResponder = ACMEChallengeResponder(),
        logger: Logger = Logger(label: "folio.acme"), clock: any ACMEClock = ACMESystemClock(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) throws(ACMEError) {
        self.configuration = try configuration.validated()
        if let roots = configuration.extraTrustRootsPath { _ = try ACMETransport.roots(roots) }
        self.responder = responder
        self.logger = logger
        self.clock = clock
        self.jitter = jitter
    }

    /// The usable certificate in the state directory (it parses, matches its key and has not
    /// expired), if any, whatever its names.
    package func loadCertificate() -> ACMEIssued? {
        store.loadCertificate(now: clock.now())
    }

    /// When `issued` is due for renewal.
    package nonisolated func renewalDate(for issued: ACMEIssued) -> Date {
        issued.renewalDate(fraction: configuration.renewalFraction)
    }

    /// Whether `issued` should be replaced now: its renewal date has come, or it lacks a
    /// configured domain.
    package func isDue(_ issued: ACMEIssued) -> Bool {
        clock.now() >= renewalDate(for: issued) || !issued.covers(configuration.domains)
    }

    /// Obtains a new certificate now and writes it (and the account, the first time) to the
    /// state directory. On any error the directory keeps what it had.
    package func obtain() async throws -> ACMEIssued {
        let store = self.store
        try store.prepare()
        let lock = try store.lock()
        defer { close(lock) }
        let transport = try ACMETransport(extraTrustRootsPath: configuration.extraTrustRootsPath, requestTimeout: configuration.requestTimeout)
        do {
            let issued = try await obtain(store: store, transport: transport)
            await transport.shutdown()
            return issued
        } catch {
            await transport.shutdown()
            if error is ACMEError || error is CancellationError { throw error }
            throw ACMEError(step: "obtain", "\(error)")
        }
    }

    private func obtain(store: ACMEStateStore, transport: ACMETransport) async throws -> ACMEIssued {
        let existingKey = try store.loadAccountKey()
        let key = existingKey ?? ACMEAccountKey()
        let client = try await ACMEClient.connect(transport: transport, directoryURL: configuration.directoryURL, key: key)
        let saved = existingKey == nil ? nil : store.loadAccountURL(directoryURL: configuration.directoryURL)
        if let saved {
            await client.useAccount(saved)
        } else {
            try await register(client, store: store, newKey: existingKey == nil)
        }
        let certificateKey = P256.Signing.PrivateKey()
        let csr = try ACMECSR.der(domains: configuration.domains, key: certificateKey)
        let plan = ACMEChallengePlan(
            types: configuration.challengeTypes, pollInterval: configuration.pollInterval, pollTimeout: configuration.pollTimeout)
        let chain: [UInt8]
        do {
            chain = try await client.issue(domains: configuration.domains, csr: csr, responder: responder, plan: plan)
        } catch let error as ACMEError where saved != nil && error.problemType == ACMEProblem.accountDoesNotExist {
            logger.warning("ACME: the account in \(store.accountPath) is unknown to the directory; registering the key again")
            try await register(client, store: store, newKey: false)
            chain = try await client.issue(domains: configuration.domains, csr: csr, responder: responder, plan: plan)
        }
        let issued = try store.saveCertificate(chain: chain, key: certificateKey, domains: configuration.domains, now: clock.now())
        let names = issued.domains.joined(separator: ", ")
        logger.info("ACME: obtained a certificate for \(names), valid until \(issued.notAfter), serial \(issued.serialNumber)")
        return issued
    }

    private func register(_ client: ACMEClient, store: ACMEStateStore, newKey: Bool) async throws {
        let url = try await client.register(contact: configuration.contactEmail)
        try store.saveAccount(key: client.key, newKey: newKey, url: url, directoryURL: configuration.directoryURL)
        logger.info("ACME: account \(url)")
    }

    /// Until the task is cancelled: hands the certificate already in the state directory (if
    /// usable) to `onCertificate`, then obtains one whenever there is none or it is due, hands
    /// each new one over after writing it, and sleeps until the next renewal. Failures are
    /// logged and retried after an exponential backoff with jitter. Returns on cancellation;
    /// throws only a configuration error, which no retry can mend.
    package func run(onCertificate: @Sendable (ACMEIssued) async -> Void) async throws {
        var current = loadCertificate()
        if let current { await onCertificate(current) }
        var failures = 0
        while !Task.isCancelled {
            if let issued = current, !isDue(issued) {
                logger.info("ACME: certificate valid until \(issued.notAfter); next renewal at \(renewalDate(for: issued))")
                guard (try? await clock.sleep(until: renewalDate(for: issued))) != nil else { return }
                continue
            }
            do {
                let issued = try await obtain()
                current = issued
                failures = 0
                await onCertificate(issued)
            } catch {
                if Task.isCancelled { return }
                if let error = error as? ACMEError, error.step == "configuration" { throw error }
                failures += 1
                let delay = configuration.backoff.delay(attempt: failures, jitter: jitter())
                logger.error("\(error) (failure \(failures); retrying in \(Int(delay.rounded(.up))) s)")
                guard (try? await clock.sleep(until: clock.now().addingTimeInterval(delay))) != nil else { return }
            }
        }
    }
}
