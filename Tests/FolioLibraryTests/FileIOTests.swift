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
