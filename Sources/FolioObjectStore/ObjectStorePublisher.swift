import FolioPublished
import FolioS3Signing
import FolioSupport
import Foundation

/// Settings of one publish to object storage.
package struct PublishOptions: Sendable {
    package var root: String
    package var location: S3Location
    /// Files this large or larger go up in parts of `partSize`.
    package var multipartThreshold = 8 << 20
    package var partSize = 8 << 20
    /// Uploads at once.
    package var concurrency = 16
    /// A lock older than this many seconds may be broken (`breakLock`).
    package var lockTimeout = 3600
    package var breakLock = false
    /// Publish even when the bucket holds a newer version.
    package var force = false
    /// Who the lock names.
    package var owner = ProcessInfo.processInfo.environment["USER"] ?? "folio-build"

    package init(root: String, location: S3Location) {
        self.root = root
        self.location = location
    }
}

/// What a publish did.
package struct PublishSummary: Sendable, Equatable {
    package var version = 0
    /// The bucket's production version before, when it had one.
    package var previousVersion: Int?
    package var uploaded = 0
    package var uploadedBytes = 0
    /// Immutable files the bucket already had.
    package var skipped = 0
    /// Files an edge made itself from deltas, variants and manifests instead of having them sent.
    package var rebuilt = 0
}

/// Uploads a published directory under a bucket prefix in commit order, holding the lock.
package struct ObjectStorePublisher: Sendable {
    package let client: S3Client
    package let options: PublishOptions
    /// Called with one line of progress at a time.
    package let progress: @Sendable (String) -> Void

    package init(client: S3Client, options: PublishOptions, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.client = client
        self.options = options
        self.progress = progress
    }

    /// The publish: plan, lock, compare versions, upload every phase, unlock (also on failure).
    package func run() async throws -> PublishSummary {
        let plan = try UploadPlan(root: options.root)
        return try await PublishLock.holding(
            client: client, location: options.location, owner: options.owner, staleAfter: options.lockTimeout, breakStale: options.breakLock
        ) { try await publish(plan) }
    }

    private func publish(_ plan: UploadPlan) async throws -> PublishSummary {
        var summary = PublishSummary(version: plan.version)
        summary.previousVersion = try await checkVersions(plan)
        let existing = try await client.list(prefix: options.location.prefix.isEmpty ? "" : options.location.prefix + "/")
        for (name, items) in plan.phases where !items.isEmpty {
            let todo = items.filter { !$0.immutable || existing[options.location.key($0.relative)] != $0.size }
            summary.skipped += items.count - todo.count
            do { try await upload(todo) } catch {
                throw failed(error, phase: name, previous: summary.previousVersion)
            }
            summary.uploaded += todo.count
            summary.uploadedBytes += todo.reduce(0) { $0 + $1.size }
            progress("\(name): \(todo.count) uploaded, \(items.count - todo.count) already there")
        }
        return summary
    }

    /// Refuses a directory older than the bucket (per channel) unless forced; the bucket's production version.
    private func checkVersions(_ plan: UploadPlan) async throws -> Int? {
        var production: Int?
        for (channel, local) in plan.channelVersions.sorted(by: { $0.key < $1.key }) {
            let key = options.location.key(PublishedLayout.channelPrefix(channel) + PublishedLayout.manifest)
            guard let bytes = try await client.get(key), let remote = try? Manifest(bytes: bytes) else { continue }
            if channel == Channel.production { production = remote.version }
            if remote.version > local && !options.force {
                let which = channel == Channel.production ? "" : " (channel \(channel))"
                throw ObjectStoreError(
                    .rollback,
                    "s3://\(client.bucket)/\(key) is at version \(remote.version), \(options.root) at \(local)\(which): "
                        + "publishing would roll it back; build a newer version, or pass --force to publish the older one")
            }
        }
        return production
    }

    /// The error of a failed phase, saying that the previous version is still current.
    private func failed(_ error: Error, phase: String, previous: Int?) -> ObjectStoreError {
        let still = previous.map { "version \($0) is still the current one there (manifest.plist was not replaced)" }
            ?? "nothing was published there before, and manifest.plist was not written"
        let cause = (error as? ObjectStoreError)?.message ?? Self.describe(error)
        return ObjectStoreError(.store, "publishing to s3://\(client.bucket)/\(options.location.prefix) failed while uploading \(phase): \(cause); \(still)")
    }

    /// A transport error in words.
    static func describe(_ error: Error) -> String {
        let text = "\(error)"
        if text.contains("connect") || text.contains("Connect") { return "could not connect to \(text)" }
        return "the connection failed (\(text))"
    }

    /// Uploads `items`, `concurrency` at a time; the first failure cancels the rest.
    private func upload(_ items: [UploadItem]) async throws {
        try await forEachConcurrently(items, limit: options.concurrency) { item in try await self.upload(item) }
    }

    private func upload(_ item: UploadItem) async throws {
        let path = PublishedLayout.path(options.root, item.relative)
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch { throw ObjectStoreError(.usage, "cannot read \(path): \(error)") }
        let key = options.location.key(item.relative)
        if bytes.count >= options.multipartThreshold {
            try await client.putMultipart(key, body: bytes, partSize: options.partSize, headers: item.headers)
        } else {
            try await client.put(key, body: bytes, headers: item.headers)
        }
    }
}
