import Foundation
import Testing

@testable import FolioSupport

/// Atomic file writes: complete files appear at their names, and nothing else does.
@Suite("FileIO")
struct FileIOTests {
    let dir: String

    init() throws {
        dir = NSTemporaryDirectory() + "folio-fileio-\(UUID().uuidString)"
        try FileIO.makeDirectory(dir)
    }

    func names() throws -> [String] { try FileIO.list(dir).sorted() }

    @Test func writeNewCreatesTheFileAndNothingElse() throws {
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try FileIO.writeNew(bytes, to: dir + "/a.plist")
        #expect(try FileIO.read(dir + "/a.plist") == bytes)
        #expect(try names() == ["a.plist"])
        try FileIO.writeNew([], to: dir + "/empty")
        #expect(try FileIO.read(dir + "/empty") == [])
        #expect(try names() == ["a.plist", "empty"])
    }

    @Test("read: a file whole at every size around its stat size, and a stream with no size, chunk by chunk")
    func readsWhole() throws {
        for size in [0, 1, 4095, 4096, 65_535, 65_536, 65_537, 300_001] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ size) }
            try FileIO.writeAtomically(bytes, to: dir + "/f\(size)", sync: false)
            #expect(try FileIO.read(dir + "/f\(size)") == bytes, "\(size) bytes")
        }
        // A FIFO has no size: its 200,003 bytes (3 chunks and a part, written in pieces) come
        // through the chunked path.
        let fifo = dir + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let expected = (0..<200_003).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            var offset = 0
            while offset < expected.count {
                let n = expected[offset..<min(offset + 10_007, expected.count)].withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
                if n <= 0 { break }
                offset += n
            }
            close(fd)
        }
        writer.start()
        #expect(try FileIO.read(fifo) == expected)
        #expect(throws: FileError.self) { try FileIO.read(dir + "/missing") }
    }

    @Test func writeNewReplacesAnExistingFile() throws {
        // A damaged cached object is replaced by its good bytes, again without leftovers.
        try FileIO.writeAtomically(Array("truncat".utf8), to: dir + "/obj", sync: false)
        try FileIO.writeNew(Array("the whole object".utf8), to: dir + "/obj")
        #expect(try FileIO.read(dir + "/obj") == Array("the whole object".utf8))
        #expect(try names() == ["obj"])
    }

    @Test func writeNewIntoAMissingDirectoryFails() {
        #expect(throws: FileError.self) { try FileIO.writeNew([1, 2, 3], to: dir + "/missing/obj") }
    }

    @Test("a streamed hash is the hash of the whole file, at chunk boundaries too")
    func streamedHash() throws {
        for size in [0, 1, FileIO.chunkSize - 1, FileIO.chunkSize, 2 * FileIO.chunkSize + 7] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
            try FileIO.writeAtomically(bytes, to: dir + "/h", sync: false)
            let (hex, count) = try ContentHash.sha256Hex(file: dir + "/h")
            #expect(hex == ContentHash.sha256Hex(bytes) && count == size, "\(size) bytes")
        }
    }

    @Test("copyNew streams a file in under its name once it is checked; a file that changed leaves nothing")
    func copyNewChecks() throws {
        let source = dir + "/source.bin"
        let bytes = (0..<(3 * FileIO.chunkSize + 123)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
        try FileIO.writeAtomically(bytes, to: source, sync: false)
        let sha = ContentHash.sha256Hex(bytes)
        try FileIO.makeDirectory(dir + "/objects")
        let objects = try FileIO.Directory(dir + "/objects")
        try objects.copyNew(from: source, name: "a.bin", size: bytes.count, sha256: sha, sync: true)
        #expect(try FileIO.read(dir + "/objects/a.bin") == bytes)

        var edited = bytes
        edited[FileIO.chunkSize + 5] ^= 1
        try FileIO.writeAtomically(edited, to: source, sync: false)
        #expect {
            try objects.copyNew(from: source, name: "b.bin", size: bytes.count, sha256: sha)
        } throws: { error in
            "\(error)" == "cannot publish \(source): it changed while the build was reading it; run the build again"
        }
        try FileIO.writeAtomically(Array(bytes.dropLast()), to: source, sync: false)
        #expect(throws: FileError.self) { try objects.copyNew(from: source, name: "b.bin", size: bytes.count, sha256: sha) }
        #expect(throws: FileError.self) { try objects.copyNew(from: dir + "/missing", name: "b.bin", size: 0, sha256: sha) }
        #expect(try FileIO.list(dir + "/objects") == ["a.bin"], "no temporary file and no b.bin left")
    }

    @Test("regularFiles lists the files at every depth, hidden ones too, and follows no link")
    func regularFilesAtEveryDepth() throws {
        try FileIO.makeDirectory(dir + "/a")
        try FileIO.makeDirectory(dir + "/a/b")
        try FileIO.makeDirectory(dir + "/empty")
        for file in ["top", "a/one", "a/b/two", "a/b/.hidden"] { try FileIO.writeAtomically([1], to: dir + "/" + file, sync: false) }
        #expect(symlink(dir + "/a", dir + "/link") == 0)
        #expect(FileIO.regularFiles(under: dir).sorted() == ["a/b/.hidden", "a/b/two", "a/one", "top"])
        #expect(FileIO.regularFiles(under: dir + "/missing").isEmpty)
    }

    @Test func pathComponents() {
        // As NSString's, without its trap on one-character relative paths.
        let cases: [(String, String, String)] = [
            ("b", "", "b"), ("ab", "", "ab"), ("a/b", "a", "b"), ("/b", "/", "b"), ("/", "/", "/"),
            ("a/b/", "a", "b"), ("a//b", "a", "b"), ("/a/b/c.plist", "/a/b", "c.plist"), ("", "", ""), ("./x", ".", "x"),
        ]
        for (path, parent, last) in cases {
            #expect(FileIO.parent(of: path) == parent, "\(path)")
            #expect(FileIO.lastComponent(of: path) == last, "\(path)")
        }
    }
}
