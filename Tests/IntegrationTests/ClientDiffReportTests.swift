import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// A published root with two versions of content/ that differ in every way `folio diff` reports:
/// a notice, a locale removed from an array, an item moved, a catalog and an article added, a
/// cache policy changed.
struct DiffFixture {
    let root: ClientRoot
    var old: String { root.root + "/manifests/1.plist" }
    var new: String { root.root + "/manifests/2.plist" }
    static let notice = "Maintenance tonight 22:00-23:00 UTC"

    static func settings(_ locales: [String], _ menu: [Int]) -> String {
        let items = menu.map { #"{"id": \#($0), "title": "Item \#($0)"}"# }.joined(separator: ", ")
        return #"{"locales": [\#(locales.map { "\"\($0)\"" }.joined(separator: ", "))], "menu": [\#(items)]}"#
    }

    static func make(_ label: String) throws -> DiffFixture {
        let root = try ClientRoot.make(label) { r in try r.write("app/settings.json", settings(["en", "cy", "de", "fr"], [1, 2, 3])) }
        do {
            try root.write("app/settings.json", settings(["en", "de", "fr"], [3, 1, 2]))
            try root.write("catalogs/it/Localizable.strings", "\"app.title\" = \"Sonetti\";\n\"list.title\" = \"Tutti i sonetti\";\n")
            try root.write("articles/second.md", "---\ntitle: A second article\ndate: 2026-11-21T10:00:00Z\nauthor: Ada\n---\n# Second\n\nMore.\n")
            let toml = try String(contentsOfFile: root.content + "/folio.toml", encoding: .utf8)
            try root.write("folio.toml", toml.replacingOccurrences(of: "cache = { maxAge = 604800,", with: "cache = { maxAge = 86400,"))
            try root.publish(["--notice", notice])
        } catch {
            root.cleanup()
            throw error
        }
        return DiffFixture(root: root)
    }

    func diff(_ args: [String]) throws -> Harness.Output {
        try ClientTest.folio(["diff"] + args, cache: root.dir + "/cache", edge: ClientTest.unreachableEdge)
    }
}

extension ClientRoot {
    func write(_ path: String, _ text: String) throws {
        try FileIO.makeDirectory(FileIO.parent(of: content + "/" + path))
        try FileIO.writeAtomically(Array(text.utf8), to: content + "/" + path)
    }
}

@Suite("folio diff: what reviewers reported", .serialized)
struct ClientDiffReportTests {
    @Test("goldens: text, markdown and JSON of a notice, a removed locale, a move, added entries and a cache policy")
    func goldens() throws {
        let f = try DiffFixture.make("diff-golden")
        defer { f.root.cleanup() }
        for format in ["text", "markdown", "json"] {
            let out = try f.diff([f.old, f.new, "--format", format])
            #expect(out.status == 1, "\(out.stderr)")
            try GoldenTests.check("diff-report.\(format == "markdown" ? "md" : format)", GoldenTests.normalize(out.stdout, [(f.root.root, "<root>")]))
        }
    }

    @Test("a notice change alone is a difference, shown in words")
    func notice() throws {
        let root = try ClientRoot.make("diff-notice")
        defer { root.cleanup() }
        try root.publish(["--notice", DiffFixture.notice])
        let md = try ClientTest.folio(
            ["diff", root.root + "/manifests/1.plist", root.root + "/manifests/2.plist", "--format", "markdown"], cache: root.dir + "/c",
            edge: ClientTest.unreachableEdge)
        #expect(md.status == 1, "\(md.stdout)\(md.stderr)")
        #expect(!md.stdout.contains("No differences"), "\(md.stdout)")
        #expect(md.stdout.contains("notice changed") && md.stdout.contains("| notice | none | \"\(DiffFixture.notice)\" |"), "\(md.stdout)")
    }

    @Test("JSON output is typed: null when absent, numbers, arrays; moves and removals by alignment")
    func typedJSON() throws {
        let f = try DiffFixture.make("diff-json")
        defer { f.root.cleanup() }
        let out = try f.diff([f.old, f.new, "--format", "json"])
        #expect(out.status == 1, "\(out.stderr)")
        #expect(out.stdout.contains(#""old": null"#))
        let v = try DiffJSONReader.value(out)
        let notice = try #require(v["manifest"]?.arrayValue?.first { $0["field"] == .string("notice") })
        #expect(notice["old"] == DiffJSONReader.null && notice["new"] == .string(DiffFixture.notice))
        let settings = try #require(v["changed"]?.arrayValue?.first { $0["path"] == .string("app/settings.plist") })
        let changes = try (settings["changes"]?.arrayValue ?? []).map(DiffJSONReader.change)
        #expect(changes.contains(PlistChange(.remove, [.key("locales"), .index(1)], old: .string("cy"), index: 1)), "\(changes)")
        #expect(changes.contains(PlistChange(.move, [.key("menu"), .match(key: "id", value: .int(3))], from: 2, to: 0)), "\(changes)")
        #expect(changes.count == 2, "\(changes)")
        let added = v["added"]?.arrayValue ?? []
        let it = try #require(added.first { $0["path"]?.stringValue?.hasPrefix("catalogs/it/") == true })
        #expect(it["content"]?.arrayValue?.contains { $0["value"] == .string("Tutti i sonetti") } == true, "\(it)")
        let article = try #require(added.first { $0["path"] == .string("articles/second.plist") })
        #expect(article["content"]?.arrayValue?.contains { $0["at"] == .string("title") && $0["value"] == .string("A second article") } == true)
        let image = try #require(v["changed"]?.arrayValue?.first { $0["path"] == .string("images/quill.png") })
        #expect(image["metadata"]?.arrayValue?.first?["at"] == .string("cache"), "\(image)")
    }

    @Test("the JSON mirror manifest.json reads like manifest.plist")
    func jsonMirror() throws {
        let f = try DiffFixture.make("diff-mirror")
        defer { f.root.cleanup() }
        let plist = try f.diff([f.old, f.root.root + "/manifest.plist", "--format", "json"])
        let json = try f.diff([f.old, f.root.root + "/manifest.json", "--format", "json"])
        #expect(json.status == 1, "\(json.stderr)")
        #expect(try DiffJSONReader.value(json)["changed"] == (try DiffJSONReader.value(plist)["changed"]))
        #expect(try DiffJSONReader.value(json)["manifest"] == (try DiffJSONReader.value(plist)["manifest"]))
    }

    @Test("--format json prints one JSON document on error too, with exit 2; messages name no types")
    func errorJSON() throws {
        let f = try DiffFixture.make("diff-error")
        defer { f.root.cleanup() }
        let out = try f.diff([f.root.dir + "/nope", f.new, "--format", "json"])
        #expect(out.status == 2)
        let v = try DiffJSONReader.value(out)
        #expect(v["result"] == .string("error") && v["error"]?["code"] == .int(2))
        #expect(v["error"]?["message"]?.stringValue?.contains("nope") == true)
        try FileIO.writeAtomically(Array("{\"version\": 1}".utf8), to: f.root.dir + "/bad.json")
        let mirror = try f.diff([f.root.dir + "/bad.json", f.new])
        #expect(mirror.status == 2)
        #expect(!mirror.stderr.contains("Error(") && !mirror.stderr.contains("ManifestError"), "\(mirror.stderr)")
    }
}
