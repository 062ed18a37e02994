import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// What `folio-build prune` must leave, worked out here from the published files themselves
/// (not by the code under test): the files of production's `objects/`, `deltas/` and
/// `manifests/` that the current manifest and the `keep` newest versioned manifests need.
enum PruneExpect {
    /// Every file under `objects/`, `deltas/` and `manifests/` of `root` (production).
    static func candidates(_ root: String) -> Set<String> {
        var out = Set<String>()
        for dir in ["objects", "deltas", "manifests"] {
            for name in (try? FileIO.list(root + "/" + dir)) ?? [] where !name.hasPrefix(".") { out.insert(dir + "/" + name) }
        }
        return out
    }

    /// The candidates a prune keeping `keep` versions keeps (unknown names included: they stay).
    static func kept(_ root: String, keep: Int) throws -> Set<String> {
        let versions = try FileIO.list(root + "/manifests").compactMap { Int($0.dropLast(6)) }.sorted().suffix(keep)
        var manifests = try versions.map { try FileIO.read(root + "/manifests/\($0).plist") }
        manifests.append(try FileIO.read(root + "/manifest.plist"))
        let hashes = Set(try manifests.flatMap { try Manifest(bytes: $0).allEntries.map(\.sha256) })
        var targets = Set(manifests.map { ContentHash.sha256Hex($0) })
        if let head = try? DeltaHead(bytes: FileIO.read(root + "/head.plist")) {
            targets.insert(head.sha256)
            if let w = head.waypoint { targets.insert(w.sha256) }
        }
        return candidates(root).filter { path in
            let name = String(path.split(separator: "/")[1])
            if path.hasPrefix("manifests/") { return Int(name.dropLast(6)).map { versions.contains($0) } ?? true }
            let hex = name.prefix(64)
            guard hex.count == 64, hex.allSatisfy(\.isHexDigit) else { return true }  // not Folio's: stays
            if path.hasPrefix("objects/") { return hashes.contains(String(hex)) }
            return targets.contains(String(name.dropFirst(65).prefix(64)))  // deltas/<from>-<to>.plist…
        }
    }

    /// The sum of the sizes of `paths` under `root`.
    static func bytes(_ root: String, _ paths: Set<String>) -> Int {
        paths.reduce(0) { $0 + ((try? FileIO.read(root + "/" + $1).count) ?? 0) }
    }

    /// Replaces sonnet 18's `old` with `new` (one version's edit).
    static func edit(_ content: String, _ old: String, _ new: String) throws {
        let path = content + "/sonnets/018.txt"
        let text = String(decoding: try FileIO.read(path), as: UTF8.self)
        let edited = text.replacingOccurrences(of: old, with: new)
        #expect(edited != text)
        try FileIO.writeAtomically(Array(edited.utf8), to: path)
    }

    /// `folio-build prune ARGS`.
    static func prune(_ args: [String], env: [String: String] = [:]) throws -> Harness.Output {
        try Harness.run(Harness.binary("folio-build"), ["prune"] + args, env: env)
    }

    /// The files outside `objects/`, `deltas/` and `manifests/`, which no prune touches.
    static func others(_ snapshot: [String: [UInt8]]) -> [String: [UInt8]] {
        snapshot.filter { !["objects/", "deltas/", "manifests/"].contains(where: $0.key.hasPrefix) }
    }
}
