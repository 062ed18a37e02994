import FolioPublished
import FolioSupport
import FolioPlist
import Foundation

/// The edge's version, checked: its manifest as published (the signed one's content when
/// signed) and as this install sees it, the release chosen, and the highest key list version seen.
struct Verified: Sendable {
    var resolution: Resolution
    /// The manifest with the chosen release applied.
    var manifest: Manifest
    var published: Manifest
    var choice: ReleaseChoice
    var keyListVersion: Int?
}

extension Syncer {
    /// Phase 2. With a trusted root: signatures, expiry and rollback, before anything is fetched
    /// or stored. Signed or not, never back to a lower version of the held one's publish history
    /// (after the signature checks, so that a forged old manifest is refused for what it is);
    /// another history's versions are not comparable (a republish from scratch).
    func verify(_ r: Resolution, _ run: SyncRun) throws -> Verified {
        guard var manifest = r.manifest else {
            throw FolioError(.invalidResponse, "the edge gave no manifest")
        }
        let held = run.held
        var keyListVersion = held?.state.keyListVersion
        if let trust = settings.trust {
            let url = transport.base + channelPath(PublishedLayout.manifest)
            do {
                let signed = try trust.verify(
                    r.manifestBytes, now: settings.now(), minimumKeyListVersion: held?.state.keyListVersion, parsed: manifest)
                manifest = signed.manifest
                run.report.signers = signed.verifiedSigners
                run.report.keyListVersion = signed.keyList.keyList.version
                keyListVersion = max(keyListVersion ?? 0, signed.keyList.keyList.version)
                if !settings.allowDowngrade, r.status == 200 {
                    // A bundled seed of another channel is no floor for this one.
                    let seed = settings.seed.flatMap { $0.channelName == settings.channel ? $0 : nil }
                    try Self.checkRollback(manifest, r.manifestBytes, held: held, seed: seed)
                }
            } catch {
                throw FolioError(error, url: url, hasContent: held != nil || settings.seed != nil)
            }
        }
        if r.status == 200, let held, manifest.history == held.manifest.history, manifest.version < held.state.version,
            !settings.allowDowngrade
        {
            throw FolioError(.downgrade, "the edge offers version \(manifest.version), older than the cached version \(held.state.version) (a rollback?); pass --allow-downgrade to accept it")
        }
        try checkChannel(manifest)
        let choice = manifest.releases.isEmpty
            ? ReleaseChoice(release: nil, reasons: []) : manifest.chooseRelease(installID: try run.installID(cache), context: settings.context)
        let seen = manifest.applying(release: choice.release)
        try checkAppVersion(seen, held: held)
        return Verified(resolution: r, manifest: seen, published: manifest, choice: choice, keyListVersion: keyListVersion)
    }

    /// The manifest must be the followed channel's (inside the signature when signed): an edge
    /// cannot serve one channel's manifest for another.
    private func checkChannel(_ manifest: Manifest) throws {
        guard manifest.channelName != settings.channel else { return }
        throw FolioError(
            .invalidResponse,
            "the edge's manifest at \(channelPath(PublishedLayout.manifest)) is channel \(manifest.channelName)'s, not \(settings.channel)'s; refused",
            url: transport.base + channelPath(PublishedLayout.manifest))
    }

    /// A version for newer apps than this one is not taken: the held version stays, and the
    /// app is told to update (after the signature checks: a forged manifest cannot ask for it).
    private func checkAppVersion(_ manifest: Manifest, held: SyncRun.Held?) throws {
        guard let app = settings.appVersion, let needed = manifest.minimumAppVersion, let minimum = AppVersion(needed), app < minimum else {
            return
        }
        let keeping = held.map { "the cache keeps version \($0.state.version)" } ?? "nothing is cached"
        var error = FolioError(
            .updateRequired,
            "version \(manifest.version) of the content needs app version \(needed) or later (this is \(app)); \(keeping)",
            url: transport.base + channelPath(PublishedLayout.manifest), hasContent: held != nil)
        error.requiredAppVersion = needed
        throw error
    }

    /// Refuses a verified manifest older than what this client has already held or bundles:
    /// within one publish history by version (an equal version must be the same bytes), across
    /// histories by creation time.
    static func checkRollback(_ manifest: Manifest, _ bytes: [UInt8], held: SyncRun.Held?, seed: Manifest?) throws(TrustError) {
        if let held {
            let floor = max(held.state.version, held.state.highestVersion ?? 0)
            if manifest.history == held.manifest.history {
                if manifest.version < floor {
                    throw TrustError(.rollback, "the edge offers version \(manifest.version), older than version \(floor) already verified here (a rollback or replay)")
                }
                if manifest.version == held.state.version, ContentHash.sha256Hex(bytes) != held.state.manifestSHA256 {
                    throw TrustError(.rollback, "the edge offers version \(manifest.version) with other bytes than the version \(manifest.version) verified here")
                }
            } else if manifest.createdAt < held.manifest.createdAt {
                throw TrustError(.rollback, "the edge offers a version published \(PlistDates.formatISO8601(manifest.createdAt)), before the one held (\(PlistDates.formatISO8601(held.manifest.createdAt)))")
            }
        }
        if let seed {
            if manifest.history == seed.history ? manifest.version < seed.version : manifest.createdAt < seed.createdAt {
                throw TrustError(.rollback, "the edge offers version \(manifest.version), older than the bundled seed's version \(seed.version) (a rollback)")
            }
            if manifest.history == seed.history, manifest.version == seed.version, manifest != seed {
                throw TrustError(.rollback, "the edge offers version \(manifest.version) with other content than the bundled seed's version \(seed.version)")
            }
        }
    }
}
