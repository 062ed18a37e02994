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
    package static let format = "folio-build-cache 3 \(folioVersion)"

    package struct Record: Sendable, Equatable {
        package var stamp: FileStamp
        package var entries: [Manifest.Entry]

        package init(stamp: FileStamp, entries: [Manifest.Entry]) {
            self.stamp = stamp
            self.entries = entries
        }
    }

    package var key = ""
    /// Every source's record (``RecordTable``), read when a rebuild asks for it (a no-op rebuild reads none).
    package var records = RecordTable()
    /// When the build that wrote the cache started its walk (ns since 1970): a file written
    /// just before then could change again within its time stamp's resolution unseen.
    package var scannedAt: Int64 = 0
    /// The published root.
    package var root = ""
    /// The names in `objects/` when the cache was loaded: a reused entry's files must be there
    /// (one directory listing, not a stat per object). Nil when `objects/` is as the last build
    /// left it (its stamp unchanged: no file added or removed since), so every recorded object is there.
    package var objectFiles: Set<String>? = []
    /// What the last build saw and published (see ``LastPublish``).
    package var last: LastPublish?

    package init() {}

    /// The entries to reuse for `file`, when its stamp is the recorded one and every object is on disk.
    package func reuse(_ file: SourceFile) -> [Manifest.Entry]? {
        guard let record = records.record(file.relativePath), record.stamp == file.stamp, trusts(file.stamp) else { return nil }
        if let objectFiles {
            for e in record.entries {
                let name = e.sha256 + "." + e.objectExtension
                guard objectFiles.contains(name), e.gzipSize == nil || objectFiles.contains(name + ".gz"),
                    e.brSize == nil || objectFiles.contains(name + ".br")
                else { return nil }
            }
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
            case .int(let scanned)? = value["scannedAt"], let table = value["records"]?.dataValue, let records = RecordTable(bytes: [UInt8](table))
        else { return cache }
        cache.scannedAt = scanned
        cache.last = value["last"].flatMap(LastPublish.init(plist:))
        let objects = PublishedLayout.path(root, PublishedLayout.objects)
        if let last = cache.last, FileStamp.read(objects) == last.objects {
            cache.objectFiles = nil
        } else {
            cache.objectFiles = Set((try? FileIO.list(objects)) ?? [])
        }
        cache.records = records
        return cache
    }

    /// Writes the cache for the artifacts just published (only sources that compile alone) and
    /// what the build saw.
    package func save(sources: [SourceFile], artifacts: [Artifact], last: LastPublish, scannedAt: Int64) throws {
        try save(records: recordTable(sources: sources, artifacts: artifacts).bytes, last: last, scannedAt: scannedAt)
    }

    /// ``save(sources:artifacts:last:scannedAt:)`` with the record table's bytes made already
    /// (a build makes them while it publishes).
    package func save(records: [UInt8], last: LastPublish, scannedAt: Int64) throws {
        let value = PlistValue.dict([
            "key": .string(Self.format + " " + key), "scannedAt": .int(scannedAt),
            "records": .data(Data(records)), "last": last.plist,
        ])
        try FileIO.writeAtomically(BinaryPlist.encode(value), to: PublishedLayout.path(root, Self.fileName), sync: false)
    }

    /// The records of the sources that compile alone: a reused file's record is the one read,
    /// copied as it is (its stamp and entries are unchanged); entries are made only for the others.
    func recordTable(sources: [SourceFile], artifacts: [Artifact]) -> RecordTable.Writer {
        // Each source's first artifact, the rest by the first's index (a source rarely has more).
        var first: [String: Int] = [:]
        first.reserveCapacity(artifacts.count)
        var more: [Int: [Int]] = [:]
        var fresh = Set<String>()
        for i in artifacts.indices where artifacts[i].sources.count == 1 && artifacts[i].cacheable {
            let source = artifacts[i].sources[0]
            if let f = first[source] { more[f, default: []].append(i) } else { first[source] = i }
            if artifacts[i].reused == nil { fresh.insert(source) }
        }
        var table = RecordTable.Writer()
        table.reserve(records.byteCount)
        for file in sources {
            guard let f = first[file.fullPath] else { continue }
            if fresh.contains(file.fullPath) || !table.copy(file.relativePath, from: records) {
                let entries = ([f] + (more[f] ?? [])).map { i in
                    var entry = artifacts[i].entry
                    entry.cache = nil  // the project file's, set again on every build
                    return entry
                }
                table.append(file.relativePath, Record(stamp: file.stamp, entries: entries))
            }
        }
        return table
    }
}

