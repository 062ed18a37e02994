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
    /// Each source's record, read when a rebuild asks for it (a no-op rebuild reads none).
    package var records: [String: PlistValue] = [:]
    /// When the build that wrote the cache started its walk (ns since 1970): a file written
    /// just before then could change again within its time stamp's resolution unseen.
    package var scannedAt: Int64 = 0
    /// The published root.
    package var root = ""
    /// The names in `objects/` when the cache was loaded: a reused entry's files must be there
    /// (one directory listing, not a stat per object).
    package var objectFiles: Set<String> = []
    /// What the last build saw and published (see ``LastPublish``).
    package var last: LastPublish?

    package init() {}

    /// The entries to reuse for `file`, when its stamp is the recorded one and every object is on disk.
    package func reuse(_ file: SourceFile) -> [Manifest.Entry]? {
        guard let raw = records[file.relativePath], let record = Record(plist: raw), record.stamp == file.stamp, trusts(file.stamp)
        else { return nil }
        for e in record.entries {
            let name = e.sha256 + "." + e.objectExtension
            guard objectFiles.contains(name), e.gzipSize == nil || objectFiles.contains(name + ".gz") else { return nil }
        }
        return record.entries
    }

    /// Whether a recorded stamp can be believed: the file was last written well before the walk
    /// that recorded it (0.1 s; 2 s where the file system keeps whole seconds only).
    package func trusts(_ stamp: FileStamp) -> Bool {
        let margin: Int64 = stamp.mtimeNanos == 0 ? 2_000_000_000 : 100_000_000
        return Int64(stamp.mtimeSeconds) * 1_000_000_000 + Int64(stamp.mtimeNanos) < scannedAt - margin
    }

    /// Now, in nanoseconds since 1970, for ``scannedAt``.
    package static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// The cache of `root` when it was made under `key` (the project file's fingerprint); empty otherwise.
    package static func load(root: String, key: String) -> BuildCache {
        var cache = BuildCache()
        cache.root = root
        cache.key = key
        guard let bytes = try? FileIO.read(PublishedLayout.path(root, fileName)),
            let value = try? BinaryPlist.decode(bytes), value["key"]?.stringValue == format + " " + key,
            case .int(let scanned)? = value["scannedAt"], let records = value["records"]?.dictValue
        else { return cache }
        cache.scannedAt = scanned
        cache.last = value["last"].flatMap(LastPublish.init(plist:))
        cache.objectFiles = Set((try? FileIO.list(PublishedLayout.path(root, PublishedLayout.objects))) ?? [])
        cache.records = records
        return cache
    }

    /// Writes the cache for the artifacts just published (only sources that compile alone) and
    /// what the build saw.
    package func save(sources: [SourceFile], artifacts: [Artifact], last: LastPublish, scannedAt: Int64) throws {
        var bySource: [String: [Manifest.Entry]] = [:]
        var fresh = Set<String>()
        for a in artifacts where a.sources.count == 1 && a.cacheable {
            var entry = a.entry
            entry.cache = nil  // the project file's, set again on every build
            bySource[a.sources[0], default: []].append(entry)
            if a.reused == nil { fresh.insert(a.sources[0]) }
        }
        var records: [String: PlistValue] = [:]
        for file in sources {
            guard let entries = bySource[file.fullPath] else { continue }
            // A reused file's record is the one read (its stamp and entries are unchanged).
            if !fresh.contains(file.fullPath), let raw = self.records[file.relativePath] {
                records[file.relativePath] = raw
            } else {
                records[file.relativePath] = Record(stamp: file.stamp, entries: entries).plist
            }
        }
        let value = PlistValue.dict([
            "key": .string(Self.format + " " + key), "scannedAt": .int(scannedAt),
            "records": .dict(records), "last": last.plist,
        ])
        try FileIO.writeAtomically(BinaryPlist.encode(value), to: PublishedLayout.path(root, Self.fileName), sync: false)
    }
}

extension BuildCache.Record {
    /// `[inode, size, mtime s, mtime ns, [path, sha256, size, gzipSize or -1, contentType, kind, locale?]…]`:
    /// flat arrays, quick to read back for 20,000 files.
    var plist: PlistValue {
        let s = stamp
        let list = entries.map { e in
            PlistValue.array(
                [.string(e.path), .string(e.sha256), .int(Int64(e.size)), .int(Int64(e.gzipSize ?? -1)), .string(e.contentType),
                 .string(e.kind ?? "")] + (e.locale.map { [.string($0)] } ?? []))
        }
        return .array([.int(Int64(bitPattern: s.inode)), .int(s.size), .int(Int64(s.mtimeSeconds)), .int(Int64(s.mtimeNanos)), .array(list)])
    }

    init?(plist: PlistValue) {
        guard let r = plist.arrayValue, r.count == 5, case .int(let inode) = r[0], let size = r[1].intValue,
            let sec = r[2].intValue, let nsec = r[3].intValue, let list = r[4].arrayValue
        else { return nil }
        var entries: [Manifest.Entry] = []
        for item in list {
            guard let f = item.arrayValue, f.count >= 6, let path = f[0].stringValue, let sha = f[1].stringValue,
                let objectSize = f[2].intValue, let gz = f[3].intValue, let type = f[4].stringValue, let kind = f[5].stringValue,
                Manifest.isValidPath(path), ContentHash.isSHA256Hex(sha)
            else { return nil }
            entries.append(Manifest.Entry(
                path: path, sha256: sha, size: objectSize, gzipSize: gz < 0 ? nil : gz, contentType: type, locale: f.count > 6 ? f[6].stringValue : nil,
                kind: kind.isEmpty ? nil : kind))
        }
        self.init(stamp: FileStamp(inode: UInt64(bitPattern: inode), size: Int64(size), mtimeSeconds: sec, mtimeNanos: nsec), entries: entries)
    }
}
