import FolioPublished
import FolioSupport
import Foundation

extension Syncer {
    /// Phase 4. The objects the plan lacks, `concurrency` at a time over the transport, each
    /// checked (status, coding, size, hash) and written by rename as it arrives; the first
    /// failure stops the rest and the version stays as it was.
    func fetch(_ plan: SyncPlan, _ run: SyncRun) async throws {
        let missing = plan.missing
        guard !missing.isEmpty else { return }
        let progress = settings.progress.map { ProgressCounter(total: missing.count, handler: $0) }
        let requests = missing.map { entry in
            TransportRequest(path: "/" + entry.objectPath, headers: [TransportRequest.acceptEncoding], maxBody: max(entry.size, entry.gzipSize ?? 0) + 1024)
        }
        let counters = run.counters
        let hasContent = run.held != nil
        do {
            try await transport.getAll(requests, concurrency: settings.concurrency, policy: policy(counting: counters)) { i, response in
                try self.accept(response, missing[i], counters: counters, hasContent: hasContent)
                progress?.advance(bytes: response.bodyBytesOnWire)
            }
        } catch let error as TransportError {
            let what = error.path.flatMap { path in missing.first { "/" + $0.objectPath == path }?.path } ?? "objects"
            let keeping = run.held.map { "the cache keeps version \($0.state.version)" } ?? "nothing was cached"
            throw FolioError(
                .edgeUnreachable, "lost \(transport.base) while fetching \(what) (\(error)); \(keeping)", url: transport.base,
                hasContent: hasContent)
        }
    }

    /// Checks an object's response (status, coding, size, hash) and writes it to the cache.
    private func accept(_ response: TransportResponse, _ entry: Manifest.Entry, counters: Counters, hasContent: Bool) throws {
        try checkMaintenance(response, entry.objectPath, held: hasContent)
        guard response.status == 200 else {
            throw FolioError(.invalidResponse, "GET \(transport.base)/\(entry.objectPath) answered \(response.status); the cache keeps its current version")
        }
        let bytes = try decodeBody(response, limit: entry.size, what: entry.path)
        guard entry.matches(bytes) else {
            throw FolioError(
                .invalidResponse,
                "object for \(entry.path) does not match the manifest (expected \(entry.size) bytes with sha256 \(entry.sha256), got \(bytes.count) bytes with sha256 \(ContentHash.sha256Hex(bytes))); rejected, the cache keeps its current version",
                path: entry.path, url: transport.base + "/" + entry.objectPath)
        }
        try store(bytes, entry, counters: counters)
        counters.objects.add(1)
    }
}
