import FolioPlist
import FolioPublished
import Foundation

/// The differences between two versions: the manifest's fields, signing, releases, and the
/// entries added, removed and changed (each with its value-level changes).
struct ContentDiff {
    /// One side's header: fields that change with every build are shown here, not as differences.
    struct Side {
        var label: String
        var version: Int
        var createdAt: Date
    }

    var from: Side
    var to: Side
    /// Manifest fields that differ (notice, minimum app version, cache hints, …).
    var manifest: [FieldChange] = []
    /// Signing in words (shown; not a content difference).
    var signing: [String] = []
    var oldSigning: PlistValue?
    var newSigning: PlistValue?
    /// Releases added, removed or changed, by id.
    var releases: [ReleaseChange] = []
    var added: [EntryPreview] = []
    var removed: [EntryPreview] = []
    var changed: [EntryChange] = []

    /// Whether nothing a client acts on differs (exit 0).
    var isEmpty: Bool {
        added.isEmpty && removed.isEmpty && changed.isEmpty && releases.isEmpty && !manifest.contains(where: \.significant)
    }

    static func compute(_ a: DiffSide, _ b: DiffSide) async throws -> ContentDiff {
        var diff = ContentDiff(
            from: Side(label: a.label, version: a.manifest.version, createdAt: a.manifest.createdAt),
            to: Side(label: b.label, version: b.manifest.version, createdAt: b.manifest.createdAt))
        diff.manifest = FieldChange.compare(a.manifest, b.manifest)
        (diff.oldSigning, diff.newSigning) = (a.signing, b.signing)
        diff.signing = SigningWords.describe(a.signing, b.signing)
        if a.appliedRelease == nil, b.appliedRelease == nil { diff.releases = ReleaseChange.compare(a.manifest, b.manifest) }
        let old = Dictionary(a.manifest.entries.map { ($0.path, $0) }, uniquingKeysWith: { x, _ in x })
        let new = Dictionary(b.manifest.entries.map { ($0.path, $0) }, uniquingKeysWith: { x, _ in x })
        for e in b.manifest.entries where old[e.path] == nil { diff.added.append(await EntryPreview.make(e, b)) }
        for e in a.manifest.entries where new[e.path] == nil { diff.removed.append(await EntryPreview.make(e, a)) }
        for e in b.manifest.entries {
            guard let o = old[e.path], o != e else { continue }
            if let c = try await EntryChange.compare(o, e, a, b) { diff.changed.append(c) }
        }
        return diff
    }

    /// "3 changed, 1 added, 1 removed; notice changed".
    var summary: String {
        var parts = ["\(changed.count) changed", "\(added.count) added", "\(removed.count) removed"]
        if !releases.isEmpty { parts.append("\(releases.count) release\(releases.count == 1 ? "" : "s") changed") }
        var text = parts.joined(separator: ", ")
        let fields = manifest.map(\.label) + (signing.isEmpty ? [] : ["signing"])
        if !fields.isEmpty { text += "; " + fields.joined(separator: ", ") + " changed" }
        return text
    }

    /// "version 3 (2024-…) → version 4 (2024-…)".
    var header: String {
        "\(from.label) → \(to.label)"
    }
}

/// A release added, removed or changed, in words.
struct ReleaseChange {
    var id: Int
    var old: Release?
    var new: Release?

    /// The releases of two manifests that differ.
    static func compare(_ a: Manifest, _ b: Manifest) -> [ReleaseChange] {
        let old = Dictionary(a.releases.map { ($0.id, $0) }, uniquingKeysWith: { x, _ in x })
        let new = Dictionary(b.releases.map { ($0.id, $0) }, uniquingKeysWith: { x, _ in x })
        return Set(old.keys).union(new.keys).sorted().compactMap { id in
            old[id] == new[id] ? nil : ReleaseChange(id: id, old: old[id], new: new[id])
        }
    }
}
