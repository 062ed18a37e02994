import FolioPublished
import FolioSupport
import Foundation

/// Settings of one deploy to an edge.
package struct EdgeDeployOptions: Sendable {
    package var root: String
    /// Uploads at once.
    package var concurrency = 16
    /// Deploy even when the edge serves a newer version.
    package var force = false
    /// Say what would be uploaded; change nothing.
    package var dryRun = false
    /// Who the edge's lock names: `user@host pid N`.
    package var holder = EdgeDeployOptions.defaultHolder

    package init(root: String) {
        self.root = root
    }

    package static var defaultHolder: String {
        let info = ProcessInfo.processInfo
        return "\(info.environment["USER"] ?? "folio-build")@\(info.hostName) pid \(info.processIdentifier)"
    }
}

/// Deploys a published directory to an edge by digest (``DeployTree``): the edge is told each
/// channel's manifest and every other file, and answers those it lacks; it rebuilds what it can
/// of the new version (the manifest and changed objects from the delta from the version it
/// serves, objects from their compressed variants, gzip variants, mirrors) and names the rest,
/// round by round, until it lacks nothing; then it checks and switches. On failure (and after a
/// dry run) the deploy is aborted: the edge's staging is dropped.
package struct EdgeDeployer: Sendable {
    package let client: EdgeDeployClient
    package let options: EdgeDeployOptions
    /// Called with one line of progress at a time.
    package let progress: @Sendable (String) -> Void

    /// Plans after which the edge still lacks files fail the deploy (each round sends what the
    /// last plan named; two are the most a deploy needs).
    static let maxRounds = 4

    package init(client: EdgeDeployClient, options: EdgeDeployOptions, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.client = client
        self.options = options
        self.progress = progress
    }

    /// The deploy: describe, begin (the lock), send what is missing round by round (the first
    /// with the objects predicted), commit (with the last round when it lacks nothing).
    package func run() async throws -> PublishSummary {
        let tree = try DeployTree(root: options.root)
        // Read while the begin is under way.
        let predicting = options.dryRun ? nil : Task.detached { DeployPrediction(tree) }
        let started = try await begin(tree)
        var summary = PublishSummary(version: tree.version, previousVersion: started.current)
        guard started.upToDate != true else {
            let objectFiles = started.objects ?? tree.objectFiles() ?? 0
            summary.skipped = tree.files.count + objectFiles
            progress(objectsLine(objectFiles, uploaded: 0, rebuilt: 0))
            return summary
        }
        // A dry run commits nothing, so no edge counts the objects: counted here meanwhile.
        let counting = options.dryRun ? Task.detached { tree.objectFiles() ?? 0 } : nil
        do {
            let predicted = await predicting?.value?.files(servedVersion: started.current) ?? []
            let rounds = try await rounds(started, predicted: predicted, &summary)
            var objectFiles: Int
            if let counting {
                await client.abort(started.id)
                objectFiles = await counting.value
            } else {
                let committed = try await commit(rounds, id: started.id, &summary)
                summary.version = committed.version
                objectFiles = committed.objects ?? tree.objectFiles() ?? 0
                progress(objectsLine(objectFiles, uploaded: rounds.uploaded, rebuilt: rounds.rebuilt))
            }
            summary.skipped = tree.files.count + objectFiles - summary.uploaded - summary.rebuilt
            return summary
        } catch {
            counting?.cancel()
            await client.abort(started.id)
            throw error
        }
    }

    /// The commit: the last round's, or one that sends that round's files, if any.
    private func commit(_ rounds: Rounds, id: String, _ summary: inout PublishSummary) async throws -> EdgeDeployClient.Committed {
        if let committed = rounds.committed { return committed }
        let carried = try await carry(rounds.last, id: id)
        let committed = try await client.commit(id, with: carried)
        report(rounds.last, round: rounds.round, &summary)
        return committed
    }

    /// Begins the deploy: the edge's answer, from an edge of this protocol.
    private func begin(_ tree: DeployTree) async throws -> EdgeDeployClient.Started {
        let started = try await client.begin(
            EdgeDeployClient.Begin(version: tree.version, holder: options.holder, force: options.force, channels: tree.channels, files: tree.files))
        guard started.protocol == EdgeDeployClient.protocolVersion else {
            if !started.id.isEmpty { await client.abort(started.id) }
            throw ObjectStoreError(
                .store, "the edge at \(client.base.absoluteString) speaks an older deploy protocol: upgrade folio-edge to the release of this folio-build")
        }
        return started
    }

    /// `objects: 3 uploaded, 6 rebuilt by the edge, 400 already there`.
    private func objectsLine(_ objectFiles: Int, uploaded: Int, rebuilt: Int) -> String {
        "objects: \(uploaded) uploaded, \(rebuilt) rebuilt by the edge, \(objectFiles - uploaded - rebuilt) already there"
    }

    /// What the rounds before the commit did: the object files uploaded (the last round's
    /// included) and rebuilt by the edge, and the last round's files, which go with the commit.
    struct Rounds {
        var uploaded = 0
        var rebuilt = 0
        var last: [String] = []
        var round = 0
        /// The last plan lacked nothing, and the edge committed with it.
        var committed: EdgeDeployClient.Committed?
    }

    /// Sends what the begin named (and the files `predicted`) with the first plan, then what
    /// each plan names with the next, until a plan names nothing (the edge then commits with
    /// it) or says the edge makes nothing from what it names (those go with the commit). A dry
    /// run sends the first round alone (manifests, deltas, heads: the plan needs them) and
    /// lists what the plan names.
    private func rounds(_ started: EdgeDeployClient.Started, predicted: [String], _ summary: inout PublishSummary) async throws -> Rounds {
        let named = Set(started.missing)
        var missing = started.missing + predicted.filter { !named.contains($0) }
        var out = Rounds()
        var final = false
        for round in 1...Self.maxRounds {
            out.round = round
            out.uploaded += missing.count { $0.hasPrefix(PublishedLayout.objects + "/") }
            // The edge said it needs nothing beyond these: on to the commit, with them.
            if final {
                out.last = missing
                return out
            }
            let planned = try await plan(started.id, missing, &out)
            report(missing, round: round, &summary)
            // Each plan counts what it rebuilt itself.
            summary.rebuilt += planned.rebuilt
            out.rebuilt += planned.rebuiltObjects
            if options.dryRun {
                for path in planned.missing { progress("would upload \(path) (\(size(path)) bytes)") }
                summary.uploaded += planned.missing.count
                summary.uploadedBytes += planned.missing.reduce(0) { $0 + size($1) }
                return out
            }
            if planned.missing.isEmpty { return out }
            missing = planned.missing
            final = planned.final == true
        }
        throw ObjectStoreError(
            .store, "the edge still lacks \(missing.count) files after \(Self.maxRounds) rounds (\(missing.prefix(3).joined(separator: ", "))): see its log")
    }

    /// One plan carrying `missing`: a finish, which the commit follows when the plan lacks
    /// nothing; for a dry run, a plan alone.
    private func plan(_ id: String, _ missing: [String], _ out: inout Rounds) async throws -> EdgeDeployClient.Planned {
        let carried = try await carry(missing, id: id)
        if options.dryRun { return try await client.plan(id, with: carried) }
        let finished = try await client.finish(id, with: carried)
        out.committed = finished.committed
        return finished.planned
    }

    /// One round's files, read, for the plan or commit that follows to carry when they make one
    /// batch (``DeployFileBatch``); else none, the files uploaded first, `concurrency` requests
    /// at a time. A dry run's first round goes too, to the staging it drops: the edge plans from it.
    private func carry(_ paths: [String], id: String) async throws -> [(relative: String, bytes: [UInt8])] {
        let batches = batches(paths)
        guard batches.count == 1, paths.reduce(0, { $0 + size($1) }) <= DeployFileBatch.maxBytes else {
            try await upload(paths, id: id)
            return []
        }
        return try batches[0].map { ($0, try read($0)) }
    }

    /// Counts one round's files as uploaded, and says so (a dry run: that it would upload them).
    private func report(_ paths: [String], round: Int, _ summary: inout PublishSummary) {
        let bytes = paths.reduce(0) { $0 + size($1) }
        if options.dryRun {
            for path in paths { progress("would upload \(path) (\(size(path)) bytes)") }
        } else if !paths.isEmpty {
            progress("round \(round): \(paths.count) files uploaded (\(bytes) bytes)")
        }
        summary.uploaded += paths.count
        summary.uploadedBytes += bytes
    }

    /// The size of the published file at `relative` (0 when it cannot be read: its upload says why).
    private func size(_ relative: String) -> Int { FileIO.size(PublishedLayout.path(options.root, relative)) ?? 0 }

    /// Uploads `paths` in batches of small files (``DeployFileBatch``) and large files alone,
    /// `concurrency` requests at a time; the first failure cancels the rest.
    private func upload(_ paths: [String], id: String) async throws {
        try await forEachConcurrently(batches(paths), limit: options.concurrency) { batch in
            let files = try batch.map { relative in (relative, try self.read(relative)) }
            if files.count == 1 {
                try await self.client.put(id, files[0].0, files[0].1)
            } else {
                try await self.client.put(id, batch: files)
            }
        }
    }

    /// `paths` grouped, in order, into batches of at most ``DeployFileBatch/maxFiles`` files and
    /// ``DeployFileBatch/maxBytes`` bytes (a larger file goes alone).
    func batches(_ paths: [String]) -> [[String]] {
        var batches: [[String]] = []
        var bytes = 0
        for path in paths {
            let size = size(path)
            if batches.isEmpty || batches[batches.count - 1].count >= DeployFileBatch.maxFiles || bytes + size > DeployFileBatch.maxBytes {
                batches.append([])
                bytes = 0
            }
            batches[batches.count - 1].append(path)
            bytes += size
        }
        return batches
    }

    /// The bytes of the published file at `relative`, one the edge may ask for.
    private func read(_ relative: String) throws -> [UInt8] {
        guard DeployTree.isPublishedPath(relative) else {
            throw ObjectStoreError(.store, "the edge asked for \(relative), which is not a file of a published directory: is it a folio-edge?")
        }
        let path = PublishedLayout.path(options.root, relative)
        do { return try FileIO.read(path) } catch { throw ObjectStoreError(.usage, "cannot read \(path): \(error)") }
    }
}
