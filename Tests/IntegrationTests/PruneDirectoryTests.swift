import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EdgeIntegration {
    /// `folio-build prune DIR`: four versions built with edits, pruned to the last two, read
    /// back by the real client through a real edge over the pruned directory.
    @Suite("folio-build prune: a published directory", .serialized)
    struct PruneDirectoryTests {
        @Test("dry run, a refusal under the builder's lock, then --keep 2 leaves exactly what versions 3 and 4 need")
        func keepTwo() throws {
            let dir = Harness.tempDir("prune-dir")
            defer { Harness.cleanup(dir) }
            let content = Harness.copyContent(to: dir)
            let root = dir + "/public"
            var word = "summer’s day"
            for version in 1...4 {
                if version > 1 {
                    try PruneExpect.edit(content, word, "day number \(version)")
                    word = "day number \(version)"
                }
                try DeploySetup.build(content, into: root)
                if version == 3 { try syncClient(root, cache: dir + "/held", expect: "day number 3") }
            }
            try FileIO.writeAtomically(Array("notes\n".utf8), to: root + "/objects/notes.txt")
            let before = Harness.snapshot(root)
            let kept = try PruneExpect.kept(root, keep: 2)
            let gone = PruneExpect.candidates(root).subtracting(kept)
            #expect(gone.contains("manifests/1.plist") && gone.contains("manifests/2.plist") && gone.count > 10, "\(gone.sorted())")
            #expect(kept.contains("objects/notes.txt") && kept.contains("manifests/3.plist"))
            let goneBytes = PruneExpect.bytes(root, gone)

            let dry = try PruneExpect.prune([root, "--keep", "2", "--dry-run"])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.split(separator: "\n").filter { $0.hasPrefix("would remove ") }.count == gone.count, "\(dry.stdout)")
            #expect(dry.stdout.contains("would remove \(gone.count) files (\(goneBytes) bytes)"), "\(dry.stdout)")
            #expect(dry.stdout.contains("1 unknown files under objects/, deltas/ or manifests/ left alone"), "\(dry.stdout)")
            #expect(Harness.snapshot(root) == before, "a dry run changed the directory")

            let lock = try #require(try FileIO.tryLock(root + "/.folio-build.lock"))
            let refused = try PruneExpect.prune([root, "--keep", "2"])
            close(lock)
            #expect(refused.status == 2 && refused.stderr.contains("another folio-build is publishing to \(root)/"), "\(refused.stderr)")
            #expect(Harness.snapshot(root) == before, "a refused prune changed the directory")

            let pruned = try PruneExpect.prune([root, "--keep", "2"])
            #expect(pruned.status == 0, "\(pruned.stderr)")
            #expect(pruned.stdout.contains("pruned \(root): \(gone.count) files removed (\(goneBytes) bytes)"), "\(pruned.stdout)")
            #expect(pruned.stdout.contains("versions kept: production 3-4"), "\(pruned.stdout)")
            let after = Harness.snapshot(root)
            #expect(PruneExpect.candidates(root) == kept)
            #expect(PruneExpect.others(after) == PruneExpect.others(before), "a file outside objects/, deltas/, manifests/ changed")
            #expect(after.allSatisfy { before[$0.key] == $0.value })
            _ = try Harness.verifyPublished(root)

            let again = try PruneExpect.prune([root, "--keep", "2"])
            #expect(again.status == 0 && again.stdout.contains("0 files removed (0 bytes)"), "\(again.stdout) \(again.stderr)")
            try readBack(root, dir: dir)
        }

        /// A client that held version 3 takes the kept delta to 4, a fresh one syncs whole; the
        /// pruned versioned manifest is gone from the edge.
        private func readBack(_ root: String, dir: String) throws {
            let edge = try EdgeProcess.start(root: root, args: ClientTest.edgeArgs)
            defer { edge.stop() }
            let held = try ClientTest.json(try ClientTest.folio(["sync", "--force", "--json"], cache: dir + "/held", edge: edge.baseURL, env: ["FOLIO_SEED": ""]))
            #expect(held["method"]?.stringValue == "delta", "\(held)")
            #expect(held["versionAfter"]?.intValue == 4, "\(held)")
            try syncClient(root, cache: dir + "/fresh", expect: "day number 4", edge: edge)
            let read = try ClientTest.folio(["read", "sonnet", "18"], cache: dir + "/held", edge: ClientTest.unreachableEdge)
            #expect(read.status == 0 && read.stdout.contains("day number 4"), "\(read.stdout) \(read.stderr)")
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifests/1.plist").status == 404)
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifests/3.plist").status == 200)
        }

        @Test("--keep 1 keeps a staged release's objects and another channel's, and removes the rest")
        func releasesAndChannels() throws {
            let dir = Harness.tempDir("prune-release")
            defer { Harness.cleanup(dir) }
            let content = Harness.copyContent(to: dir)
            let root = dir + "/public"
            try DeploySetup.build(content, into: root)
            try PruneExpect.edit(content, "summer’s day", "day for beta")
            try DeploySetup.build(content, into: root, ["--channel", "beta"])
            try PruneExpect.edit(content, "day for beta", "day for some")
            try DeploySetup.build(content, into: root, ["--rollout", "10"])
            try PruneExpect.edit(content, "day for some", "day number 4")
            try DeploySetup.build(content, into: root, ["--channel", "beta"])
            let production = try Manifest(bytes: FileIO.read(root + "/manifest.plist"))
            let beta = try Manifest(bytes: FileIO.read(root + "/channels/beta/manifest.plist"))
            let staged = try #require(production.releases.first?.entries.first { $0.path == "sonnets/018.plist" })
            let firstBeta = try #require(try FileIO.list(root + "/channels/beta/manifests").sorted().first)
            let dropped = try #require(try Manifest(bytes: FileIO.read(root + "/channels/beta/manifests/" + firstBeta)).entry("sonnets/018.plist"))

            let r = try PruneExpect.prune([root, "--keep", "1"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("versions kept: beta \(beta.version), production \(production.version)"), "\(r.stdout)")
            for entry in production.allEntries + beta.allEntries {
                #expect(FileIO.exists(root + "/" + entry.objectPath), "\(entry.path) of a kept manifest")
            }
            #expect(FileIO.exists(root + "/" + staged.objectPath), "the staged release's object")
            #expect(!FileIO.exists(root + "/" + dropped.objectPath), "the object only beta's first version named")
            #expect(try FileIO.list(root + "/manifests") == ["\(production.version).plist"])
            #expect(try FileIO.list(root + "/channels/beta/manifests") == ["\(beta.version).plist"])
            _ = try Harness.verifyPublished(root)
        }

        @Test("errors: not a published directory, a bad --keep, edge options for a directory")
        func errors() throws {
            let dir = Harness.tempDir("prune-errors")
            defer { Harness.cleanup(dir) }
            let cases: [([String], Int32, String)] = [
                ([dir + "/nothing"], 1, "does not exist"),
                ([dir], 1, "holds no manifest.plist: it is not a published directory"),
                ([dir, "--keep", "0"], 64, "--keep must be 1 to 1000"),
                ([dir, "--token-file", "t"], 64, "--token-file and --ca are for an edge"),
                (["s3://", "--keep", "2"], 1, "names no bucket"),
            ]
            for (args, status, message) in cases {
                let r = try PruneExpect.prune(args)
                #expect(r.status == status && r.stderr.contains(message), "\(args): \(r.status) \(r.stderr)")
            }
        }

        /// Syncs a client in `cache` (started fresh) and reads sonnet 18.
        private func syncClient(_ root: String, cache: String, expect text: String, edge: EdgeProcess? = nil) throws {
            let started = try edge ?? EdgeProcess.start(root: root, args: ClientTest.edgeArgs)
            defer { if edge == nil { started.stop() } }
            let sync = try ClientTest.folio(["sync"], cache: cache, edge: started.baseURL, env: ["FOLIO_SEED": ""])
            #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
            let read = try ClientTest.folio(["read", "sonnet", "18"], cache: cache, edge: ClientTest.unreachableEdge)
            #expect(read.stdout.contains(text), "\(read.stdout) \(read.stderr)")
        }
    }
}
