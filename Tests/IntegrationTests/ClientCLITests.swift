import FolioPublished
import FolioTestSupport
import Foundation
import Testing

/// `folio sync` is read straight from argv when it has only its own flags (fast start-up); the
/// full parser must still handle everything else the same way.
@Suite("folio sync argument handling", .serialized)
struct ClientCLITests {
    @Test("the fast path and the full parser give the same sync; anything unusual goes to the full parser")
    func fastPathAgreesWithParser() throws {
        let root = try ClientRoot.make("client-cli")
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        // Options after the subcommand: the fast path.
        let first = try ClientTest.json(try ClientTest.folio(["sync", "--json"], cache: cache, edge: edge.baseURL))
        #expect(first["result"] == .string("updated"))
        // Options before the subcommand (full parser), same cache: a revalidation.
        let full = try Harness.run(ClientTest.folioPath, ["--cache-dir", cache, "--edge", edge.baseURL, "sync", "--force", "--json"],
                                   env: ["FOLIO_EDGE": "", "FOLIO_CACHE_DIR": ""])
        #expect(full.status == 0, "\(full.stderr)")
        let fast = try ClientTest.json(try ClientTest.folio(["sync", "--force", "--json", "--no-wait"], cache: cache, edge: edge.baseURL))
        let viaParser = try ClientTest.json(full)
        for key in ["result", "versionBefore", "versionAfter", "requests", "objectsFetched"] {
            #expect(fast[key] == viaParser[key], "\(key): \(String(describing: fast[key])) vs \(String(describing: viaParser[key]))")
        }
        #expect(fast["requests"] == .int(1))
        // Options before the subcommand are read straight from argv too.
        let before = try Harness.run(ClientTest.folioPath, ["--edge", edge.baseURL, "--cache-dir", cache, "sync", "--force", "--json"],
                                     env: ["FOLIO_EDGE": "", "FOLIO_CACHE_DIR": ""])
        #expect(try ClientTest.json(before)["requests"] == .int(1))
        // A misspelt flag is the parser's usage error, not a sync.
        let typo = try ClientTest.folio(["sync", "--forc"], cache: cache, edge: edge.baseURL)
        #expect(typo.status == 64, "\(typo.status) \(typo.stderr)")
        #expect(typo.stderr.contains("--forc"))
        // A bad edge URL is still refused with the parser's message.
        let bad = try Harness.run(ClientTest.folioPath, ["sync", "--edge", "ftp://x", "--cache-dir", cache], env: ["FOLIO_EDGE": ""])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("is not an http(s) URL"), "\(bad.stderr)")
        // --help is the parser's.
        let help = try Harness.run(ClientTest.folioPath, ["sync", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--allow-downgrade"))
    }

    @Test("folio-build --notice: the manifest carries it, folio status and read show it, a new notice is a new version")
    func notice() throws {
        let root = try ClientRoot.make("client-notice")
        defer { root.cleanup() }
        let v1 = try root.manifest().version
        try root.publish(["--notice", "Maintenance tonight from 22:00 UTC"])
        let m2 = try root.manifest()
        #expect(m2.version == v1 + 1, "a notice alone makes a new version")
        #expect(m2.notice == "Maintenance tonight from 22:00 UTC")
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        #expect(try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL).status == 0)
        let status = try ClientTest.folio(["status"], cache: cache, edge: edge.baseURL)
        #expect(status.stdout.contains("notice:      Maintenance tonight from 22:00 UTC"), "\(status.stdout)")
        #expect(try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: cache, edge: edge.baseURL))["notice"] == .string("Maintenance tonight from 22:00 UTC"))
        let read = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache, edge: edge.baseURL)
        #expect(read.status == 0 && read.stderr.contains("folio: notice: Maintenance tonight"), "\(read.stderr)")
        #expect(!read.stdout.contains("notice"))

        // Publishing without --notice clears it (another version); a multi-line notice is refused.
        try root.publish()
        #expect(try root.manifest().notice == nil)
        #expect(try root.manifest().version == m2.version + 1)
        let bad = try Harness.run(Harness.binary("folio-build"), ["--content", root.content, "--output", root.root, "--notice", "a\nb"])
        #expect(bad.status == 64, "\(bad.status) \(bad.stderr)")
    }
}
