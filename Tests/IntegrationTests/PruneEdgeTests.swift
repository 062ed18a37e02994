import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

extension EdgeIntegration {
    /// `folio-build prune http://EDGE`: versions deployed to a real folio-edge, pruned over its
    /// admin listener while it serves.
    @Suite("folio-build prune: an edge", .serialized)
    struct PruneEdgeTests {
        @Test("refused while a deploy holds the lock; a dry run; --keep 2: kept files served, pruned ones 404; a client syncs")
        func keepTwo() throws {
            let s = try DeploySetup.make("prune-edge")
            defer { s.cleanup() }
            try deployVersions(s)
            let root = s.edgeRoot
            let kept = try PruneExpect.kept(root, keep: 2)
            let gone = PruneExpect.candidates(root).subtracting(kept)
            let goneRoutes = ["manifests/1.plist", "manifests/2.plist"] + gone.filter { $0.hasPrefix("deltas/") && $0.hasSuffix(".plist") }
            #expect(goneRoutes.count > 2, "\(gone.sorted())")
            for path in goneRoutes { #expect(try status(s, path) == 200, "\(path) before the prune") }

            let id = try DeployRaw.begin(port: s.adminPort, holder: "alice@ci pid 7", version: 9)
            let refused = try prune(s, ["--keep", "2"])
            #expect(refused.status == 2 && refused.stderr.contains("held by alice@ci pid 7"), "\(refused.stderr)")
            #expect(try DeployRaw.request(port: s.adminPort, "DELETE", "/.folio/deploy/\(id)").status == 200)
            let dry = try prune(s, ["--keep", "2", "--dry-run"])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.split(separator: "\n").filter { $0.hasPrefix("would remove ") }.count == gone.count, "\(dry.stdout)")
            #expect(PruneExpect.candidates(root) == kept.union(gone), "a refused prune or a dry run removed files")

            let bytes = PruneExpect.bytes(root, gone)
            let pruned = try prune(s, ["--keep", "2"])
            #expect(pruned.status == 0, "\(pruned.stderr)")
            #expect(pruned.stdout.contains("pruned \(s.url): \(gone.count) files removed (\(bytes) bytes)"), "\(pruned.stdout)")
            #expect(PruneExpect.candidates(root) == kept)
            for path in goneRoutes + gone.filter({ $0.hasPrefix("objects/") }).sorted().prefix(10) {
                #expect(try status(s, path) == 404, "\(path) after the prune")
            }
            #expect(try status(s, "manifests/3.plist") == 200)
            try s.expectServesWhole(4)
            try syncAndRead(s)
        }

        @Test("--keep 1 keeps what the edge still serves: the replaced version's objects")
        func keepOne() throws {
            let s = try DeploySetup.make("prune-edge-one")
            defer { s.cleanup() }
            try deployVersions(s)
            let v3 = try Manifest(bytes: FileIO.read(s.edgeRoot + "/manifests/3.plist"))
            let sonnet = try #require(v3.entry("sonnets/018.plist"))
            #expect(try Manifest(bytes: s.edgeManifestBytes()).entry("sonnets/018.plist")?.sha256 != sonnet.sha256)
            let pruned = try prune(s, ["--keep", "1"])
            #expect(pruned.status == 0 && pruned.stdout.contains("versions kept: production 4"), "\(pruned.stdout) \(pruned.stderr)")
            #expect(try status(s, "manifests/3.plist") == 404)
            #expect(FileIO.exists(s.edgeRoot + "/" + sonnet.objectPath))
            let r = try RawHTTPConnection.fetch(port: s.edge.port, "/" + sonnet.objectPath)
            #expect(r.status == 200 && sonnet.matches(r.body), "the replaced version's object is no longer served")
            try s.expectServesWhole(4)
            let wrong = try PruneExpect.prune([s.url, "--token-file", "/dev/null"])
            #expect(wrong.status == 1 && wrong.stderr.contains("deploy token file /dev/null is empty"), "\(wrong.stderr)")
        }

        /// Versions 2 (the setup's), 3 and 4 (sonnet 18 edited) deployed.
        private func deployVersions(_ s: DeploySetup) throws {
            var word = "summer’s day"
            for version in 2...4 {
                if version > 2 {
                    try PruneExpect.edit(s.content, word, "day number \(version)")
                    word = "day number \(version)"
                    try s.rebuild()
                }
                let r = try s.deploy()
                #expect(r.status == 0, "\(r.stderr)")
            }
            try s.expectServesWhole(4)
        }

        private func prune(_ s: DeploySetup, _ args: [String]) throws -> Harness.Output {
            try PruneExpect.prune([s.url, "--token-file", s.tokenFile] + args)
        }

        private func status(_ s: DeploySetup, _ path: String) throws -> Int {
            Int(try RawHTTPConnection.fetch(port: s.edge.port, "/" + path).status)
        }

        private func syncAndRead(_ s: DeploySetup) throws {
            let cache = s.dir + "/client"
            let sync = try ClientTest.folio(["sync"], cache: cache, edge: s.edge.baseURL, env: ["FOLIO_SEED": ""])
            #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
            let read = try ClientTest.folio(["read", "sonnet", "18"], cache: cache, edge: ClientTest.unreachableEdge)
            #expect(read.status == 0 && read.stdout.contains("day number 4"), "\(read.stdout) \(read.stderr)")
        }
    }
}
