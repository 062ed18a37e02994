import FolioTestSupport
import Foundation
import Testing

/// `folio diff A B [--format F]` alone is read without the argument parser (`DiffRun`'s fast
/// path); with any other option the parser reads it. Both must print and exit alike.
@Suite("folio diff: the fast path and the parser agree", .serialized)
struct ClientDiffFastPathTests {
    @Test("same output, errors and exit codes with and without the parser")
    func agree() throws {
        let root = try ClientRoot.make("diff-fast")
        defer { root.cleanup() }
        try root.replace(in: 18, "summer’s day", with: "winter’s night")
        try root.publish(seed: nil, ["--notice", "Maintenance tonight"])
        let cache = root.dir + "/cache"
        let (one, two) = (root.root + "/manifests/1.plist", root.root + "/manifests/2.plist")
        let cases: [[String]] = [
            [one, two], ["--format", "markdown", one, two], [one, two, "--format", "json"], [one, one],
            [one, root.dir + "/missing"], [one, root.dir + "/missing", "--format", "json"], ["@1", "@9"],
            [root.root + "/manifest.json", one],
        ]
        var fastRuns = 0
        for args in cases {
            // Only the environment says where the cache and the edge are: the fast path.
            let env = ["FOLIO_CACHE_DIR": cache, "FOLIO_EDGE": ClientTest.unreachableEdge, "LC_ALL": "", "LANG": ""]
            let fast = try Harness.run(ClientTest.folioPath, ["diff"] + args, env: env)
            // The same places as options: the parser.
            let parsed = try ClientTest.folio(["diff"] + args, cache: cache, edge: ClientTest.unreachableEdge)
            #expect(fast.status == parsed.status, "\(args): \(fast.status) vs \(parsed.status) \(fast.stderr)")
            #expect(fast.stdout == parsed.stdout, "\(args)")
            #expect(fast.stderr == parsed.stderr, "\(args): \(fast.stderr) vs \(parsed.stderr)")
            if fast.status == 1 { fastRuns += 1 }
        }
        #expect(fastRuns == 4, "four cases differ")
        // What the fast path leaves to the parser is still the parser's to refuse.
        let bad = try Harness.run(ClientTest.folioPath, ["diff", one, two, "--format", "yaml"], env: ["FOLIO_CACHE_DIR": cache])
        #expect(bad.status == 64 && bad.stderr.contains("--format"), "\(bad.status) \(bad.stderr)")
        let badEdge = try Harness.run(ClientTest.folioPath, ["diff", one, two], env: ["FOLIO_CACHE_DIR": cache, "FOLIO_EDGE": "ftp://x"])
        #expect(badEdge.status == 64 && badEdge.stderr.contains("not an http(s) URL"), "\(badEdge.status) \(badEdge.stderr)")
    }

    @Test("a usage error of diff --format json is diff's JSON error document; --help is still help")
    func usageErrorAsJSON() throws {
        let cases: [([String], String)] = [
            (["diff", "--format", "json"], "Missing expected argument '<a>'"),
            (["diff", "a", "b", "--format=json", "--timeout", "0"], "--timeout"),
            (["--edge", "ftp://x", "diff", "a", "b", "--format", "json"], "not an http(s) URL"),
        ]
        for (args, message) in cases {
            let r = try Harness.run(ClientTest.folioPath, args, env: ["FOLIO_CACHE_DIR": Harness.tempDir()])
            let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            let error = json?["error"] as? [String: Any]
            #expect(r.status == 64, "\(args): \(r.status)")
            #expect(json?["schema"] as? String == "folio-diff/1" && json?["result"] as? String == "error", "\(args): \(r.stdout)")
            #expect(error?["code"] as? Int == 64 && (error?["message"] as? String)?.contains(message) == true, "\(args): \(r.stdout)")
        }
        let text = try Harness.run(ClientTest.folioPath, ["diff", "--format", "text"], env: [:])
        #expect(text.status == 64 && text.stdout.isEmpty && text.stderr.contains("Missing expected argument"))
        let help = try Harness.run(ClientTest.folioPath, ["diff", "--help", "--format", "json"], env: [:])
        #expect(help.status == 0 && help.stdout.contains("USAGE: folio diff"), "\(help.stdout)")
    }
}
