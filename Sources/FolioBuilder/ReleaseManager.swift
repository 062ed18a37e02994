import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// The publisher's release management (`folio-build release …`): each change is a new version
/// of a channel over objects already published, signed and with deltas like any publish, so
/// the anti-rollback protection stays on and every edge stays a plain cache.
package struct ReleaseManager {
    package var root: String
    /// The signing, delta history and time of the versions it publishes.
    package var options: PublishOptions
    package var brotliQuality: Int32? = BrotliSetting.default.quality

    package init(root: String, options: PublishOptions) {
        self.root = root
        self.options = options
    }

    /// Publishes `from`'s current default entries as a new version of `to` (with `audience`,
    /// as a release over `to`'s defaults).
    package func promote(from: String, to: String, audience: ReleaseOptions?) throws -> PublishResult {
        guard from != to else { throw BuildError("release promote: --from and --to both name \(from); promote into another channel") }
        let source = try Self.currentManifest(root, from)
        let session = try open(to)
        var o = options
        (o.notice, o.minimumAppVersion, o.maintenanceUntil, o.critical) = (source.notice, source.minimumAppVersion, source.maintenanceUntil, source.critical)
        o.release = audience
        o.sourceRevision = source.sourceRevision
        var next = try session.proposed(source.entries, o)
        if audience == nil { next.cacheHints = source.cacheHints }
        return try publish(next, session)
    }

    /// Sets a release's share; a release for everyone at 100% becomes the channel's defaults.
    package func rollout(channel: String, release id: Int?, basisPoints: Int) throws -> PublishResult {
        try change(channel) { current, next in
            let release = try Self.pick(id, in: current, channel: channel)
            guard let i = next.releases.firstIndex(where: { $0.id == release.id }) else { return }
            next.releases[i].rolloutBasisPoints = basisPoints
            if basisPoints == 10_000, release.conditions.isEmpty, !release.halted { Self.fold(release.id, into: &next) }
        }
    }

    /// Halts (`halted`) or resumes releases: the one named, else every one.
    package func setHalted(_ halted: Bool, channel: String, release id: Int?) throws -> PublishResult {
        try change(channel) { current, next in
            let ids = try id.map { [try Self.pick($0, in: current, channel: channel).id] } ?? current.releases.map(\.id)
            guard !ids.isEmpty else { throw BuildError("channel \(channel) has no release to \(halted ? "halt" : "resume")") }
            for i in next.releases.indices where ids.contains(next.releases[i].id) { next.releases[i].halted = halted }
        }
    }

    /// Publishes version `version`'s default entries again as the channel's newest version,
    /// with no releases: a roll-forward, so no client ever has to accept a lower version.
    package func rollback(channel: String, to version: Int) throws -> PublishResult {
        let dir = PublishedLayout.channelRoot(root, channel)
        let path = PublishedLayout.path(dir, PublishedLayout.versionedManifest(version))
        guard FileIO.exists(path) else {
            throw BuildError("release rollback: \(path) does not exist; `folio-build release list --output \(root)` shows the versions kept")
        }
        let old = try Manifest(bytes: try FileIO.read(path))
        return try change(channel) { current, next in
            guard version < current.version else {
                throw BuildError("release rollback --to \(version): \(channel) is at version \(current.version); give an older version")
            }
            (next.entries, next.cacheHints, next.releases) = (old.entries, old.cacheHints, [])
            (next.notice, next.minimumAppVersion, next.critical, next.maintenanceUntil) = (old.notice, old.minimumAppVersion, old.critical, nil)
            next.sourceRevision = old.sourceRevision
        }
    }

    /// The channel's current manifest, changed by `edit` into its next version, published.
    private func change(_ channel: String, _ edit: (Manifest, inout Manifest) throws -> Void) throws -> PublishResult {
        let session = try open(channel)
        guard let current = session.current else { throw Self.noVersion(root, channel) }
        var next = session.nextManifest(entries: current.entries, options)
        (next.notice, next.minimumAppVersion, next.maintenanceUntil, next.critical) = (current.notice, current.minimumAppVersion, current.maintenanceUntil, current.critical)
        (next.cacheHints, next.releases, next.sourceRevision) = (current.cacheHints, current.releases, current.sourceRevision)
        try edit(current, &next)
        return try publish(next, session)
    }

    private func open(_ channel: String) throws -> PublishSession {
        let session = try PublishSession(root: root, channel: channel)
        session.brotliQuality = brotliQuality
        return session
    }

    /// Publishes `next` once every object it names is on disk.
    private func publish(_ next: Manifest, _ session: PublishSession) throws -> PublishResult {
        for e in next.allEntries where !FileIO.exists(PublishedLayout.path(root, e.objectPath)) {
            throw BuildError("\(root)/\(e.objectPath) (for \(e.path)) is missing; publish that content again with folio-build first")
        }
        return try session.publish(manifest: next, objects: [:], options: options)
    }

    /// The release `id` of the channel, or its only one.
    static func pick(_ id: Int?, in current: Manifest, channel: String) throws -> Release {
        let ids = current.releases.map { String($0.id) }.joined(separator: ", ")
        if let id {
            guard let r = current.release(id) else {
                throw BuildError("channel \(channel) has no release \(id)" + (ids.isEmpty ? "" : "; it has \(ids)"))
            }
            return r
        }
        guard current.releases.count == 1 else {
            throw BuildError(current.releases.isEmpty
                ? "channel \(channel) has no release to change; publish one with folio-build --rollout PERCENT"
                : "channel \(channel) has releases \(ids); say which with --release ID")
        }
        return current.releases[0]
    }

    /// Makes a release the defaults: its entries applied, its flags kept, the release gone.
    static func fold(_ id: Int, into m: inout Manifest) {
        let applied = m.applying(release: id)
        (m.entries, m.critical, m.minimumAppVersion) = (applied.entries, applied.critical, applied.minimumAppVersion)
        m.releases.removeAll { $0.id == id }
    }

    static func noVersion(_ root: String, _ channel: String) -> BuildError {
        BuildError("channel \(channel) has no published version in \(root)/; publish into it first (folio-build --channel \(channel))")
    }

    /// A channel's current manifest.
    package static func currentManifest(_ root: String, _ channel: String) throws -> Manifest {
        guard let manifest = try PublishSession.readCurrent(PublishedLayout.channelRoot(root, channel)).0 else { throw noVersion(root, channel) }
        return manifest
    }

    /// Every channel's version and releases, for people.
    package static func describe(root: String) throws -> String {
        let channels = PublishedLayout.publishedChannels(root)
        guard !channels.isEmpty else { throw BuildError("\(root)/ has no published channel; run folio-build first") }
        var lines: [String] = []
        for channel in channels {
            let m = try currentManifest(root, channel)
            let versions = ((try? FileIO.list(PublishedLayout.path(PublishedLayout.channelRoot(root, channel), PublishedLayout.manifests))) ?? [])
                .compactMap(PublishedLayout.version(ofManifestFile:)).sorted()
            lines.append("\(channel): version \(m.version) (\(m.entries.count) entries\(m.critical ? ", critical" : ""); versions kept: \(Self.ranges(versions)))")
            for r in m.releases { lines.append("  " + describe(r)) }
        }
        return lines.joined(separator: "\n")
    }

    static func describe(_ r: Release) -> String { "release \(r.id): " + r.summary }

    /// `1-4, 7, 9-12`.
    static func ranges(_ sorted: [Int]) -> String { PruneReport.ranges(sorted) }
}
