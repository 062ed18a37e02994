import FolioBuilder
import FolioPublished
import FolioSupport
import Testing

/// The build cache's table of records: what is written reads back, a record copies as it is,
/// and a damaged table is refused whole (the build then compiles every file again).
@Suite("build cache record table")
struct BuildCacheTableTests {
    static let sha = String(repeating: "0f", count: 32)

    static func record(_ n: Int, entries: Int = 2) -> BuildCache.Record {
        BuildCache.Record(
            stamp: FileStamp(inode: UInt64.max - UInt64(n), size: Int64(n * 10), mtimeSeconds: 1_700_000_000 + n, mtimeNanos: n),
            entries: (0..<entries).map { i in
                Manifest.Entry(
                    path: "dir/é-\(n)-\(i).plist", sha256: sha, size: n + i, gzipSize: i == 0 ? nil : 7, contentType: Manifest.plistContentType,
                    locale: i == 1 ? "pt-BR" : nil, kind: i == 0 ? nil : "data")
            })
    }

    @Test func writesReadsAndCopies() throws {
        var writer = RecordTable.Writer()
        for n in 0..<50 { writer.append("src/\(n).json", Self.record(n, entries: n % 3)) }
        let table = try #require(RecordTable(bytes: writer.bytes))
        for n in 0..<50 { #expect(table.record("src/\(n).json") == Self.record(n, entries: n % 3)) }
        #expect(table.record("src/50.json") == nil)

        var next = RecordTable.Writer()
        let copiedOne = next.copy("src/7.json", from: table)
        let copiedMissing = next.copy("missing", from: table)
        #expect(copiedOne && !copiedMissing)
        next.append("new.md", Self.record(99))
        let copied = try #require(RecordTable(bytes: next.bytes))
        #expect(copied.record("src/7.json") == Self.record(7, entries: 1))
        #expect(copied.record("new.md") == Self.record(99))
        #expect(copied.record("src/8.json") == nil)
    }

    @Test func refusesDamagedTables() throws {
        var writer = RecordTable.Writer()
        writer.append("a.json", Self.record(1))
        writer.append("b.json", Self.record(2))
        let bytes = writer.bytes
        var first = RecordTable.Writer()
        first.append("a.json", Self.record(1))
        #expect(RecordTable(bytes: []) != nil)
        for cut in stride(from: 1, to: bytes.count, by: 7) where cut != first.bytes.count {
            #expect(RecordTable(bytes: Array(bytes.prefix(cut))) == nil, "a table cut at \(cut) of \(bytes.count) bytes was read")
        }
        var huge = bytes
        huge[0] = 0xFF  // the first path's length, far past the end
        #expect(RecordTable(bytes: huge) == nil)
    }
}
