import FolioPublished
import FolioSupport
import Foundation
import Logging

/// The push-deploy endpoints of an edge serving a published directory (`--deploy-token-file`),
/// answered on the admin listener (or the only one):
///
/// - `POST /.folio/deploy` with a ``DeployBegin`` (each channel's manifest by digest, every file
///   but the objects): answers ``DeployStarted`` with the files the edge lacks (``DeployNeeds``),
///   having taken the deploy lock (409 naming the holder when another deploy has it); or, when
///   it serves the directory as it is, says so and takes nothing.
/// - `PUT /.folio/deploy/ID/RELATIVE`: stages one file; an object is checked against its name's
///   SHA-256 on arrival (422 when it does not match).
/// - `POST /.folio/deploy/ID/files`: stages several files (``DeployFileBatch``).
/// - `POST /.folio/deploy/ID/plan`: stages the batch of files its body may carry, then rebuilds
///   what the edge can of the new version from what it has and was sent (``DeployRebuild``);
///   answers ``DeployPlanned`` with what it still lacks.
/// - `POST /.folio/deploy/ID/commit`: stages the batch its body may carry, then rebuilds and
///   checks the staged version, moves the files
///   into place in a local publish's order and loads it (``DeployCommitted``); 412 for a
///   rollback without force, 422 for a version the edge refuses. Either way the lock is let go.
/// - `POST /.folio/deploy/ID/finish`: a plan, then the commit when the plan lacks nothing
///   (``DeployFinished``): an edit whose files the client sent with it deploys in two requests.
/// - `DELETE /.folio/deploy/ID`: drops the staged files and lets the lock go.
///
/// Every request needs `Authorization: Bearer TOKEN` (401 otherwise).
final class EdgeDeploy: Sendable {
    let root: String
    private let token: BearerToken
    private let trust: Trust?
    private let store: SiteStore
    private let lock: DeployLock
    /// Loads what the published root holds now (the reloader's check), taking the manifests
    /// the deploy parsed and trusting the object files it staged and checked.
    private let reload: @Sendable ([String: ParsedManifest], Set<String>) async -> Void
    private let logger: Logger

