import FolioPublished
import FolioSupport
import Foundation
import Logging
import Synchronization

/// The version being served. Replacing it happens only after the next version is fully
/// loaded and verified.
final class SiteStore: Sendable {
    private let current: Mutex<Site>
    /// Counts replacements, so a connection can keep its own reference to the current site
    /// and take the lock only when this moved (a plain load per request otherwise).
    private let replacements = Atomic<Int>(0)
    /// The published directory it serves.
    let root: String

    init(_ site: Site, root: String) {
        current = Mutex(site)
        self.root = root
    }

    var site: Site { current.withLock { $0 } }

    /// The number of replacements so far; read it before `site`.
    var generation: Int { replacements.load(ordering: .acquiring) }

    func replace(with site: Site) {
        current.withLock { $0 = site }
        replacements.add(1, ordering: .releasing)
    }

    /// Replaces `expected` with `site` only while `expected` is still the one served (a reload
    /// may have replaced it meanwhile); whether it did.
    func replace(_ expected: Site, with site: Site) -> Bool {
        let done = current.withLock { served in
            guard served === expected else { return false }
            served = site
            return true
        }
        if done { replacements.add(1, ordering: .releasing) }
        return done
    }
}

/// What identifies every channel's `manifest.plist` on disk: a publish into any channel
/// (a rename gives a new inode), a new channel or a removed one changes it.
struct PublishedStamp: Equatable, Sendable {
    /// Each published channel's manifest stamp, by channel name.
    var manifests: [String: FileStamp]

    /// The stamps of the channels `root` holds now.
    static func read(_ root: String) -> PublishedStamp {
        var manifests: [String: FileStamp] = [:]
        for channel in PublishedLayout.publishedChannels(root) {
            manifests[channel] = FileStamp.read(PublishedLayout.channelManifest(root, channel))
        }
        return PublishedStamp(manifests: manifests)
    }
}

/// Watches every channel's `manifest.plist` and reloads on change or on request (SIGHUP).
actor SiteReloader {
    private enum State {
        case idle(PublishedStamp)
        case failed(PublishedStamp, String)
    }

    private let store: SiteStore
    private var loader: SiteLoader
    private let logger: Logger
    private let metrics: EdgeMetrics
    /// Told the new status line (`systemctl status`) at each version swapped in.
    private let notifier: SystemdNotifier
    private var state: State

    init(store: SiteStore, loader: SiteLoader, logger: Logger, metrics: EdgeMetrics, notifier: SystemdNotifier = SystemdNotifier()) {
        self.store = store
        self.loader = loader
        self.logger = logger
        self.metrics = metrics
        self.notifier = notifier
        self.state = .idle(PublishedStamp.read(loader.root))
        metrics.version.record(store.site.manifest.version)
        metrics.awaitingFirstDeploy.record(store.site.isAwaitingDeploy ? 1 : 0)
    }

    /// Takes new manifest lifetimes and trust keys (a reload of the configuration), for the next
    /// load (`check(force: true)`); a load they refuse keeps the version served.
    func update(hints: CacheHintOverride, trust: Trust?) {
        loader.manifestHintOverride = hints
        loader.trust = trust
    }

    /// Reloads when a channel's `manifest.plist` changed since the last attempt, or always with
    /// `force`; a channel whose manifest has the bytes of one in `parsed` (a deploy's) takes it.
    /// `checked`: the object files a deploy's commit staged and checked (``ObjectSet``).
    func check(force: Bool = false, parsed: [String: ParsedManifest] = [:], checked: Set<String> = []) {
        let stamp = PublishedStamp.read(loader.root)
        let last: PublishedStamp
        switch state {
        case .idle(let s), .failed(let s, _): last = s
        }
        guard force || stamp != last else { return }
        let old = store.site
        // Still nothing to load (a SIGHUP, a deploy staging into the root): nothing to report.
        if old.isAwaitingDeploy, AwaitingDeploy.isEmpty(loader.root) {
            state = .idle(stamp)
            return
        }
        do {
            let start = ContinuousClock.now
            // A configuration reload (force) changes what every route says: loaded whole.
            var loader = self.loader
            loader.checked = checked
            let site = force ? try loader.load(previous: old, parsed: parsed) : try loader.update(previous: old, parsed: parsed)
            state = .idle(stamp)
            site.reportChannelFailures(logger: logger, metrics: metrics)
            if site.sameManifests(as: old), !force { return }
            swapIn(site, previous: old, since: start)
        } catch {
            state = .failed(stamp, "\(error)")
            metrics.reloadFailures.increment()
            logger.error(
                "rejected publish; still serving the previous version",
                metadata: ["version": "\(old.manifest.version)", "error": "\(error)"])
        }
    }

    /// Serves `site` from the next request on; its version in the metrics, the log and systemd's status.
    private func swapIn(_ site: Site, previous old: Site, since start: ContinuousClock.Instant) {
        store.replace(with: site)
        metrics.version.record(site.manifest.version)
        metrics.awaitingFirstDeploy.record(0)
        notifier.send("STATUS=\(site.statusLine)")
        logLoaded(site, previous: old, since: start)
    }

    /// The log line of a version swapped in.
    private func logLoaded(_ site: Site, previous old: Site, since start: ContinuousClock.Instant) {
        logger.info(
            "loaded version",
            metadata: [
                "version": "\(site.manifest.version)", "previous": "\(old.manifest.version)",
                "entries": "\(site.manifest.entries.count)", "bytesInMemory": "\(site.bytesInMemory)",
                "channels": "\(site.channelVersions)",
                "ms": "\(Int((ContinuousClock.now - start) / .milliseconds(1)))",
            ])
    }
}

extension Site {
    /// What systemd's status says of it.
    var statusLine: String { isAwaitingDeploy ? AwaitingDeploy.status : "serving version \(manifest.version)" }

    /// Each channel and its version, by name: `beta 3, production 12`.
    var channelVersions: String {
        channels.values.sorted { $0.name < $1.name }.map { "\($0.name) \($0.manifest.version)" }.joined(separator: ", ")
    }

    /// Logs each channel this load refused and counts it as a failed reload.
    func reportChannelFailures(logger: Logger, metrics: EdgeMetrics) {
        for failure in channelFailures {
            metrics.reloadFailures.increment()
            logger.error(
                "rejected channel publish; the other channels load",
                metadata: [
                    "channel": "\(failure.channel)", "serving": "\(failure.servingVersion.map { "version \($0)" } ?? "nothing")",
                    "error": "\(failure.error)",
                ])
        }
    }
}
