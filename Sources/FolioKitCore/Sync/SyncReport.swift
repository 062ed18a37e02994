import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Logging

/// How one sync went, for people (one line) and for machines (`--json`).
package struct SyncReport: Sendable {
    package enum Result: String, Sendable {
        /// A new version was fetched and made current.
        case updated
        /// The manifest was revalidated (304, or the same version); nothing to fetch.
        case notModified
        /// The cache hints say the manifest is still fresh: no request made.
        case fresh
        /// Missing or damaged objects of the current version were fetched again.
        case repaired
        /// The edge could not be reached; the cache is unchanged.
        case offline
    }

    package var result: Result
    package var versionBefore: Int?
    package var versionAfter: Int?
    package var objectsFetched = 0
    /// Bytes received: response heads and bodies (as sent, compressed).
    package var bytes = 0
    /// Of those, body bytes only.
    package var bodyBytes = 0
    package var requests = 0
    package var durationMs = 0.0
    package var message = ""
    /// With a trusted root: the key IDs whose signatures verified, and the key list's version.
    package var signers: [String]?
    package var keyListVersion: Int?
    /// For an update: `delta`, `delta-chain` or `whole`.
    package var method: String?
    /// Objects rebuilt from deltas (not counted in `objectsFetched`).
    package var objectsPatched = 0
    /// The deltas taken, and the bytes they saved against fetching the manifest and objects whole.
    package var deltaSteps: Int?
    package var bytesSaved: Int?
    /// Why deltas were not used, or not for every object.
    package var deltaFallback: String?
    /// The current version's maintenance window, when its publisher set one.
    package var maintenanceUntil: Date?
    /// The channel followed, the release this install took (nil: the defaults), and whether the
    /// version as it sees it is critical.
    package var channel = Channel.production
    package var release: Int?
    package var critical = false

    package var json: PlistValue {
        var d: [String: PlistValue] = [
            "result": .string(result.rawValue), "objectsFetched": .int(Int64(objectsFetched)),
            "bytes": .int(Int64(bytes)), "bodyBytes": .int(Int64(bodyBytes)), "requests": .int(Int64(requests)),
            "durationMs": .real((durationMs * 10).rounded() / 10), "message": .string(message),
        ]
        if let v = versionBefore { d["versionBefore"] = .int(Int64(v)) }
        if let v = versionAfter { d["versionAfter"] = .int(Int64(v)) }
        if let signers { d["signers"] = .array(signers.map { .string($0) }) }
        if let keyListVersion { d["keyListVersion"] = .int(Int64(keyListVersion)) }
        if let method { d["method"] = .string(method) }
        if objectsPatched > 0 || method != nil { d["objectsPatched"] = .int(Int64(objectsPatched)) }
        if let deltaSteps { d["deltaSteps"] = .int(Int64(deltaSteps)) }
        if let bytesSaved { d["bytesSaved"] = .int(Int64(bytesSaved)) }
        if let deltaFallback { d["deltaFallback"] = .string(deltaFallback) }
        d["channel"] = .string(channel)
        if let release { d["release"] = .int(Int64(release)) }
        if critical { d["critical"] = .bool(true) }
        return .dict(d)
    }
}

/// How far a sync's object downloads have got, for a progress bar.
public struct SyncProgress: Sendable, Hashable {
    /// Objects fetched and verified so far.
    public var objectsDone: Int
    /// Objects this sync fetches.
    public var objectsTotal: Int
    /// Bytes received for them so far (as sent, compressed).
    public var bytesReceived: Int

    /// Done objects over all of them, from 0 to 1 (1 when there is nothing to fetch).
    public var fraction: Double { objectsTotal == 0 ? 1 : Double(objectsDone) / Double(objectsTotal) }
}

/// Counts finished objects and reports each step to the sync's progress handler.
final class ProgressCounter: Sendable {
    private let total: Int
    private let state = Locked<(done: Int, bytes: Int)>((0, 0))
    private let handler: @Sendable (SyncProgress) -> Void

    init(total: Int, handler: @escaping @Sendable (SyncProgress) -> Void) {
        self.total = total
        self.handler = handler
        handler(SyncProgress(objectsDone: 0, objectsTotal: total, bytesReceived: 0))
    }

    /// Reports under the lock, so that the handler sees the steps in order from any thread.
    func advance(bytes: Int) {
        state.withLock { s in
            s.done += 1
            s.bytes += bytes
            handler(SyncProgress(objectsDone: s.done, objectsTotal: total, bytesReceived: s.bytes))
        }
    }
}

