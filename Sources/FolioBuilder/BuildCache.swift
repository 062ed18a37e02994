import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// What the last publish compiled from each source file that compiles alone (data, documents,
/// assets), keyed by the file's stamp: a rebuild reuses the entries of every file it has not
/// touched, without reading it. Kept in the published directory as `.folio-build-cache.plist`
/// (never served); any doubt (other project rules, another folio-build, an object missing)
/// means the file is compiled again.
package struct BuildCache: Sendable {
    package static let fileName = ".folio-build-cache.plist"
    /// Bumped when what a kind writes for the same source changes.
    package static let format = "folio-build-cache 1 \(folioVersion)"

    package struct Record: Sendable, Equatable {
        package var stamp: FileStamp
        package var entries: [Manifest.Entry]
    }

    package var key = ""
    package var records: [String: Record] = [:]
    /// When the cache was written: a file changed in that same second may have kept its stamp.
    package var savedAt: Int = 0
    /// The published root, to check that a reused object is still there.
    package var root = ""

    package init() {}

    /// The entries to reuse for `file`, when its stamp is the recorded one and every object is on disk.
    package func reuse(_ file: SourceFile) -> [Manifest.Entry]? {
        guard let record = records[file.relativePath], record.stamp == file.stamp, file.stamp.mtimeSeconds < savedAt - 1 else {
            return nil
        }
        for e in record.entries {
            guard FileIO.exists(PublishedLayout.path(root, e.objectPath)) else { return nil }
            if let gz = e.gzipObjectPath, !FileIO.exists(PublishedLayout.path(root, gz)) { return nil }
        }
        return record.entries
    }

    /// The cache of `root` when it was made under `key` (the project file's fingerprint); empty otherwise.
    package static func load(root: String, key: String) -> BuildCache {
        var cache = BuildCache()
        cache.root = root
        cache.key = key
        guard let bytes = try? FileIO.read(PublishedLayout.path(root, fileName)),
            let value = try? BinaryPlist.decode(bytes), value["key"]?.stringValue == format + " " + key,
            let saved = value["savedAt"]?.intValue, let records = value["records"]?.dictValue
        else { return cache }
        cache.savedAt = saved
        for (path, record) in records {
            guard let r = record.arrayValue, r.count == 5, let inode = r[0].intValue, let size = r[1].intValue,
                let sec = r[2].intValue, let nsec = r[3].intValue, let list = r[4].arrayValue,
                let entries = try? Manifest(plist: .dict(["schemaVersion": .int(1), "version": .int(1), "createdAt": .date(Date(timeIntervalSince1970: 0)), "entries": .array(list)])).entries
            else { continue }
            let stamp = FileStamp(inode: UInt64(inode), size: Int64(size), mtimeSeconds: sec, mtimeNanos: nsec)
            cache.records[path] = Record(stamp: stamp, entries: entries)
        }
        return cache
    }

    /// Writes the cache for the artifacts just published (only sources that compile alone).
    package static func save(root: String, key: String, sources: [SourceFile], artifacts: [Artifact]) throws {
        var bySource: [String: [Manifest.Entry]] = [:]
        for a in artifacts where a.sources.count == 1 && a.cacheable { bySource[a.sources[0], default: []].append(a.entry) }
        var records: [String: PlistValue] = [:]
        for file in sources {
            guard let entries = bySource[file.fullPath] else { continue }
            let s = file.stamp
            records[file.relativePath] = .array([
                .int(Int64(s.inode & 0x7FFF_FFFF_FFFF_FFFF)), .int(s.size), .int(Int64(s.mtimeSeconds)), .int(Int64(s.mtimeNanos)),
                Manifest(version: 1, createdAt: Date(timeIntervalSince1970: 0), entries: entries).plist["entries"] ?? .array([]),
            ])
        }
        let value = PlistValue.dict([
            "key": .string(format + " " + key), "savedAt": .int(Int64(Date().timeIntervalSince1970)), "records": .dict(records),
        ])
        try FileIO.writeAtomically(BinaryPlist.encode(value), to: PublishedLayout.path(root, fileName), sync: false)
    }
}
