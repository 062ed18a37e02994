import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// How a sync learned the new version: the manifest whole, or deltas from the held one.
package struct DeltaUse: Sendable {
    /// The deltas taken (1 direct, 2 through a waypoint).
    package var steps: Int
    /// The new `manifest.plist` rebuilt from the held one, and the manifest it holds.
    package var manifestBytes: [UInt8]
    package var manifest: Manifest
    /// Objects rebuilt by the deltas and verified against the manifest they lead to, by SHA-256.
    package var objects: [String: [UInt8]]
    /// Object edits that did not give the object the manifest names (fetched whole instead).
    package var failedEdits: Int
    /// The bytes `manifest.plist.gz` (or the plain file) would have cost.
    package var manifestWireSize: Int
}

/// Why deltas were not used for a sync that changed version (for `--json` and `--verbose`).
package struct DeltaFallback: Error, CustomStringConvertible, Sendable {
    package var description: String
    init(_ description: String) { self.description = description }
}

extension Syncer {
    /// The largest delta a client accepts, whatever the head says: four times the manifest as
    /// served, or 1 MiB. Larger is not a delta worth taking.
    static func deltaLimit(_ head: DeltaHead) -> Int { max(4 * (head.gzipSize ?? head.size), 1 << 20) }

    /// Rebuilds the head's version from the held one through one delta, or two through the
    /// head's waypoint; every object an edit rebuilds is checked against the manifest it leads
    /// to. Throws ``DeltaFallback`` when there is no such path or a delta is missing, oversized
    /// or wrong; the caller then fetches the manifest and objects whole.
    func viaDeltas(
        _ head: DeltaHead, held: SyncRun.Held, heldBytes: [UInt8], counters: Counters
    ) async throws -> DeltaUse {
        guard head.version > held.state.version else {
            throw DeltaFallback("the edge's version \(head.version) is not newer than version \(held.state.version)")
        }
        var route: [(from: String, to: String)]
        if head.deltasFrom.contains(held.state.version) {
            route = [(held.state.manifestSHA256, head.sha256)]
        } else if let w = head.waypoint, w.version > held.state.version, w.version - held.state.version <= head.deltaHistory,
            head.deltasFrom.contains(w.version)
        {
            route = [(held.state.manifestSHA256, w.sha256), (w.sha256, head.sha256)]
        } else {
            throw DeltaFallback("no delta from version \(held.state.version) (the edge keeps deltas from versions \(head.deltasFrom.first.map(String.init) ?? "none")\(head.deltasFrom.count > 1 ? "–\(head.deltasFrom.last!)" : ""))")
        }
        var objects: [String: [UInt8]] = [:]
        var failedEdits = 0
        var bytes = heldBytes
        var manifest = held.manifest
        // The manifest the bytes hold, once a step made it (the held one may have a release's
        // entries in place of the defaults).
        var plain: Manifest?
        var value: PlistValue?
        let limit = Self.deltaLimit(head)
        for step in route {
            let path = String(channelPath(PublishedLayout.delta(from: step.from, to: step.to)).dropFirst())
            let response: TransportResponse
            do {
                response = try await get(TransportRequest(path: "/" + path, headers: [TransportRequest.acceptEncoding], maxBody: limit + 1), counters: counters)
            } catch let error as TransportError {
                throw DeltaFallback("GET \(path): \(error)")
            }
            guard response.status == 200 else { throw DeltaFallback("GET \(path) answered \(response.status)") }
            guard response.bodyBytesOnWire <= limit else { throw DeltaFallback("\(path) is over \(limit) bytes") }
            let applied: DeltaStep
            do {
                let bundle = try DeltaBundle(bytes: try decodeBody(response, limit: 64 << 20, what: path))
                applied = try DeltaStep.apply(
                    bundle, to: bytes, source: manifest, plain: plain, sourceValue: value, targetSHA256: step.to, rebuilt: objects
                ) { try? cache.object($0) }
            } catch {
                throw DeltaFallback("\(path): \(error)")
            }
            objects.merge(applied.objects) { a, _ in a }
            failedEdits += applied.failedEdits
            bytes = applied.manifestBytes
            manifest = applied.manifest
            (plain, value) = (applied.manifest, applied.value)
        }
        // Only what the final version lists (a two-step route rebuilds some in-between objects).
        let wanted = Set(manifest.allEntries.map(\.sha256))
        return DeltaUse(
            steps: route.count, manifestBytes: bytes, manifest: manifest, objects: objects.filter { wanted.contains($0.key) },
            failedEdits: failedEdits, manifestWireSize: head.gzipSize ?? head.size)
    }
}
