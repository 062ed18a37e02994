import Logging
import NIOCore
import Synchronization

/// What a reload can change while connections stay open: read by each new connection (limits)
/// and by shutdown (the drain timeout).
final class LiveSettings: Sendable {
    private let state: Mutex<(limits: ConnectionLimits, drainTimeout: Duration)>

    init(limits: ConnectionLimits, drainTimeout: Duration) { state = Mutex((limits, drainTimeout)) }

    var limits: ConnectionLimits { state.withLock { $0.limits } }
    var drainTimeout: Duration { state.withLock { $0.drainTimeout } }

    func update(_ listener: EdgeListener, drainTimeout: Duration) { state.withLock { $0 = (listener.limits, drainTimeout) } }
}

/// SIGHUP with a configuration to read again (`--config`): reads it, and applies what can change
/// without a restart (certificates, limits and timeouts, manifest lifetimes and trust keys, the
/// tier's token, maintenance file, origins and their policy, an `s3://` origin's credentials
/// and AWS settings (read again from the AWS files), the log level). A configuration
/// that does not read, or whose certificates or token do not load, changes nothing: the old one
/// keeps serving and the error is logged once.
struct ConfigReloader: Sendable {
    let reload: @Sendable () throws -> EdgeConfiguration
    let live: LiveSettings
    let certificates: CertificateStore?
    let site: SiteReloader?
    let admin: CacheAdmin?
    /// A tier's cache, whose origins a reload replaces.
    var cache: HTTPCache? = nil
    let logger: Logger

    /// Applies the configuration read now; false (and a log line) when it is refused.
    func apply() async -> Bool {
        do {
            let next = try reload()
            try await applyChecked(next)
            logger.info("reloaded the configuration")
            return true
        } catch {
            logger.error("configuration reload refused; the previous configuration keeps serving", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Loads what can fail first (certificates, the token), then changes everything at once.
    private func applyChecked(_ next: EdgeConfiguration) async throws {
        guard (certificates != nil) == (!next.listener.tls.isEmpty || next.listener.acme != nil) else {
            throw EdgeStartupError("switching between http and https takes a restart (systemctl restart folio-edge)")
        }
        var token: String?
        if case .cacheTier(let tier) = next.mode, let path = tier.purgeTokenFile { token = try BearerToken.read(path, what: "purge") }
        do { try certificates?.replace(next.listener.tls.map { ($0.certificate, $0.key) }) } catch { throw EdgeStartupError("\(error)") }
        live.update(next.listener, drainTimeout: next.drainTimeout)
        EdgeLogHandler.setLevel(next.logLevel)
        switch next.mode {
        case .origin(let origin): await site?.update(hints: origin.manifestHintOverride, trust: origin.trust)
        case .cacheTier(let tier):
            admin?.update(token: token, maintenanceFile: tier.maintenanceFile)
            if cache?.reconfigure(origins: tier.origins, policy: tier.originPolicy, healthInterval: TimeAmount(tier.healthInterval)) == true {
                logger.info("new origins take the next requests", metadata: ["origins": "\(tier.origins.map(\.url))", "policy": "\(tier.originPolicy.rawValue)"])
                S3Origin.logSigning(tier.origins, logger)
            }
        }
    }
}
