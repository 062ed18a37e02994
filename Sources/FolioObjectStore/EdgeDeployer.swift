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

/// Deploys a published directory to an edge by digest: the edge is told every file (by size;
/// the mutable ones, heads and manifests, by SHA-256 too) and answers those it lacks or has
/// otherwise; only those are uploaded, phase by phase in commit order; then the edge checks and
/// switches. On failure the deploy is aborted (the edge's staging dropped).
package struct EdgeDeployer: Sendable {
    package let client: EdgeDeployClient
    package let options: EdgeDeployOptions
    /// Called with one line of progress at a time.
    package let progress: @Sendable (String) -> Void

    package init(client: EdgeDeployClient, options: EdgeDeployOptions, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.client = client
        self.options = options
        self.progress = progress
    }

    /// The deploy: plan, begin (the lock), upload what is missing, commit.
    package func run() async throws -> PublishSummary {
        let plan = try UploadPlan(root: options.root)
        let begin = EdgeDeployClient.Begin(
            version: plan.version, holder: options.holder, force: options.force, files: try files(plan), dryRun: options.dryRun)
        let started = try await client.begin(begin)
        if options.dryRun { return dryRun(plan, missing: Set(started.missing), current: started.current) }
        do {
            var summary = try await upload(plan, id: started.id, missing: Set(started.missing))
            summary.previousVersion = started.current
            let committed = try await client.commit(started.id)
            summary.version = committed.version
            return summary
        } catch {
            await client.abort(started.id)
            throw error
        }
    }

    /// Every file of the plan with its size, and the mutable ones' SHA-256.
    private func files(_ plan: UploadPlan) throws -> [EdgeDeployClient.Begin.File] {
        try plan.phases.flatMap(\.items).map { item in
            let path = PublishedLayout.path(options.root, item.relative)
            guard !item.immutable else { return .init(path: item.relative, size: item.size) }
            do { return .init(path: item.relative, size: item.size, sha256: try ContentHash.sha256Hex(file: path).hex) } catch {
                throw ObjectStoreError(.usage, "cannot read \(path): \(error)")
            }
        }
    }

    /// Uploads the files the edge lacks, one phase after another.
    private func upload(_ plan: UploadPlan, id: String, missing: Set<String>) async throws -> PublishSummary {
        var summary = PublishSummary(version: plan.version)
        for (name, items) in plan.phases where !items.isEmpty {
            let todo = items.filter { missing.contains($0.relative) }
            try await upload(todo, id: id)
            if name == plan.phases.first?.name {
                let objects = items.filter { $0.relative.hasPrefix(PublishedLayout.objects + "/") }
                let sent = objects.filter { missing.contains($0.relative) }.count
                progress("objects: \(sent) uploaded, \(objects.count - sent) already there")
            }
            summary.uploaded += todo.count
            summary.uploadedBytes += todo.reduce(0) { $0 + $1.size }
            summary.skipped += items.count - todo.count
            progress("\(name): \(todo.count) uploaded, \(items.count - todo.count) already there")
        }
        return summary
    }

    /// Prints each file that would be uploaded; the summary of what would be.
    private func dryRun(_ plan: UploadPlan, missing: Set<String>, current: Int) -> PublishSummary {
        var summary = PublishSummary(version: plan.version, previousVersion: current)
        for item in plan.phases.flatMap(\.items) {
            guard missing.contains(item.relative) else {
                summary.skipped += 1
                continue
            }
            progress("would upload \(item.relative) (\(item.size) bytes)")
            summary.uploaded += 1
            summary.uploadedBytes += item.size
        }
        return summary
    }

    /// Uploads `items`, `concurrency` at a time; the first failure cancels the rest.
    private func upload(_ items: [UploadItem], id: String) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func add() {
                let item = items[next]
                next += 1
                group.addTask { try await self.upload(item, id: id) }
            }
            while next < min(options.concurrency, items.count) { add() }
            while try await group.next() != nil {
                if next < items.count { add() }
            }
        }
    }

    private func upload(_ item: UploadItem, id: String) async throws {
        let path = PublishedLayout.path(options.root, item.relative)
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch { throw ObjectStoreError(.usage, "cannot read \(path): \(error)") }
        try await client.put(id, item.relative, bytes)
    }
}