    init(
        root: String, token: String, trust: Trust?, store: SiteStore, staleAfter: TimeInterval, logger: Logger,
        reload: @escaping @Sendable ([String: ParsedManifest], Set<String>) async -> Void
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
            case .files(let id): return try stage(id, batch: request.body)
            case .plan(let id):
                var phases = PhaseClock()
                try stageFirst(id, request.body)
                phases.mark("stage")
                return .json(200, try plan(id, phases))
            case .commit(let id):
                try stageFirst(id, request.body)
                return .json(200, try await commit(id))
            case .finish(let id): return .json(200, try await finish(id, request.body))
            case .abort(let id): return abort(id)
            case .prune: return try DeployPrune(root: root, lock: lock, store: store, logger: logger).run(request.body)
            }
        } catch {
            return .text(error.status, error.message)
        }
    }

    private func begin(_ body: [UInt8]) throws(DeployFailure) -> DeployResponse {
        let begin = try Self.decodeBegin(body)
        let current = store.site.manifest.version
        if begin.version < current, !begin.force {
            throw DeployFailure(
                412, "the edge serves version \(current), the deploy is version \(begin.version): deploying would roll it back; "
                    + "build a newer version, or pass --force to deploy the older one")
        }
        let needs = needs(begin)
        let missing = needs.missing()
        if needs.changed.isEmpty, missing.isEmpty { return .json(200, DeployStarted(id: "", missing: [], current: current, upToDate: true, objects: servedObjectFiles)) }
        let (session, replaced) = try lock.take(begin)
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

    /// The begin request, from a client of this protocol.
    private static func decodeBegin(_ body: [UInt8]) throws(DeployFailure) -> DeployBegin {
        struct Version: Decodable { var `protocol`: Int? }
        let spoken = (try? JSONDecoder().decode(Version.self, from: Data(body)))?.protocol
        guard spoken == DeployBegin.protocolVersion else {
            throw DeployFailure(
                400, "this edge speaks deploy protocol \(DeployBegin.protocolVersion), the client \(spoken.map { "speaks \($0)" } ?? "an older one"): "
                    + "deploy with the folio-build of the same Folio release as the edge")
        }
        let begin: DeployBegin
        do { begin = try JSONDecoder().decode(DeployBegin.self, from: Data(body)) } catch {
            throw DeployFailure(400, "the deploy's begin request is not the JSON folio-build sends: \(error)")
        }
        for (name, channel) in begin.channels where !(name == Channel.production || Channel.isValidName(name)) || !ContentHash.isSHA256Hex(channel.sha256) {
            throw DeployFailure(400, "the deploy's begin names channel '\(name)' with manifest \(channel.sha256): not a channel name and SHA-256")
        }
        return begin
    }

    /// What the edge lacks of `begin`, against the manifests it serves now.
    private func needs(_ begin: DeployBegin) -> DeployNeeds {
        let served = store.site.channels.compactMapValues(\.manifestSHA256)
        return DeployNeeds(root: root, begin: begin, served: served)
    }

    private func stage(_ id: String, _ relative: String, _ body: [UInt8]) throws(DeployFailure) -> DeployResponse {
        _ = try lock.use(id, staging: relative)
        let staging = DeployStaging(root: root, id: id)
        // A file written while the deploy was aborted (the removal may have missed it) goes too.
        defer { if !lock.holds(id) { staging.remove() } }
        try staging.store(relative, body)
        lock.staged(id, relative)
        return .json(201, ["stored": relative])
    }

    /// Stages each file of a batch (``DeployFileBatch``), in order; the first refused refuses
    /// the rest (those before it stay staged, as separate uploads would).
    private func stage(_ id: String, batch body: [UInt8]) throws(DeployFailure) -> DeployResponse {
        .json(201, ["stored": try stageBatch(id, body).count])
    }

    /// Stages a batch's files; their paths.
    private func stageBatch(_ id: String, _ body: [UInt8]) throws(DeployFailure) -> [String] {
        let files: [(relative: String, bytes: ArraySlice<UInt8>)]
        do { files = try DeployFileBatch.decode(body) } catch { throw DeployFailure(400, "the deploy's batch of files: \(error)") }
        guard !files.isEmpty else { throw DeployFailure(400, "the deploy's batch of files is empty: send at least one") }
        let staging = DeployStaging(root: root, id: id)
        defer { if !lock.holds(id) { staging.remove() } }
        for (relative, bytes) in files {
            _ = try lock.use(id, staging: relative)
            try staging.store(relative, Array(bytes))
            lock.staged(id, relative)
        }
        return files.map(\.relative)
    }

    /// Stages the batch of files a plan or commit carries, if any; their paths.
    @discardableResult
    private func stageFirst(_ id: String, _ body: [UInt8]) throws(DeployFailure) -> [String] {
        body.isEmpty ? [] : try stageBatch(id, body)
    }

    /// Rebuilds what the edge can of the new version; answers what it still lacks.
    /// `phases` has timed the staging of the files the plan carried; the plan's phases are
    /// logged at debug level. `commitNext`: the commit follows at once when nothing lacks.
    private func plan(_ id: String, _ phases: PhaseClock, commitNext: Bool = false) throws(DeployFailure) -> DeployPlanned {
        var phases = phases
        let session = try lock.use(id)
        let staging = DeployStaging(root: root, id: id)
        defer { if !lock.holds(id) { staging.remove() } }
        let outcome = try DeployRebuild(staging: staging, needs: needs(session.begin), site: store.site).run()
        phases.mark("rebuild")
        // A manifest the edge would refuse is refused before its objects are sent.
        _ = try DeployCommit(staging: staging, trust: trust, force: session.force, changed: [], site: store.site).manifests(parsed: outcome.manifests)
        phases.mark("check")
        if outcome.planned.final { lock.markPlanned(id, parsed: outcome.manifests, awaiting: Set(outcome.planned.missing)) }
        // Made durable while the client sends what the plan names; the commit syncs the rest
        // (all of them, in one round, when it follows at once).
        if !(commitNext && outcome.planned.missing.isEmpty) { lock.makingDurable(id, staging.makeDurableSoon(staging.files())) }
        phases.mark("durable_start")
        let metadata: Logger.Metadata = ["id": "\(id)", "missing": "\(outcome.planned.missing.count)", "rebuilt": "\(outcome.planned.rebuilt)"]
        logger.debug("deploy planned", metadata: metadata.merging(phases.metadata) { a, _ in a })
        return outcome.planned
    }

    /// Stages what the request carries and plans; commits when the plan lacks nothing.
    private func finish(_ id: String, _ body: [UInt8]) async throws(DeployFailure) -> DeployFinished {
        var phases = PhaseClock()
        let carried = try stageFirst(id, body)
        // Made durable while the edge plans: a commit that follows syncs what the plan made.
        if !carried.isEmpty { lock.makingDurable(id, DeployStaging(root: root, id: id).makeDurableSoon(carried)) }
        phases.mark("stage")
        let planned = try plan(id, phases, commitNext: true)
        guard planned.missing.isEmpty else { return DeployFinished(planned: planned, committed: nil) }
        return DeployFinished(planned: planned, committed: try await commit(id))
    }

    private func commit(_ id: String) async throws(DeployFailure) -> DeployCommitted {
        let session = try lock.use(id, committing: true)
        let staging = DeployStaging(root: root, id: id)
        defer { lock.release(id) }
        let previous = store.site.manifest.version
        let (version, parsed): (Int, [String: ParsedManifest])
        let moved: [String]
        var phases = PhaseClock()
        do throws(DeployFailure) {
            (version, parsed) = try check(session, staging)
            phases.mark("check")
            let durable = session.durable?.value ?? [:]
            phases.mark("early_sync")
            moved = try DeployCommit.moveIntoPlace(staging, durable: durable)
            phases.mark("move")
        } catch {
            staging.remove()
            logger.error("deploy refused; still serving the previous version", metadata: ["id": "\(id)", "version": "\(previous)", "error": "\(error)"])
            throw error
        }
        // It holds the files the new version replaced (``DeployStaging/keepReplaced(_:_:)``).
        staging.removeSoon()
        // Each staged object was checked on arrival or made of checked bytes, and the check
        // above read every object the served version lacks: the load need not decode them again.
        await reload(parsed, Set(moved.filter { $0.hasPrefix(PublishedLayout.objects + "/") }))
        phases.mark("load")
        let served = store.site.manifest.version
        guard served == version else {
            throw DeployFailure(500, "the edge moved version \(version) into place but serves version \(served): see the edge's log for why it did not load")
        }
        let metadata: Logger.Metadata = ["id": "\(id)", "holder": "\(session.holder)", "version": "\(version)", "previous": "\(previous)"]
        logger.info("deployed", metadata: metadata.merging(phases.metadata) { a, _ in a })
        return DeployCommitted(version: version, previous: previous, objects: servedObjectFiles)
    }

    /// The object files the manifests served name, variants included.
    private var servedObjectFiles: Int { Manifest.objectFiles(store.site.channels.values.map(\.manifest)) }

    /// The last rebuild (unless the last plan was final and only the files it named came
    /// since, all of them), then the staged version checked as the edge would load it;
    /// production's version after the commit, and the manifests parsed.
    private func check(_ session: DeployLock.Session, _ staging: DeployStaging) throws(DeployFailure) -> (Int, [String: ParsedManifest]) {
        let needs = needs(session.begin)
        let outcome = session.planComplete ? nil : try DeployRebuild(staging: staging, needs: needs, site: store.site).run()
        let plan = outcome?.planned ?? DeployPlanned.none
        guard plan.missing.isEmpty else {
            let shown = plan.missing.prefix(5).joined(separator: ", ") + (plan.missing.count > 5 ? " and \(plan.missing.count - 5) more" : "")
            throw DeployFailure(422, "the deploy lacks \(plan.missing.count) files the new version needs (\(shown)): they were never sent; deploy again")
        }
        let commit = DeployCommit(staging: staging, trust: trust, force: session.force, changed: needs.changed, site: store.site)
        let parsed = outcome?.manifests ?? session.parsed
        return (try commit.check(parsed: parsed), parsed)
    }

    private func abort(_ id: String) -> DeployResponse {
        guard (try? lock.use(id)) != nil else { return .json(200, ["aborted": false]) }
        lock.release(id)
        DeployStaging(root: root, id: id).remove()
        return .json(200, ["aborted": true])
    }
}
