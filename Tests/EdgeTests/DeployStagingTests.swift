import FolioSupport
import Foundation
import Testing

@testable import FolioEdge

/// A deploy's staging: which paths it takes, and the move into place.
@Suite("Deploy staging")
struct DeployStagingTests {
    /// A published root in a temporary directory, and a deploy's staging created in it.
    static func staging() throws -> (root: String, staging: DeployStaging) {
        let root = NSTemporaryDirectory() + "folio-staging-\(UUID().uuidString)"
        try FileIO.makeDirectory(root)
        let staging = DeployStaging(root: root, id: "test")
        try staging.create()
        return (root, staging)
    }

    @Test("paths of plain names under a published directory's layout are taken; others say why")
    func paths() {
        let object = "objects/" + String(repeating: "ab", count: 32) + ".plist"
        for good in [object, object + ".gz", "manifest.plist", "manifest.plist.br", "head.plist", "deltas/x-y.plist", "manifests/3.plist", "channels/beta/manifest.plist"] {
            #expect(DeployPaths.problem(good) == nil, "\(good)")
        }
        let bad = [
            "", "/manifest.plist", "manifest.plist/", "deltas//x.plist", "deltas/.x.plist", "../manifest.plist", "deltas/../../etc",
            "deltas\\x.plist", "objects/abc.plist", object + "/x", "channels/production/manifest.plist", "channels/Bad Name/manifest.plist",
            "notes.txt", String(repeating: "a/", count: 300) + "manifest.plist",
        ]
        for path in bad { #expect(DeployPaths.problem(path) != nil, "\(path)") }
    }

    @Test("the move into place replaces files, keeping the old ones linked in the staging until it is removed")
    func moveIntoPlaceKeepsReplaced() throws {
        let (root, staging) = try Self.staging()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileIO.writeAtomically(Array("old head".utf8), to: root + "/head.plist", sync: false)
        try staging.store("head.plist", Array("new head".utf8))
        try staging.store("manifests/2.plist", Array("version 2".utf8))
        #expect(staging.files() == ["manifests/2.plist", "head.plist"], "in a publish's order")
        try DeployCommit.moveIntoPlace(staging)
        #expect(try FileIO.read(root + "/head.plist") == Array("new head".utf8))
        #expect(try FileIO.read(root + "/manifests/2.plist") == Array("version 2".utf8))
        let kept = try FileIO.list(staging.directory).filter { $0.hasPrefix(".replaced-") }
        #expect(kept.count == 1)
        #expect(try kept.map { try FileIO.read(staging.directory + "/" + $0) } == [Array("old head".utf8)])
        #expect(staging.files().isEmpty, "what is kept is no staged file")
        staging.removeSoon()
        #expect(!FileIO.exists(staging.directory), "set aside at once")
        for _ in 0..<100 where !((try? FileIO.list(DeployStaging.base(root))) ?? []).isEmpty { usleep(20_000) }
        #expect(try FileIO.list(DeployStaging.base(root)).isEmpty, "removed soon after")
    }

    @Test("files made durable early are skipped at the commit while they are the same file; a file staged again is not")
    func durableEarly() throws {
        let (root, staging) = try Self.staging()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try staging.store("head.plist", Array("head".utf8))
        try staging.store("manifests/2.plist", Array("version 2".utf8))
        let durable = staging.makeDurableSoon(staging.files()).value
        #expect(Set(durable.keys) == ["head.plist", "manifests/2.plist"])
        #expect(staging.notDurable(staging.files(), durable: durable).isEmpty)
        try staging.store("head.plist", Array("head, sent again".utf8))
        try staging.store("manifest.plist", Array("manifest".utf8))
        #expect(staging.notDurable(staging.files(), durable: durable) == ["head.plist", "manifest.plist"])
        try DeployCommit.moveIntoPlace(staging, durable: durable)
        #expect(try FileIO.read(root + "/head.plist") == Array("head, sent again".utf8))
    }

    @Test("the versioned manifest is staged as a second name of the staged manifest; without one it is written")
    func versionedManifestLinked() throws {
        let (root, staging) = try Self.staging()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let bytes = Array("manifest, version 2".utf8)
        try staging.store("manifest.plist", bytes)
        try staging.stageLink("manifests/2.plist", to: "manifest.plist", bytes: bytes)
        var a = stat(), b = stat()
        #expect(stat(staging.directory + "/manifest.plist", &a) == 0 && stat(staging.directory + "/manifests/2.plist", &b) == 0)
        #expect(a.st_ino == b.st_ino && a.st_nlink == 2)
        try staging.stageLink("channels/beta/manifests/2.plist", to: "channels/beta/manifest.plist", bytes: bytes)
        #expect(try FileIO.read(staging.directory + "/channels/beta/manifests/2.plist") == bytes)
        #expect(stat(staging.directory + "/channels/beta/manifests/2.plist", &b) == 0 && b.st_nlink == 1)
    }
}
