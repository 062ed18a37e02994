import FolioPublished
import FolioS3Signing
import FolioSupport
import Foundation

/// Settings of one prune of a bucket prefix.
package struct PruneOptions: Sendable {
    package var location: S3Location
    /// The newest versions kept per channel.
    package var keep = PrunePlan.defaultKeep
    package var dryRun = false
    /// Deletes at once.
    package var concurrency = 16
    /// A lock older than this many seconds may be broken (`breakLock`).
    package var lockTimeout = 3600
    package var breakLock = false
    /// Who the lock names.
    package var owner = ProcessInfo.processInfo.environment["USER"] ?? "folio-build"

    package init(location: S3Location) {
        self.location = location
    }
}

/// Removes what no kept version needs from a bucket prefix (``PrunePlan`` on its listed
/// keys), holding the publish lock so that it never runs beside a publish.
package struct ObjectStorePruner: Sendable {
    package let client: S3Client
    package let options: PruneOptions

    package init(client: S3Client, options: PruneOptions) {
        self.client = client
        self.options = options
    }

    /// `s3://BUCKET/PREFIX`, for messages.
    var destination: String { "s3://\(client.bucket)" + (options.location.prefix.isEmpty ? "" : "/" + options.location.prefix) }

    /// The prune: lock, list, read the kept manifests, plan, delete, unlock (also on failure).
    package func run() async throws -> PruneReport {
        try await PublishLock.holding(
            client: client, location: options.location, owner: options.owner, staleAfter: options.lockTimeout, breakStale: options.breakLock
        ) { try await prune() }
    }

    private func prune() async throws -> PruneReport {
        let base = options.location.prefix.isEmpty ? "" : options.location.prefix + "/"
        var files: [String: Int] = [:]
        for (key, size) in try await client.list(prefix: base) where key.hasPrefix(base) { files[String(key.dropFirst(base.count))] = size }
        var contents: [String: [UInt8]] = [:]
        for path in PrunePlan.filesToRead(files, keep: options.keep) { contents[path] = try await client.get(options.location.key(path)) }
        let plan: PrunePlan
        do { plan = try PrunePlan(files: files, contents: contents, keep: options.keep, location: destination) } catch {
            throw ObjectStoreError(.usage, error.description)
        }
        if !options.dryRun { try await delete(plan.removed) }
        return PruneReport(plan, dryRun: options.dryRun)
    }

    /// Deletes versioned manifests, then deltas, then objects, `concurrency` at a time within each.
    private func delete(_ files: [PrunePlan.File]) async throws {
        let phases = [PublishedLayout.manifests, PublishedLayout.deltas, PublishedLayout.objects].map { dir in
            files.filter { FileIO.lastComponent(of: FileIO.parent(of: $0.path)) == dir }.map(\.path)
        }
        for paths in phases {
            do { try await deleteConcurrently(paths) } catch {
                let cause = (error as? ObjectStoreError)?.message ?? ObjectStorePublisher.describe(error)
                throw ObjectStoreError(
                    .store, "pruning \(destination) stopped: \(cause); what it removed was unreferenced, and pruning again finishes it")
            }
        }
    }

    private func deleteConcurrently(_ paths: [String]) async throws {
        let keys = paths.map { options.location.key($0) }
        let client = self.client
        try await forEachConcurrently(keys, limit: options.concurrency) { key in try await client.delete(key) }
    }
}
