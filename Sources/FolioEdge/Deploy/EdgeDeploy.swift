import FolioPublished
import FolioSupport
import Foundation
import Logging

/// The push-deploy endpoints of an edge serving a published directory (`--deploy-token-file`),
/// answered on the admin listener (or the only one):
///
/// - `POST /.folio/deploy` with a ``DeployBegin``: takes the deploy lock (409 naming the holder
///   when another deploy has it), answers a ``DeployStarted`` with the files the edge lacks.
/// - `PUT /.folio/deploy/ID/RELATIVE`: stages one file; an object is checked against its name's
///   SHA-256 on arrival (422 when it does not match).
/// - `POST /.folio/deploy/ID/commit`: checks the staged manifests, moves the files into place
///   in a local publish's order and loads the new version (``DeployCommitted``); 412 for a
///   rollback without force, 422 for a version the edge refuses. Either way the lock is let go.
/// - `DELETE /.folio/deploy/ID`: drops the staged files and lets the lock go.
///
/// Every request needs `Authorization: Bearer TOKEN` (401 otherwise).
final class EdgeDeploy: Sendable {
    let root: String
    private let token: BearerToken
    private let trust: Trust?
    private let store: SiteStore
    private let lock: DeployLock
    /// Loads what the published root holds now (the reloader's check).
    private let reload: @Sendable () async -> Void
    private let logger: Logger

    init(
        root: String, token: String, trust: Trust?, store: SiteStore, staleAfter: TimeInterval, logger: Logger,
        reload: @escaping @Sendable () async -> Void
    ) {
        self.root = root
        self.token = BearerToken(token)
        self.trust = trust
        self.store = store
        self.lock = DeployLock(staleAfter: staleAfter)
        self.logger = logger
        self.reload = reload
        // Staging left by an edge stopped mid-deploy.
        try? FileManager.default.removeItem(atPath: DeployStaging.base(root))
    }

    /// The 401 for a request without the deploy token; nil when it has it.
    func refusal(authorization: String?) -> DeployResponse? {
        switch token.check(authorization: authorization) {
        case .accepted: nil
        case .missing: .text(401, "send the deploy token: Authorization: Bearer TOKEN (folio-build publish --token-file FILE)")
        case .wrong: .text(401, "wrong deploy token: it does not match the edge's --deploy-token-file")
        }
    }

    /// Answers one deploy request.
    func handle(_ request: DeployRequest) async -> DeployResponse {
        if let refused = refusal(authorization: request.authorization) { return refused }
        guard let target = DeployRoute.target(method: request.method, path: request.path) else {
            return .text(405, "unknown deploy request \(request.method) \(request.path): see folio-build publish --help")
        }
        do throws(DeployFailure) {
            switch target {
            case .begin: return try begin(request.body)
            case .file(let id, let relative): return try stage(id, relative, request.body)
            case .commit(let id): return try await commit(id)
            case .abort(let id): return abort(id)
            case .prune: return try DeployPrune(root: root, lock: lock, store: store, logger: logger).run(request.body)
            }
        } catch {
            return .text(error.status, error.message)
        }
    }

    private func begin(_ body: [UInt8]) throws(DeployFailure) -> DeployResponse {
        let begin: DeployBegin
        do { begin = try JSONDecoder().decode(DeployBegin.self, from: Data(body)) } catch {
            throw DeployFailure(400, "the deploy's begin request is not the JSON folio-build sends: \(error)")
        }
        let current = store.site.manifest.version
        if begin.version < current, !begin.force {
            throw DeployFailure(
                412, "the edge serves version \(current), the deploy is version \(begin.version): deploying would roll it back; "
                    + "build a newer version, or pass --force to deploy the older one")
        }
        let missing = missing(begin.files)
        if begin.dryRun == true { return .json(200, DeployStarted(id: "", missing: missing, current: current)) }
        let hasManifest = begin.files.contains { $0.path == PublishedLayout.manifest }
        let (session, replaced) = try lock.take(holder: begin.holder, force: begin.force, hasManifest: hasManifest)
        if let replaced {
            DeployStaging(root: root, id: replaced.id).remove()
            logger.warning("took over a stale deploy lock", metadata: ["holder": "\(replaced.holder)", "id": "\(replaced.id)"])
        }
        let staging = DeployStaging(root: root, id: session.id)
        do throws(DeployFailure) { try staging.create() } catch {
            lock.release(session.id)
            throw error
        }
        logger.info("deploy begun", metadata: ["id": "\(session.id)", "holder": "\(begin.holder)", "version": "\(begin.version)", "missing": "\(missing.count)"])
        return .json(200, DeployStarted(id: session.id, missing: missing, current: current))
    }

    private func stage(_ id: String, _ relative: String, _ body: [UInt8]) throws(DeployFailure) -> DeployResponse {
        _ = try lock.use(id)
        let staging = DeployStaging(root: root, id: id)
        // A file written while the deploy was aborted (the removal may have missed it) goes too.
        defer { if !lock.holds(id) { staging.remove() } }
        try staging.store(relative, body)
        return .json(201, ["stored": relative])
    }

    private func commit(_ id: String) async throws(DeployFailure) -> DeployResponse {
        let session = try lock.use(id, committing: true)
        let staging = DeployStaging(root: root, id: id)
        defer {
            lock.release(id)
            staging.remove()
        }
        let previous = store.site.manifest.version
        let commit = DeployCommit(staging: staging, trust: trust, force: session.force, hasManifest: session.hasManifest, site: store.site)
        let version: Int
        do throws(DeployFailure) {
            version = try commit.check()
            try commit.moveIntoPlace()
        } catch {
            logger.error("deploy refused; still serving the previous version", metadata: ["id": "\(id)", "version": "\(previous)", "error": "\(error)"])
            throw error
        }
        await reload()
        let served = store.site.manifest.version
        guard served == version else {
            throw DeployFailure(500, "the edge moved version \(version) into place but serves version \(served): see the edge's log for why it did not load")
        }
        logger.info("deployed", metadata: ["id": "\(id)", "holder": "\(session.holder)", "version": "\(version)", "previous": "\(previous)"])
        return .json(200, DeployCommitted(version: version, previous: previous))
    }

    private func abort(_ id: String) -> DeployResponse {
        guard (try? lock.use(id)) != nil else { return .json(200, ["aborted": false]) }
        lock.release(id)
        DeployStaging(root: root, id: id).remove()
        return .json(200, ["aborted": true])
    }

    /// The files the published root lacks, or has at another size; of a channel's mutable ones
    /// (manifests, heads), all when any differs from the root's, none when all are the same.
    private func missing(_ files: [DeployBegin.File]) -> [String] {
        let valid = files.filter { DeployPaths.problem($0.path) == nil }
        let isMutable = { (file: DeployBegin.File) in PublishedHeaders.kind(of: file.path) == .mutable }
        let changed = Set(
            valid.filter(isMutable).filter { file in
                Self.size(root + "/" + file.path) != file.size || (try? ContentHash.sha256Hex(file: root + "/" + file.path).hex) != file.sha256
            }.map { DeployPaths.channel(of: $0.path) })
        return valid.filter { file in
            isMutable(file) ? changed.contains(DeployPaths.channel(of: file.path)) : Self.size(root + "/" + file.path) != file.size
        }.map(\.path)
    }

    /// The size of the file at `path`; nil when there is none.
    private static func size(_ path: String) -> Int? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(st.st_size)
    }
}
