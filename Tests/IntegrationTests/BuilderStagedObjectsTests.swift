import FolioPlist
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

@testable import FolioBuilder

/// A first publish writes its many objects into a staged folder that then takes the place of
/// `objects/` (``PublishSession/writeObjects(_:)``); every other publish links each object in
/// alone. Both must leave the same files, and a staged folder left by a killed build is swept.
@Suite("Builder staged objects", .serialized)
struct BuilderStagedObjectsTests {
    /// More artifacts than ``PublishSession/perFileSyncLimit`` (one file-system sync: staged).
    static func artifacts(_ count: Int) throws -> [Artifact] {
        try (0..<count).map { n in
            let bytes = BinaryPlist.encode(.dict(["n": .int(Int64(n)), "text": .string(String(repeating: "verse \(n) ", count: 40))]))
            var a = Artifact(path: "posts/\(n).plist", bytes: bytes, sha256: ContentHash.sha256Hex(bytes))
            a.gzip = try Gzip.compress(bytes)
            return a
        }
    }

    static func objects(_ root: String) -> [String: [UInt8]] {
        Harness.snapshot(root + "/objects")
    }

    @Test("a first publish's staged objects equal those linked in one by one")
    func stagedEqualsLinked() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let artifacts = try Self.artifacts(3 * PublishSession.perFileSyncLimit)
        let (staged, linked) = (dir + "/staged", dir + "/linked")
        try FileIO.makeDirectory(staged)
        try FileIO.makeDirectory(linked + "/objects")  // present, so each object is linked in alone
        for root in [staged, linked] { try PublishSession(root: root).writeObjects(artifacts) }
        let files = Self.objects(staged)
        #expect(files.count == 2 * artifacts.count)
        #expect(files == Self.objects(linked))
        for a in artifacts { #expect(files[a.sha256 + ".plist"] == a.bytes) }
        #expect(try FileIO.list(staged, prefix: ".tmp-").isEmpty)
    }

    @Test("a staged folder left by a killed build is removed by the next publish")
    func leftoverSwept() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let leftover = dir + "/.tmp-objects-999999"
        try FileIO.makeDirectory(leftover)
        try FileIO.writeAtomically([1, 2, 3], to: leftover + "/half-written.plist", sync: false)
        let artifacts = try Self.artifacts(PublishSession.perFileSyncLimit + 1)
        try PublishSession(root: dir).writeObjects(artifacts)
        #expect(!FileIO.exists(leftover))
        #expect(Self.objects(dir).count == 2 * artifacts.count)
    }

    @Test("a killed build's temporary object is swept unless objects/ has the stamp the last build left")
    func temporaryObjectSwept() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let objects = dir + "/objects"
        try FileIO.makeDirectory(objects)
        let asLeft = try #require(FileStamp.read(objects))
        let stray = objects + "/.tmp-killed"
        try FileIO.writeAtomically([1, 2, 3], to: stray, sync: false)
        // Creating it changed the folder's stamp: listed, and the file removed.
        #expect(FileStamp.read(objects) != asLeft)
        PublishSession.removeTemporaryFiles(root: dir, channelDir: dir, objectsAsLeft: asLeft)
        #expect(!FileIO.exists(stray))
        // A folder with the stamp given is taken as the last build left it: not listed.
        try FileIO.writeAtomically([1, 2, 3], to: stray, sync: false)
        PublishSession.removeTemporaryFiles(root: dir, channelDir: dir, objectsAsLeft: FileStamp.read(objects))
        #expect(FileIO.exists(stray))
        PublishSession.removeTemporaryFiles(root: dir, channelDir: dir)
        #expect(!FileIO.exists(stray))
    }

    @Test("a file created under its name is never written over an existing one")
    func createIsExclusive() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let folder = try FileIO.Directory(dir)
        try folder.create([1, 2, 3], name: "a")
        #expect(throws: FileError.self) { try folder.create([4, 5], name: "a") }
        #expect(try FileIO.read(dir + "/a") == [1, 2, 3])
    }
}
