import FolioSupport
import Foundation

/// Rebuilds the disk tier's index from a cache directory's files, reading each entry's head
/// only. Runs in the background at start; what it cannot use it hands back for deletion.
enum DiskIndexScan {
    /// Calls `found` with each whole entry's key and record, and `discard` with the names of
    /// leftovers: temporary files of an interrupted write, files of the earlier one-file-per-entry
    /// format, and entries that are torn or misnamed.
    static func run(_ directory: String, found: (String, DiskRecord) -> Void, discard: ([String]) -> Void) {
        let top = (try? FileIO.list(directory)) ?? []
        discard(top.filter { $0.hasPrefix(".tmp-") || $0.hasSuffix(".entry") })
        for shard in top where isShard(shard) {
            let names = (try? FileIO.list(directory + "/" + shard)) ?? []
            var leftovers: [String] = []
            for name in names {
                let relative = shard + "/" + name
                if name.hasSuffix(".entry"), let (key, record) = entry(directory, relative) {
                    found(key, record)
                } else if name.hasPrefix(".tmp-") || name.hasSuffix(".entry") {
                    leftovers.append(relative)
                }
            }
            discard(leftovers)
        }
    }

    private static func isShard(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The key and record of the entry at `relative`, when its head reads and names it so.
    private static func entry(_ directory: String, _ relative: String) -> (String, DiskRecord)? {
        guard let (head, size) = try? CacheEntryFile.readHead(directory + "/" + relative) else { return nil }
        guard DiskTier.name(key: head.key, varyNames: head.derived.varyNames, varyValues: head.derived.varyValues) == relative else { return nil }
        let record = DiskRecord(
            name: relative, size: size, responseTime: head.responseTime, varyNames: head.derived.varyNames, varyValues: head.derived.varyValues)
        return (head.key, record)
    }
}
