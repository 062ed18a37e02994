import NIOCore
import Synchronization

/// The origin that answered, in the pool it was chosen from: a reload may have replaced the
/// pool since, and its indices name other origins.
struct OriginRef: Sendable {
    let pool: OriginPool
    let index: Int

    /// `Cache-Status`'s `origin="host:port"` parameter.
    var parameter: String { pool.parameter(index) }
}

extension HTTPCache {
    /// The tier's origins and the checks of their health, replaced together.
    struct Origins: Sendable {
        var pool: OriginPool
        var health: OriginHealthChecker
    }

    /// A reload's origins, policy and health-check interval (SIGHUP): when any differs (a
    /// bucket's credentials or AWS settings too), requests from now on go to a new pool (an
    /// origin kept keeps what is known of its health), those in flight finish with the old one,
    /// and the store stays as it is. Whether anything changed.
    @discardableResult
    func reconfigure(origins next: [TierOrigin], policy: OriginPolicy, healthInterval: TimeAmount) -> Bool {
        let replaced = origins.withLock { current -> (old: OriginHealthChecker, new: OriginHealthChecker)? in
            let same = current.pool.origins == next.map(Origin.init)
            guard !same || current.pool.policy != policy || current.health.interval != healthInterval else { return nil }
            let pool = OriginPool(next, policy: policy, rise: current.pool.rise)
            pool.takeHealth(from: current.pool)
            let old = current.health
            current = Origins(pool: pool, health: OriginHealthChecker(pool: pool, client: client, interval: healthInterval))
            return (old, current.health)
        }
        guard let replaced else { return false }
        replaced.old.stop()
        replaced.new.start(on: group.next())
        return true
    }
}
