/// What a prune did (or, in a dry run, would do), as `folio-build prune` prints it and an
/// edge answers it (JSON).
package struct PruneReport: Codable, Sendable, Equatable {
    /// The files removed, in the order they went.
    package var removed: [PrunePlan.File]
    package var keptFiles: Int
    package var keptBytes: Int
    /// Names under `objects/`, `deltas/` or `manifests/` that are not Folio's: left alone.
    package var unknown: [String]
    /// The versioned manifests kept, per channel.
    package var versionsKept: [String: [Int]]
    package var dryRun: Bool

    package var removedBytes: Int { removed.reduce(0) { $0 + $1.size } }

    package init(_ plan: PrunePlan, dryRun: Bool) {
        removed = plan.removed
        keptFiles = plan.kept.count
        keptBytes = plan.keptBytes
        unknown = plan.unknown
        versionsKept = plan.versionsKept
        self.dryRun = dryRun
    }

    /// `pruned DEST: 12 files removed (40960 bytes), 300 kept (1234567 bytes); versions kept: production 9-10`,
    /// or the dry run's `dry run: pruning DEST would remove …; nothing was changed`.
    package func summary(destination: String) -> String {
        let versions = versionsKept.keys.sorted().map { "\($0) \(Self.ranges(versionsKept[$0] ?? []))" }.joined(separator: ", ")
        let others = unknown.isEmpty ? "" : "; \(unknown.count) unknown files under objects/, deltas/ or manifests/ left alone"
        let tail = "versions kept: \(versions)\(others)"
        if dryRun {
            return "dry run: pruning \(destination) would remove \(removed.count) files (\(removedBytes) bytes) and keep \(keptFiles) "
                + "(\(keptBytes) bytes); \(tail); nothing was changed"
        }
        return "pruned \(destination): \(removed.count) files removed (\(removedBytes) bytes), \(keptFiles) kept (\(keptBytes) bytes); \(tail)"
    }

    /// The lines of a dry run: `would remove PATH (N bytes)`, one per file.
    package var dryRunLines: [String] { removed.map { "would remove \($0.path) (\($0.size) bytes)" } }

    /// `1-4, 7, 9-12`; `none` for no versions.
    package static func ranges(_ sorted: [Int]) -> String {
        var out: [String] = []
        var i = 0
        while i < sorted.count {
            var j = i
            while j + 1 < sorted.count, sorted[j + 1] == sorted[j] + 1 { j += 1 }
            out.append(i == j ? "\(sorted[i])" : "\(sorted[i])-\(sorted[j])")
            i = j + 1
        }
        return out.isEmpty ? "none" : out.joined(separator: ", ")
    }
}
