import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// The real files under `nulls = "omit"` and `"error"`, and a change of rule in one published
/// directory: the build cache must not reuse what was compiled under the other rule.
extension RealNullTests {
    /// A project file of one rule: `nulls` for the files `match` (TOML: a string or a list) names.
    static func rule(_ nulls: String, match: String = #""**""#) -> String {
        "[[rules]]\nmatch = \(match)\nnulls = \"\(nulls)\"\n"
    }

    @Test("nulls = \"omit\": the null keys are left out, every other value as kept")
    func omitsReal() throws {
        let dir = Harness.tempDir("real-nulls-omit")
        defer { Harness.cleanup(dir) }
        try #require(try Self.publish(Self.fixture, dir + "/kept").status == 0)
        let omitted = try Self.publish(try Self.content(dir, project: Self.rule("omit")), dir + "/omitted")
        try #require(omitted.status == 0, "\(omitted.stderr)")
        let kept = try Self.objects(dir + "/kept"), left = try Self.objects(dir + "/omitted")
        #expect(left.keys.sorted() == Self.paths)
        for path in Self.paths {
            #expect(left[path] == kept[path].map(Self.droppingNullKeys), "\(path)")
            #expect(left[path].map(Self.nulls) == 0 && left[path] != kept[path], "\(path)")
        }
    }

    @Test("nulls = \"error\": each file refused at its first null's line:col (PyYAML's marks), nothing published")
    func refusesReal() throws {
        let dir = Harness.tempDir("real-nulls-error")
        defer { Harness.cleanup(dir) }
        let content = try Self.content(dir, project: Self.rule("error", match: #"["workflows/**", "compose/**"]"#))
        let r = try Self.publish(content, dir + "/public")
        #expect(r.status == 1)
        let refused = "is refused by nulls = \"error\" in folio.toml; give a value or remove the key, or set nulls = \"keep\" for this file"
        for (file, at, pointer) in [
            ("workflows/hugo.yml", "10:21", "/on/workflow_dispatch"), ("workflows/terraform.yml", "50:16", "/on/pull_request"),
            ("workflows/swift_6_language_mode.yml", "7:17", "/on/workflow_call"),
            ("workflows/zscaler-iac-scan.yml", "46:20", "/jobs/zscaler-iac-scan/steps/1/with/iac_dir"),
            ("compose/react-express-mysql.yaml", "61:10", "/networks/public"), ("compose/nextcloud-redis-mariadb.yaml", "41:11", "/volumes/db_data"),
        ] {
            #expect(r.stderr.contains("\(content)/\(file):\(at): error: null at \(pointer) \(refused)"), "\(file) in\n\(r.stderr)")
        }
        #expect(!r.stderr.contains("api/"), "the API files are not under the rule: kept")
        #expect(!FileIO.exists(dir + "/public/manifest.plist"))
    }

    @Test("a change of the nulls rule recompiles every file in the same output; folio diff shows the nulls")
    func ruleChangeRecompiles() throws {
        let dir = Harness.tempDir("real-nulls-cache")
        defer { Harness.cleanup(dir) }
        let content = try Self.content(dir)
        let root = dir + "/public"
        let args = ["--content", content, "--output", root]
        #expect(try Harness.run(Self.build, args, env: Self.env).status == 0)
        Thread.sleep(forTimeInterval: 0.2)  // stamps are trusted once written well before a walk
        #expect(try Harness.run(Self.build, args, env: Self.env).stdout.contains("up to date at version 1"))
        try FileIO.writeAtomically(Array(Self.rule("omit").utf8), to: content + "/folio.toml", sync: false)
        let omit = try Harness.run(Self.build, args, env: Self.env)
        #expect(omit.stdout.contains("published version 2 (was 1): 0 added, 8 changed, 0 removed"), "\(omit.stdout)\(omit.stderr)")
        #expect(try Self.objects(root).values.map(Self.nulls).reduce(0, +) == 0)
        try FileIO.writeAtomically(Array(Self.rule("keep").utf8), to: content + "/folio.toml", sync: false)
        let keep = try Harness.run(Self.build, args, env: Self.env)
        #expect(keep.stdout.contains("published version 3 (was 2): 0 added, 8 changed, 0 removed"), "\(keep.stdout)\(keep.stderr)")
        #expect(try Self.objects(root).values.map(Self.nulls).reduce(0, +) == Self.nullCount)

        let cache = dir + "/cache"
        let diff = try ClientTest.folio(["diff", root + "/manifests/1.plist", root + "/manifests/2.plist"], cache: cache, edge: ClientTest.unreachableEdge)
        #expect(diff.status == 1 && diff.stdout.contains("8 changed, 0 added, 0 removed"), "\(diff.stdout)\(diff.stderr)")
        #expect(diff.stdout.contains("\n- workflows/hugo.plist on.workflow_dispatch: null\n"), "\(diff.stdout)")
        let removed = diff.stdout.split(separator: "\n").filter { $0.hasPrefix("- ") && $0.hasSuffix(": null") }
        #expect(removed.count == Self.nullCount, "\(diff.stdout)")
        #expect(!diff.stdout.contains("$null"), "\(diff.stdout)")
        let json = try ClientTest.folio(["diff", root + "/manifests/2.plist", root + "/manifest.plist", "--format", "json"], cache: cache, edge: ClientTest.unreachableEdge)
        #expect(json.stdout.contains(#""op": "add""#) && !json.stdout.contains("$null"), "\(json.stdout)")
    }
}
