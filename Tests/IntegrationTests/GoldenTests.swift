import FolioTestSupport
import FolioPlist
import FolioSupport
import Foundation
import Testing

/// The programs' output checked against committed files in `Tests/IntegrationTests/Golden`:
/// `--help` of every command, `folio status` (text and JSON) and `folio diff` in each format.
/// `FOLIO_RECORD_GOLDEN=1 swift test --filter GoldenTests` writes them anew; review the diff.
@Suite("golden CLI output", .serialized)
struct GoldenTests {
    static let directory = Harness.repoRoot + "/Tests/IntegrationTests/Golden"
    static let recording = ProcessInfo.processInfo.environment["FOLIO_RECORD_GOLDEN"] == "1"

    /// Compares `actual` with the golden file `name` (or records it).
    static func check(_ name: String, _ actual: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = directory + "/" + name
        if recording {
            try FileIO.makeDirectory(directory)
            try FileIO.writeAtomically(Array(actual.utf8), to: path)
            return
        }
        guard let expected = try? FileIO.read(path) else {
            Issue.record("no golden file \(path): run with FOLIO_RECORD_GOLDEN=1", sourceLocation: sourceLocation)
            return
        }
        let text = String(decoding: expected, as: UTF8.self)
        #expect(text == actual, "\(name) differs from its golden file (FOLIO_RECORD_GOLDEN=1 records it)", sourceLocation: sourceLocation)
    }

    /// Replaces what changes from run to run: temporary paths, the edge's port, times and ages.
    static func normalize(_ text: String, _ replacements: [(String, String)]) -> String {
        var s = text
        for (from, to) in replacements where !from.isEmpty { s = s.replacingOccurrences(of: from, with: to) }
        let patterns: [(String, String)] = [
            (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, "<date>"),
            (#"\b\d+ (s|min|h|d) ago"#, "<age> ago"),
            (#"validated \d+ s ago"#, "validated <age> ago"),
            (#"\(\d+ bytes\)"#, "(<n> bytes)"),
            (#""cacheBytes" *: *\d+"#, "\"cacheBytes\": <n>"),
            // A random id made at the first sync.
            (#""installID" *: *"[0-9a-f]+""#, "\"installID\": \"<id>\""),
            // Bytes on the wire depend on response heads (dates, ETags), not on what is tested.
            (#"; \d+ bytes"#, "; <n> bytes"),
        ]
        for (pattern, template) in patterns {
            s = s.replacingOccurrences(of: pattern, with: template, options: .regularExpression)
        }
        return s
    }

    @Test("--help of every program and command")
    func help() throws {
        let commands: [(String, [String])] = [
            ("folio", []), ("folio", ["sync"]), ("folio", ["list"]), ("folio", ["read"]), ("folio", ["show"]),
            ("folio", ["status"]), ("folio", ["diff"]), ("folio", ["strings"]), ("folio", ["plist"]),
            ("folio-build", []), ("folio-build", ["build"]), ("folio-build", ["release"]), ("folio-build", ["release", "promote"]),
            ("folio-build", ["release", "rollout"]), ("folio-build", ["publish"]), ("folio-build", ["prune"]), ("folio-edge", []), ("folio-edge", ["run"]),
            ("folio-edge", ["validate"]),
        ]
        for (program, args) in commands {
            let out = try Harness.run(Harness.binary(program), args + ["--help"], env: ["COLUMNS": "100"])
            #expect(out.status == 0, "\(program) \(args) --help: \(out.stderr)")
            try Self.check(([program] + args).joined(separator: "-") + ".help.txt", out.stdout)
        }
    }

    @Test("folio status, text and JSON, before and after a sync")
    func status() throws {
        let root = try ClientRoot.make("golden-status", floor: 1)
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        let swaps = [(cache, "<cache>"), (edge.baseURL, "<edge>")]
        let env = ["FOLIO_SEED": ""]  // the bundled seed changes with content/; these files should not
        let before = try ClientTest.folio(["status"], cache: cache, edge: edge.baseURL, env: env)
        try Self.check("status-empty.txt", Self.normalize(before.stdout, swaps))
        #expect(try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL, env: env).status == 0)
        let text = try ClientTest.folio(["status"], cache: cache, edge: edge.baseURL, env: env)
        try Self.check("status.txt", Self.normalize(text.stdout, swaps))
        let json = try ClientTest.folio(["status", "--json"], cache: cache, edge: edge.baseURL, env: env)
        try Self.check("status.json", Self.normalize(json.stdout, swaps))
    }

    @Test("folio diff in text, markdown and JSON")
    func diff() throws {
        let a = try ClientRoot.make("golden-diffA")
        defer { a.cleanup() }
        let b = try ClientRoot.make("golden-diffB") { r in
            try r.replace(in: 18, "summer’s day", with: "winter’s night")
            try FileManager.default.removeItem(atPath: r.sonnetFile(154))
        }
        defer { b.cleanup() }
        let swaps = [(a.root, "<a>"), (b.root, "<b>")]
        for format in ["text", "markdown", "json"] {
            let out = try ClientTest.folio(
                ["diff", a.root, b.root, "--format", format], cache: a.dir + "/cache", edge: ClientTest.unreachableEdge)
            #expect(out.status == 1, "\(out.stderr)")
            try Self.check("diff.\(format == "markdown" ? "md" : format)", Self.normalize(out.stdout, swaps))
        }
    }
}
