import FolioPublished
import FolioSupport
import Foundation
import Logging

/// What `folio-build prune URL` sends to `POST /.folio/deploy/prune`.
struct PruneRequest: Codable, Sendable {
    /// The newest versions kept per channel.
    var keep: Int
    var dryRun: Bool
    /// Who prunes: `user@host pid N`.
    var holder: String
}

/// `POST /.folio/deploy/prune`: removes what no kept version needs from the edge's published
/// root (``DirectoryPrune``, the rule a local prune follows), holding the deploy lock so that
/// no deploy runs meanwhile (409 while one does); answers a ``PruneReport``.
///
/// The edge's index needs no object dropped: it holds only the objects of the manifests it
/// serves and of the version they replaced, and the prune keeps every object the index holds
/// (besides the kept versions'). So an object pruned was already answered 404, and one kept is
/// still served. Deltas and versioned manifests are held in memory: those removed leave the
/// routes at once, so they are answered 404 too.
struct DeployPrune {
    let root: String
    let lock: DeployLock
    let store: SiteStore
    let logger: Logger

    /// The largest `keep` a request may ask for.
    static let maxKeep = 1000

    func run(_ body: [UInt8]) throws(DeployFailure) -> DeployResponse {
        let request: PruneRequest
        do { request = try JSONDecoder().decode(PruneRequest.self, from: Data(body)) } catch {
            throw DeployFailure(400, "the prune request is not the JSON folio-build sends: \(error)")
        }
        guard (1...Self.maxKeep).contains(request.keep) else {
            throw DeployFailure(400, "keep must be 1 to \(Self.maxKeep) versions, got \(request.keep)")
        }
        let holder = DeployBegin(protocol: DeployBegin.protocolVersion, version: 0, holder: "a prune by \(request.holder)", force: false, channels: [:], files: [])
        let (session, replaced) = try lock.take(holder)
        defer { lock.release(session.id) }
        if let replaced {
            DeployStaging(root: root, id: replaced.id).remove()
            logger.warning("took over a stale deploy lock", metadata: ["holder": "\(replaced.holder)", "id": "\(replaced.id)"])
        }
        let plan = try prune(request)
        if !request.dryRun { forget(plan.removed) }
        logger.info(
            request.dryRun ? "prune dry run" : "pruned",
            metadata: [
                "holder": "\(request.holder)", "keep": "\(request.keep)", "removed": "\(plan.removed.count)",
                "removedBytes": "\(plan.removedBytes)", "kept": "\(plan.kept.count)",
            ])
        return .json(200, PruneReport(plan, dryRun: request.dryRun))
    }

    /// The root pruned (or planned) under the builder's lock, keeping what the edge has loaded.
    private func prune(_ request: PruneRequest) throws(DeployFailure) -> PrunePlan {
        var prune = DirectoryPrune(root: root)
        prune.keep = request.keep
        prune.dryRun = request.dryRun
        prune.alsoKeep = Set(store.site.objects.keys)
        do { return try prune.run() } catch {
            logger.error("prune failed", metadata: ["error": "\(error)"])
            throw DeployFailure(error.isLocked ? 409 : 500, error.description)
        }
    }

    /// Drops the removed files' routes from the site served (retried when a reload replaced it
    /// meanwhile: a reload keeps the versioned manifests the previous site held).
    private func forget(_ removed: [PrunePlan.File]) {
        let paths = Set(removed.map { "/" + $0.path })
        for _ in 0..<8 {
            let site = store.site
            if store.replace(site, with: site.without(paths)) { return }
        }
        logger.warning("pruned files stay served from memory until the next reload: the site kept changing")
    }
}

extension Site {
    /// The same site without the routes at `paths`, and without the deltas and versioned
    /// manifests there (so the next reload does not bring them back).
    func without(_ paths: Set<String>) -> Site {
        var channels: [String: LoadedChannel] = [:]
        var deltaBytes = 0
        for (name, c) in self.channels {
            let prefix = "/" + PublishedLayout.channelPrefix(name)
            let kept = LoadedChannel(
                name: c.name, manifest: c.manifest, routes: c.routes.filter { !paths.contains($0.key) },
                versioned: c.versioned.filter { !paths.contains(prefix + PublishedLayout.versionedManifest($0.key)) },
                deltas: c.deltas.filter { !paths.contains($0.key) }, gzip: c.gzip, value: c.value)
            channels[name] = kept
            deltaBytes += c.deltaBytes - kept.deltaBytes
        }
        return Site(
            manifest: manifest, routes: routes.removing(paths), objects: objects, channels: channels, channelFailures: channelFailures,
            bytesInMemory: bytesInMemory - deltaBytes, catalogs: catalogs)
    }
}
