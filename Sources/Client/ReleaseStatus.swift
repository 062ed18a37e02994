import FolioKitCore
import FolioPlist
import FolioPublished
import Foundation

/// `folio status`'s lines about channels and releases: the channel, the install's id and
/// buckets, which release applies and why.
enum ReleaseStatus {
    static func describe(_ held: ContentCache.Held?, cache: ContentCache, profile: ReleaseProfile, json d: inout [String: PlistValue], lines: inout [String]) {
        d["channel"] = .string(profile.channel)
        lines.append("channel:     \(profile.channel)")
        let installID = profile.installID ?? cache.existingInstallID()
        if let installID { d["installID"] = .string(installID) }
        if let held, held.manifest.critical {
            d["critical"] = .bool(true)
            lines.append("critical:    the publisher marks this version critical: apply it at once")
        }
        guard let held, !held.published.releases.isEmpty || held.state.release != nil else { return }
        let releases = held.published.releases.map { r -> PlistValue in
            var item: [String: PlistValue] = [
                "id": .int(Int64(r.id)), "rolloutPercent": .real(Double(r.rolloutBasisPoints) / 100), "halted": .bool(r.halted),
                "conditions": .array(r.conditions.map { .string($0.description) }),
            ]
            if let installID { item["bucket"] = .int(Int64(held.published.rolloutBucket(installID: installID, release: r.id))) }
            return .dict(item)
        }
        d["releases"] = .array(releases)
        if let id = held.state.release { d["release"] = .int(Int64(id)) }
        d["releaseReasons"] = .array(held.state.releaseReasons.map { .string($0) })
        lines.append("release:     " + (held.state.release.map { "release \($0)" } ?? "the default entries") + " (install \(installID ?? "not yet synced"))")
        for reason in held.state.releaseReasons { lines.append("             \(reason)") }
    }
}
