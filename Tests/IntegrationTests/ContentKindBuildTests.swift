import FolioTestSupport
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Testing

/// folio-build over every content kind: what it publishes, what it refuses, and how.
@Suite("content kinds: folio-build", .serialized)
struct ContentKindBuildTests {
    let build = Harness.binary("folio-build")
    let env = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]

    /// Writes `files` (relative path → text) under a new content folder.
    static func content(_ dir: String, _ files: [String: String]) -> String {
        let content = dir + "/content"
        for (path, text) in files {
            let full = content + "/" + path
            try! FileIO.makeDirectory(FileIO.parent(of: full))
            try! FileIO.writeAtomically(Array(text.utf8), to: full, sync: false)
        }
        return content
    }

    func object(_ root: String, _ m: Manifest, _ path: String) throws -> PlistValue {
        let e = try #require(m.entry(path), "no entry \(path)")
        return try BinaryPlist.decode(try FileIO.read(root + "/" + e.objectPath))
    }

    @Test("the example content: data, documents with HTML, an index, an asset, each with its cache policy")
    func exampleContent() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let r = try Harness.run(build, ["--content", Harness.repoRoot + "/content", "--output", dir + "/public"], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        let root = dir + "/public"
        let m = try Harness.verifyPublished(root)
        let home = try #require(m.entry("app/home.plist"))
        #expect(home.kind == "data")
        #expect(home.cache == Manifest.CacheHint(maxAge: 300, staleWhileRevalidate: 600, staleIfError: 86_400))
        let value = try object(root, m, "app/home.plist")
        #expect(value["title"] == .string("Sonnets"))
        #expect(value["updatedAt"] == .date(Date(timeIntervalSince1970: 1_795_597_200)))
        #expect(value["sections"]?.arrayValue?.first?["sonnets"] == .array([.int(18), .int(116), .int(130)]))

        let article = try object(root, m, "articles/welcome.plist")
        #expect(m.entry("articles/welcome.plist")?.kind == "document")
        #expect(article["title"] == .string("Welcome to the sonnets"))
        #expect(article["body"]?.stringValue?.hasPrefix("# Welcome\n\nShakespeare's **154 sonnets**") == true)
        #expect(article["html"]?.stringValue?.contains("<strong>154 sonnets</strong>") == true)
        let index = try #require(try object(root, m, "articles/index.plist").arrayValue)
        #expect(index == [.dict([
            "path": .string("articles/welcome.plist"), "title": .string("Welcome to the sonnets"),
            "date": article["date"]!, "image": .string("images/quill.png"),
        ])])
        // The index has its rule's cache policy, with one article as with several.
        let articles = Manifest.CacheHint(maxAge: 3600, staleWhileRevalidate: 86_400, staleIfError: 0)
        #expect(m.entry("articles/index.plist")?.cache == articles)
        let content = Harness.copyContent(to: dir)
        try FileManager.default.copyItem(atPath: content + "/articles/welcome.md", toPath: content + "/articles/again.md")
        #expect(try Harness.run(build, ["--content", content, "--output", root], env: env).status == 0)
        #expect(try Harness.verifyPublished(root).entry("articles/index.plist")?.cache == articles)

        let image = try #require(m.entry("images/quill.png"))
        #expect(image.kind == "asset" && image.contentType == "image/png" && image.gzipSize == nil)
        #expect(image.objectPath == "objects/\(image.sha256).png")
        #expect(try FileIO.read(root + "/" + image.objectPath) == FileIO.read(Harness.repoRoot + "/content/images/quill.png"))
        // Project files are not content: the schemas, folio.toml and the ignored READMEs.
        #expect(m.entries.allSatisfy { !$0.path.hasPrefix("schemas/") && !$0.path.hasSuffix("README.md") && $0.path != "folio.toml" })
    }

    @Test("every structured format compiles to the value its source holds")
    func formats() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Self.content(dir, [
            "a/j.json": #"{"i": 9007199254740993, "r": 1.0, "u": 18446744073709551615, "s": "é", "l": [true, {"CF$UID": 1}]}"#,
            "a/y.yaml": "i: 0x1F\nr: 1.5e3\nd: 2024-01-02\nt: 2024-01-02T03:04:05+01:00\nb: !!binary aGk=\nw: yes\nx: &k [1, 2]\nz: *k\n",
            "a/t.toml": "i = 42\nr = 3.0\nd = 1979-05-27T07:32:00Z\n[[p]]\nn = \"x\"\n",
            "a/p.plist": #"<?xml version="1.0"?><plist version="1.0"><dict><key>k</key><integer>5</integer></dict></plist>"#,
            "a/m.md": "+++\ntitle = \"T\"\n+++\nbody *text*\n",
            "a/n.md": "no front matter\n",
        ])
        let r = try Harness.run(build, ["--content", content, "--output", dir + "/public"], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        let root = dir + "/public"
        let m = try Harness.verifyPublished(root)
        let j = try object(root, m, "a/j.plist")
        #expect(j["i"] == .int(9_007_199_254_740_993) && j["r"] == .real(1.0) && j["u"] == .uint(UInt64.max))
        #expect(j["l"] == .array([.bool(true), .dict(["CF$UID": .int(1)])]))
        let y = try object(root, m, "a/y.plist")
        #expect(y["i"] == .int(31) && y["r"] == .real(1500) && y["w"] == .string("yes"))
        #expect(y["d"] == .date(Date(timeIntervalSince1970: 1_704_153_600)))
        #expect(y["t"] == .date(Date(timeIntervalSince1970: 1_704_161_045)))
        #expect(y["b"] == .data(Data("hi".utf8)) && y["z"] == .array([.int(1), .int(2)]))
        let t = try object(root, m, "a/t.plist")
        #expect(t["i"] == .int(42) && t["r"] == .real(3) && t["p"] == .array([.dict(["n": .string("x")])]))
        #expect(t["d"] == .date(Date(timeIntervalSince1970: 296_638_320)))
        #expect(try object(root, m, "a/p.plist") == .dict(["k": .int(5)]))
        #expect(try object(root, m, "a/m.plist") == .dict(["title": .string("T"), "body": .string("body *text*\n")]))
        #expect(try object(root, m, "a/n.plist") == .dict(["body": .string("no front matter\n")]))
    }

    @Test("malformed sources: every problem at path:line:col in one run, nothing published")
    func malformed() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Self.content(dir, [
            "ok.json": "{}",
            "bad.json": "{\n  \"a\": [1, 2,]\n}\n",
            "null.json": "{\"a\": {\"b\": null}}",
            "folio.toml": "[[rules]]\nmatch = \"null.json\"\nnulls = \"error\"\n",
            "big.json": "[123456789012345678901234567890]",
            "bad.yaml": "a: [1, 2\nb: c\n",
            "docs.yaml": "a: 1\n---\nb: 2\n",
            "bad.toml": "a = 1\nb = \n",
            "bad.md": "---\ntitle: [unclosed\n---\nbody\n",
            "open.md": "---\ntitle: x\nbody never closes the fence\n",
        ])
        try Harness.run(build, ["--content", Harness.repoRoot + "/content", "--output", dir + "/public"], env: env)
        let before = Harness.snapshot(dir + "/public")
        let r = try Harness.run(build, ["--content", content, "--output", dir + "/public"], env: env)
        #expect(r.status == 1)
        for expected in [
            "bad.json:2:", "null.json:1:13: error: null at /a/b is refused by nulls = \"error\"", "big.json:1:2:", "bad.yaml:", "docs.yaml:", "bad.toml:2:", "bad.md:", "open.md:1:",
        ] {
            #expect(r.stderr.contains(content + "/" + expected) || r.stderr.contains(expected), "missing \(expected) in\n\(r.stderr)")
        }
        #expect(r.stderr.contains("error(s)"))
        #expect(Harness.snapshot(dir + "/public") == before, "a failed build must leave public/ exactly as it was")
    }

    @Test("nothing dropped in silence: collisions, case, symlinks out, oversize; hidden and ignored skipped")
    func nothingDropped() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Self.content(dir, [
            "a.json": "{}", "a.yaml": "x: 1\n", "Logo.PNG": "png", "logo.png": "png2", "big.bin": String(repeating: "x", count: 2048),
            ".hidden.json": "not json", "drafts/x.json": "not json", ".folioignore": "drafts/\n*.tmp\n", "scratch.tmp": "{",
        ])
        try FileManager.default.createSymbolicLink(atPath: content + "/escape.txt", withDestinationPath: "/etc/hostname")
        let r = try Harness.run(build, ["--content", content, "--output", dir + "/public", "--max-file-size", "1K"], env: env)
        #expect(r.status == 1)
        #expect(r.stderr.contains("a.yaml and \(content)/a.json both publish a.plist") || r.stderr.contains("a.json and \(content)/a.yaml both publish a.plist"), "\(r.stderr)")
        #expect(r.stderr.contains("differ only in case"))
        #expect(r.stderr.contains("escape.txt:1:1: error: a symbolic link to /etc/hostname, outside the content folder"))
        #expect(r.stderr.contains("big.bin:1:1: error: the file is 2048 bytes, over --max-file-size 1024"))
        #expect(!r.stderr.contains("hidden") && !r.stderr.contains("drafts") && !r.stderr.contains("scratch"))
        #expect(!FileIO.exists(dir + "/public/manifest.plist"))
    }

    @Test("a schema violation names file:line:col, the JSON pointer and the rule")
    func schemaViolation() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        try FileIO.writeAtomically(Array("title: Sonnets\nsections:\n  - title: Featured\n    style: wall\n".utf8), to: content + "/app/home.yaml")
        let r = try Harness.run(build, ["--content", content, "--output", dir + "/public"], env: env)
        #expect(r.status == 1)
        #expect(r.stderr.contains("app/home.yaml:4:12: error: /sections/0/style:"), "\(r.stderr)")
        #expect(r.stderr.contains("home.schema.json, enum]"), "\(r.stderr)")
    }

    @Test("a null where a schema forbids it is an error at its line:col; [\"string\", \"null\"] accepts one")
    func schemaNulls() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let schema = #"{"properties": {"name": {"type": "string"}, "middle": {"type": ["string", "null"]}, "age": {"type": "null"}}}"#
        let content = Self.content(dir, [
            "folio.toml": "[[rules]]\nmatch = \"people/*\"\nschema = \"people.schema.json\"\n",
            "people.schema.json": schema,
            "people/ada.yaml": "name: Ada\nmiddle:\nage: ~\n",
            "people/bob.json": "{\"name\": null,\n \"middle\": null, \"age\": 3}",
        ])
        let r = try Harness.run(build, ["--content", content, "--output", dir + "/public"], env: env)
        #expect(r.status == 1)
        #expect(r.stderr.contains("people/bob.json:1:10: error: /name: expected a string, found null [schema"), "\(r.stderr)")
        #expect(r.stderr.contains("people/bob.json:2:25: error: /age: expected null, found an integer (3) [schema"), "\(r.stderr)")
        #expect(!r.stderr.contains("ada.yaml") && !r.stderr.contains("/middle"), "\(r.stderr)")
    }

    @Test("a bad project file is reported at folio.toml:line:col")
    func badProjectFile() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Self.content(dir, [
            "folio.toml": "[[rules]]\nmatch = \"a/**\"\ncache = { maxAge = -1 }\n\n[[rules]]\nmatch = \"[x\"\n\n[[rules]]\nmatch = \"b/**\"\nnulls = \"drop\"\n",
            "a/x.json": "{}",
        ])
        let r = try Harness.run(build, ["--content", content, "--output", dir + "/public"], env: env)
        #expect(r.status == 1)
        #expect(r.stderr.contains("folio.toml:3:"), "\(r.stderr)")
        #expect(r.stderr.contains("maxAge must be a whole number of seconds"))
        #expect(r.stderr.contains("folio.toml:6:"), "\(r.stderr)")
        #expect(r.stderr.contains("an unclosed '['"))
        #expect(r.stderr.contains("folio.toml:10:1: error: nulls must be \"keep\" (publish null as \"$null\"), \"omit\" (leave the key out) or \"error\", not \"drop\""), "\(r.stderr)")
    }

    @Test("a rebuild reuses every untouched file and recompiles an edited one")
    func incremental() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        let args = ["--content", content, "--output", dir + "/public"]
        #expect(try Harness.run(build, args, env: env).status == 0)
        // A stamp is trusted only when the file was written well before the walk that recorded it.
        Thread.sleep(forTimeInterval: 0.2)
        let again = try Harness.run(build, args, env: env)
        #expect(again.stdout.contains("up to date at version 1"), "\(again.stdout)")
        #expect(again.stdout.contains("0 objects written"))
        // A touched project file means every rule may differ: the full build runs, reusing files.
        try FileIO.writeAtomically(try FileIO.read(content + "/folio.toml") + Array("\n".utf8), to: content + "/folio.toml")
        let touched = try Harness.run(build, args, env: env)
        #expect(touched.stdout.contains("up to date at version 1") && !touched.stdout.contains("skipped"), "\(touched.stdout)")
        try FileIO.writeAtomically(Array("{\"title\": \"Edited\", \"sections\": [{\"title\": \"x\", \"style\": \"list\"}]}".utf8), to: content + "/app/home.json")
        try FileManager.default.removeItem(atPath: content + "/app/home.yaml")
        let edited = try Harness.run(build, args, env: env)
        #expect(edited.stdout.contains("published version 2 (was 1): 0 added, 1 changed, 0 removed"), "\(edited.stdout)\(edited.stderr)")
        let m = try Harness.verifyPublished(dir + "/public")
        #expect(try object(dir + "/public", m, "app/home.plist")["title"] == .string("Edited"))
    }

    @Test("a no-op rebuild stops after the walk; its warnings are shown again; a missing object is repaired")
    func upToDate() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        // Without folio.toml's [catalogs.partial], the coverage warnings of the shipped catalogs.
        let project = try String(contentsOfFile: content + "/folio.toml", encoding: .utf8)
        let undeclared = try #require(project.components(separatedBy: "[catalogs.partial]").first)
        try Data(undeclared.utf8).write(to: URL(fileURLWithPath: content + "/folio.toml"))
        let args = ["--content", content, "--output", dir + "/public"]
        // The sources' stamps are set 2 s ahead: the first walk sees them as too recent to trust
        // (a file can change again within its time stamp's resolution), so the second build runs
        // even when a loaded machine starts the first one late; the second walk, after them, trusts them.
        let written = Date().addingTimeInterval(2)
        for case let path as String in FileManager.default.enumerator(atPath: content)! {
            try FileManager.default.setAttributes([.modificationDate: written], ofItemAtPath: content + "/" + path)
        }
        let first = try Harness.run(build, args, env: env)
        #expect(first.status == 0, "\(first.stderr)")
        Thread.sleep(until: written.addingTimeInterval(0.3))
        let second = try Harness.run(build, args, env: env)
        #expect(second.stdout.contains("up to date at version 1") && !second.stdout.contains("skipped"), "\(second.stdout)")
        let again = try Harness.run(build, args, env: env)
        #expect(again.stdout.contains("[2/5] parse (skipped: no source or setting changed)"), "\(again.stdout)")
        #expect(again.stdout.contains("up to date at version 1"))
        // The catalogs' warnings come back, and under --strict they fail the build as before.
        #expect(again.stderr.contains("warning: pt-BR/Localizable: 28 of 29 keys translated"), "\(again.stderr)")
        let strict = try Harness.run(build, args + ["--strict"], env: env)
        #expect(strict.status == 1 && strict.stderr.contains("[warning; an error with --strict]"), "\(strict.stderr)")
        // An object deleted behind the builder's back: the directory changed, so the build runs and repairs it.
        let m = try Harness.verifyPublished(dir + "/public")
        let entry = try #require(m.entry("app/home.plist"))
        try FileManager.default.removeItem(atPath: dir + "/public/" + entry.objectPath)
        let repaired = try Harness.run(build, args, env: env)
        #expect(repaired.status == 0 && !repaired.stdout.contains("skipped"), "\(repaired.stdout)")
        _ = try Harness.verifyPublished(dir + "/public")
    }

    @Test("HTML is GitHub-flavoured CommonMark: tables, strikethrough, task lists; raw HTML left out")
    func htmlRendering() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Self.content(dir, [
            "folio.toml": "[[rules]]\nmatch = \"*.md\"\nhtml = true\n",
            "a.md": "| a | b |\n|---|---|\n| 1 | ~~2~~ |\n\n- [x] done\n\n<script>alert(1)</script>\n",
        ])
        let r = try Harness.run(build, ["--content", content, "--output", dir + "/public"], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        let html = try #require(try object(dir + "/public", try Harness.verifyPublished(dir + "/public"), "a.plist")["html"]?.stringValue)
        #expect(html.contains("<table>") && html.contains("<td><del>2</del></td>"), "\(html)")
        #expect(html.contains("type=\"checkbox\""), "\(html)")
        #expect(!html.contains("<script>") && html.contains("raw HTML omitted"), "\(html)")
    }

    @Test("the seed carries only the entries --seed-include names")
    func seedInclude() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let args = ["--content", Harness.repoRoot + "/content", "--output", dir + "/public", "--seed", dir + "/seed", "--seed-include", "sonnets/**", "--seed-include", "app/*"]
        let r = try Harness.run(build, args, env: env)
        #expect(r.status == 0, "\(r.stderr)")
        let seed = try SeedArchive.decode(try FileIO.read(dir + "/seed"))
        let m = try Manifest(bytes: seed.manifestBytes)
        #expect(seed.objects[try #require(m.entry("app/home.plist")).sha256] != nil)
        #expect(seed.objects[try #require(m.entry("images/quill.png")).sha256] == nil)
        #expect(seed.objects[try #require(m.entry("sonnets/018.plist")).sha256] != nil)
    }
}
