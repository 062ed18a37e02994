import FolioPlist
import FolioPublished
import FolioToolSupport
import Foundation
import Synchronization

/// The edge's one deploy at a time: who holds it, since when, and when it was last used. A
/// lock idle longer than `staleAfter` (a client killed mid-deploy) may be taken over.
/// A staged channel manifest's bytes and the manifest they hold, with the mirrors the deploy
/// made of it: the load after the commit takes them instead of parsing, encoding, compressing
/// or checking the same bytes again.
struct ParsedManifest: Sendable {
    var bytes: [UInt8]
    var manifest: Manifest
    /// The mirrors the deploy made of it (`manifest.plist.gz`, `.br`, `manifest.json`), by
    /// name inside the channel's directory: the bytes it staged, so a reload need not read,
    /// check or make them again.
    var derived: [String: [UInt8]] = [:]
    /// The value the bytes decode to, when a delta made it.
    var value: PlistValue? = nil
    /// The `manifest.plist.gz` it made, by chunk.
    var manifestGzip: GzipChunks? = nil
    /// The variants of the JSON mirror (and of the manifest, with no brotli one of its own),
    /// being made while the deploy goes on.
    var variants: Pending<MirrorVariants>? = nil
}

final class DeployLock: Sendable {
    /// The deploy holding the lock.
    struct Session: Sendable {
        var id: String
        var holder: String
        var since: Date
        var lastUsed: Date
        /// What the deploy's begin said: its manifests and files, and whether it forces.
        var begin: DeployBegin
        var force: Bool { begin.force }
        /// Set while the commit runs: the lock is not stale then, however long it takes.
        var committing = false
        /// The last plan was final and nothing but the files it named came since: once they
        /// have all come, the commit need not rebuild, and takes the manifests it parsed.
        var planned = false
        var parsed: [String: ParsedManifest] = [:]
        /// The files that final plan named, not yet staged.
        var awaiting: Set<String> = []
        /// Whether the commit may take the last plan as it is.
        var planComplete: Bool { planned && awaiting.isEmpty }
        /// The staged files the last plan left being made durable while the client sends the
        /// rest, each with its inode (``DeployStaging/makeDurableSoon(_:)``).
        var durable: Pending<[String: UInt64]>? = nil
    }

    private let session = Mutex<Session?>(nil)
    let staleAfter: TimeInterval

    init(staleAfter: TimeInterval) {
        self.staleAfter = staleAfter
    }

    /// Takes the lock for a new session; the stale session it took over, if any. Throws a 409
    /// naming the holder when a live one has it.
    func take(_ begin: DeployBegin, now: Date = Date()) throws(DeployFailure) -> (taken: Session, replaced: Session?) {
        let new = Session(id: UUID().uuidString.lowercased(), holder: begin.holder, since: now, lastUsed: now, begin: begin)
        let result: Result<Session?, DeployFailure> = session.withLock { current in
            if let held = current, held.committing || now.timeIntervalSince(held.lastUsed) <= staleAfter {
                return .failure(Self.busy(held, now: now, staleAfter: staleAfter))
            }
            let replaced = current
            current = new
            return .success(replaced)
        }
        return (new, try result.get())
    }

    /// The session `id` when it still holds the lock and is not committing, marked used now
    /// (and committing). It is no longer planned unless the request stages a file the last
    /// plan awaits (`staging`): any other file may change what the plan would make.
    func use(_ id: String, committing: Bool = false, staging: String? = nil) throws(DeployFailure) -> Session {
        let found: Session? = session.withLock { current in
            guard current?.id == id, current?.committing == false else { return nil }
            let planned = current?.planned == true
            current?.lastUsed = Date()
            if staging.map({ current?.awaiting.contains($0) != true }) ?? true { current?.planned = false }
            if committing { current?.committing = true }
            var found = current
            found?.planned = planned
            return found
        }
        guard let found else {
            throw DeployFailure(
                404, "no deploy \(id) is in progress on this edge: it ended or is committing, or another deploy took over its lock after \(Int(staleAfter)) s idle; deploy again")
        }
        return found
    }

    /// Records that a plan of session `id` was final, the manifests it parsed, and the files it
    /// still `awaits` (brotli variants, which it makes nothing from).
    func markPlanned(_ id: String, parsed: [String: ParsedManifest], awaiting: Set<String>) {
        session.withLock { current in
            guard current?.id == id else { return }
            current?.planned = true
            current?.parsed = parsed
            current?.awaiting = awaiting
        }
    }

    /// Records that session `id`'s staged files are being made durable by `durable`.
    func makingDurable(_ id: String, _ durable: Pending<[String: UInt64]>) {
        session.withLock { current in
            guard current?.id == id else { return }
            current?.durable = durable
        }
    }

    /// Records that session `id` staged `relative`.
    func staged(_ id: String, _ relative: String) {
        session.withLock { current in
            guard current?.id == id else { return }
            current?.awaiting.remove(relative)
        }
    }

    /// Whether the session `id` holds the lock.
    func holds(_ id: String) -> Bool { session.withLock { $0?.id == id } }

    /// Lets the lock go when `id` still holds it.
    func release(_ id: String) {
        session.withLock { current in if current?.id == id { current = nil } }
    }

    private static func busy(_ held: Session, now: Date, staleAfter: TimeInterval) -> DeployFailure {
        let since = ISO8601DateFormatter().string(from: held.since)
        let idle = Int(now.timeIntervalSince(held.lastUsed))
        return DeployFailure(
            409, "another deploy is in progress: held by \(held.holder) since \(since) (last request \(idle) s ago); "
                + "wait for it to finish (a deploy idle for \(Int(staleAfter)) s may be taken over)")
    }
}
