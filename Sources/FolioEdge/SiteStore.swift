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
}

/// Watches `manifest.plist` and reloads on change or on request (SIGHUP).
actor SiteReloader {
    private enum State {
        case idle(ManifestStamp?)
        case failed(ManifestStamp?, String)
    }

    /// What identifies one `manifest.plist` on disk: a rename gives a new inode.
    typealias ManifestStamp = FileStamp

    private let store: SiteStore
    private let loader: SiteLoader
    private let logger: Logger
    private let metrics: EdgeMetrics
    private var state: State

    init(store: SiteStore, loader: SiteLoader, logger: Logger, metrics: EdgeMetrics) {
        self.store = store
        self.loader = loader
        self.logger = logger
        self.metrics = metrics
        self.state = .idle(ManifestStamp.read(PublishedLayout.path(loader.root, PublishedLayout.manifest)))
    }

    /// Reloads when `manifest.plist` changed since the last attempt, or always with `force`.
    func check(force: Bool = false) {
        let stamp = ManifestStamp.read(PublishedLayout.path(loader.root, PublishedLayout.manifest))
        let last: ManifestStamp?
        switch state {
        case .idle(let s), .failed(let s, _): last = s
        }
        guard force || stamp != last else { return }
        let old = store.site
        do {
            let start = ContinuousClock.now
            let site = try loader.load(previous: old)
            if site.manifest.version == old.manifest.version, site.manifest == old.manifest, !force {
                state = .idle(stamp)
                return
            }
            store.replace(with: site)
            metrics.version.record(site.manifest.version)
            state = .idle(stamp)
            logger.info(
                "loaded version",
                metadata: [
                    "version": "\(site.manifest.version)", "previous": "\(old.manifest.version)",
                    "entries": "\(site.manifest.entries.count)", "bytesInMemory": "\(site.bytesInMemory)",
                    "ms": "\((ContinuousClock.now - start).components.attoseconds / 1_000_000_000_000_000)",
                ])
        } catch {
            state = .failed(stamp, "\(error)")
            metrics.reloadFailures.increment()
            logger.error(
                "rejected publish; still serving the previous version",
                metadata: ["version": "\(old.manifest.version)", "error": "\(error)"])
        }
    }
}
