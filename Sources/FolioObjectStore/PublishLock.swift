import FolioPlist
import FolioS3Signing
import Foundation

/// `PREFIX/.folio-publish-lock`: one publisher at a time.
///
/// Looked at first, then taken with a conditional write (`PUT` with `If-None-Match: *`, which
/// fails with 412 when the key exists), then read back: the lock is ours only when it holds our
/// random owner token. On a store that ignores the condition a held lock is still never
/// overwritten, but two publishers starting within one request of each other could both go on.
/// It records owner, host, pid and time; one older than the stale age may be broken on request.
package struct PublishLock: Sendable {
    /// What a lock file holds.
    package struct Holder: Sendable, Equatable {
        package var token: String
        package var owner: String
        package var host: String
        package var pid: Int
        package var since: Date

        package init(token: String, owner: String, host: String, pid: Int, since: Date) {
            self.token = token
            self.owner = owner
            self.host = host
            self.pid = pid
            self.since = since
        }

        /// The lock file's bytes: a small JSON object.
        package var bytes: [UInt8] {
            let text = """
                {"token":"\(token)","owner":\(Self.quoted(owner)),"host":\(Self.quoted(host)),"pid":\(pid),"since":"\(PlistDates.formatISO8601(since))"}

                """
            return Array(text.utf8)
        }

        /// Reads a lock file; nil when it is not one.
        package init?(bytes: [UInt8]) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let token = object["token"] as? String, let since = (object["since"] as? String).flatMap(PlistDates.parseISO8601)
            else { return nil }
            self.init(
                token: token, owner: object["owner"] as? String ?? "?", host: object["host"] as? String ?? "?",
                pid: object["pid"] as? Int ?? 0, since: since)
        }

        /// `alice (pid 42 on build-1) since 2026-11-27T03:00:00Z, 5 min ago`.
        package func description(now: Date) -> String {
            let age = max(0, Int(now.timeIntervalSince(since)))
            let ago = age < 120 ? "\(age) s" : age < 7200 ? "\(age / 60) min" : "\(age / 3600) h"
            return "\(owner) (pid \(pid) on \(host)) since \(PlistDates.formatISO8601(since)), \(ago) ago"
        }

        private static func quoted(_ s: String) -> String {
            let data = try? JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])
            return data.map { String(decoding: $0.dropFirst().dropLast(), as: UTF8.self) } ?? "\"?\""
        }
    }

    package static let name = ".folio-publish-lock"

    package let client: S3Client
    package let key: String
    package let holder: Holder

    package init(client: S3Client, location: S3Location, holder: Holder) {
        self.client = client
        self.key = location.key(Self.name)
        self.holder = holder
    }

    /// Takes the lock, breaking one older than `staleAfter` seconds when `breakStale`; throws a
    /// `.locked` error naming the holder otherwise.
    package func acquire(staleAfter: Int, breakStale: Bool) async throws {
        // Looked at first, so that a store ignoring If-None-Match does not let us overwrite a held lock.
        if try await readHolder() == nil, try await client.putIfAbsent(key, body: holder.bytes, headers: [("Content-Type", "application/json")]),
            try await readHolder()?.token == holder.token
        {
            return
        }
        guard let current = try await readHolder() else {
            throw ObjectStoreError(.locked, "could not take the publish lock s3://\(client.bucket)/\(key): another publisher took it and let it go just now; run again")
        }
        let age = Int(Date().timeIntervalSince(current.since))
        if breakStale && age > staleAfter {
            try await client.delete(key)
            try await acquire(staleAfter: staleAfter, breakStale: false)
            return
        }
        let advice = age > staleAfter
            ? "it is older than \(staleAfter) s: if that publisher is gone, run again with --break-lock"
            : "wait for it to finish (a lock older than --lock-timeout, \(staleAfter) s, may be broken with --break-lock)"
        throw ObjectStoreError(
            .locked, "s3://\(client.bucket)/\(key) is held by \(current.description(now: Date())): another publish is under way; \(advice)")
    }

    /// Removes the lock when it is still ours.
    package func release() async throws {
        guard try await readHolder()?.token == holder.token else { return }
        try await client.delete(key)
    }

    private func readHolder() async throws -> Holder? {
        guard let bytes = try await client.get(key) else { return nil }
        return Holder(bytes: bytes) ?? Holder(token: "?", owner: "an unreadable lock", host: "?", pid: 0, since: .distantPast)
    }
}

extension PublishLock {
    /// Runs `body` holding the lock at `location` as this process (`owner`), released after,
    /// also when `body` fails.
    package static func holding<T: Sendable>(
        client: S3Client, location: S3Location, owner: String, staleAfter: Int, breakStale: Bool, _ body: () async throws -> T
    ) async throws -> T {
        let holder = Holder(
            token: UUID().uuidString, owner: owner, host: ProcessInfo.processInfo.hostName,
            pid: Int(ProcessInfo.processInfo.processIdentifier), since: Date())
        let lock = PublishLock(client: client, location: location, holder: holder)
        try await lock.acquire(staleAfter: staleAfter, breakStale: breakStale)
        do {
            let result = try await body()
            try await lock.release()
            return result
        } catch {
            try? await lock.release()
            throw error
        }
    }
}
