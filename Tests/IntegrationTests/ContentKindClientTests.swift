import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// A small content dir of every kind (JSON, YAML, Markdown with front matter, a PNG with a cache
/// rule) published by the real folio-build, and the real edge serving it.
private struct KindFixture {
    let dir: String
    var content: String { dir + "/content" }
    var root: String { dir + "/public" }

    static let siteJSON = #"{"title": "Folio", "version": 3, "features": ["ls", "get"], "nested": {"enabled": true, "ratio": 0.5}}"#
    static let peopleYAML = "name: Ada Lovelace\nborn: 1815\nlanguages:\n  - English\n  - French\nactive: true\n"
    static let introMarkdown = "---\ntitle: Introduction\nauthor: Ada\ntags: [intro, welcome]\n---\n# Hello\n\nThis is the *intro*.\n"
    static let projectFile = "[[rules]]\nmatch = \"images/*\"\ncache = { maxAge = 3600, staleWhileRevalidate = 60, immutable = true }\n"
    /// A 1×1 PNG.
    static let png: [UInt8] = Array(
        Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")!)

    static func make(_ label: String) throws -> KindFixture {
        let f = KindFixture(dir: Harness.tempDir(label))
        do {
            for sub in ["config", "articles", "images"] { try FileIO.makeDirectory(f.content + "/" + sub) }
            try f.write("config/site.json", siteJSON)
            try f.write("config/people.yaml", peopleYAML)
            try f.write("articles/intro.md", introMarkdown)
            try f.write("folio.toml", projectFile)
            try FileIO.writeAtomically(png, to: f.content + "/images/hero.png")
            try f.publish()
        } catch {
            f.cleanup()
            throw error
        }
        return f
    }

    func write(_ path: String, _ text: String) throws {
        try FileIO.writeAtomically(Array(text.utf8), to: content + "/" + path)
    }

    func publish() throws {
        let out = try Harness.run(
            Harness.binary("folio-build"), ["--content", content, "--output", root, "--quiet"], env: ClientTest.buildEnv)
        guard out.status == 0 else { throw HarnessError("folio-build failed (\(out.status)): \(out.stderr)") }
    }

    func cleanup() { Harness.cleanup(dir) }
}

/// Runs `body` with the fixture published, an edge serving it, and a synced cache.
private func withSyncedFixture(_ label: String, _ body: (KindFixture, String, String) throws -> Void) throws {
    let f = try KindFixture.make(label)
    defer { f.cleanup() }
    let edge = try EdgeProcess.start(root: f.root, args: ClientTest.edgeArgs)
    defer { edge.stop() }
    let cache = f.dir + "/cache"
    let sync = try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL)
    guard sync.status == 0 else { throw HarnessError("folio sync failed (\(sync.status)): \(sync.stderr)") }
    try body(f, cache, edge.baseURL)
}

@Suite("folio ls, show, get and diff over every content kind; FolioKit entries and assets", .serialized)
struct ContentKindClientTests {
    @Test("folio ls: kind, size, content type and path; a prefix by whole segments; --json always a JSON array")
    func ls() throws {
        try withSyncedFixture("kinds-ls") { f, cache, edge in
            let manifest = try Manifest(bytes: try FileIO.read(f.root + "/manifest.plist"))
            let all = try ClientTest.folio(["ls"], cache: cache, edge: edge)
            #expect(all.status == 0, "\(all.stderr)")
            let rows = all.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
            #expect(rows.map { $0.last ?? "" } == manifest.entries.map(\.path))
            #expect(rows.contains(["asset", String(KindFixture.png.count), "image/png", "images/hero.png"]), "\(all.stdout)")
            #expect(rows.contains { $0.first == "document" && $0.last == "articles/intro.plist" && $0[2] == "application/x-plist" })
            #expect(rows.contains { $0.first == "data" && $0.last == "config/people.plist" })

            for prefix in ["config", "config/"] {
                let out = try ClientTest.folio(["ls", prefix, "--json"], cache: cache, edge: edge)
                let list = try #require(try ClientTest.json(out).arrayValue)
                #expect(list.compactMap { $0["path"]?.stringValue } == ["config/people.plist", "config/site.plist"])
                #expect(list.allSatisfy { $0["kind"] == .string("data") && $0["contentType"] == .string("application/x-plist") })
            }
            let image = try #require(try ClientTest.json(try ClientTest.folio(["ls", "images", "--json"], cache: cache, edge: edge)).arrayValue?.first)
            #expect(image["size"] == .int(Int64(KindFixture.png.count)))
            #expect(image["sha256"] == .string(ContentHash.sha256Hex(KindFixture.png)))
            #expect(image["cache"]?["maxAge"] == .int(3600))
            // A partial segment matches nothing; --json is still a (empty) JSON array.
            let none = try ClientTest.folio(["ls", "conf", "--json"], cache: cache, edge: edge)
            #expect(none.status == 0)
            #expect(try ClientTest.json(none) == .array([]))
            let noneText = try ClientTest.folio(["ls", "conf"], cache: cache, edge: edge)
            #expect(noneText.stdout.isEmpty && noneText.stderr.contains("no entries under 'conf'"), "\(noneText.stderr)")
        }
    }

    @Test("folio show --json of JSON-, YAML- and Markdown-sourced entries gives the source's values")
    func showStructured() throws {
        try withSyncedFixture("kinds-show") { _, cache, edge in
            func show(_ path: String) throws -> PlistValue {
                try ClientTest.json(try ClientTest.folio(["show", path, "--json"], cache: cache, edge: edge))
            }
            let site = try show("config/site.plist")
            #expect(site == (try JSONPlist.decode(Array(KindFixture.siteJSON.utf8))))
            let people = try show("config/people.plist")
            #expect(people["name"] == .string("Ada Lovelace"))
            #expect(people["born"] == .int(1815))
            #expect(people["languages"] == .array([.string("English"), .string("French")]))
            #expect(people["active"] == .bool(true))
            let intro = try show("articles/intro.plist")
            #expect(intro["title"] == .string("Introduction"))
            #expect(intro["author"] == .string("Ada"))
            #expect(intro["tags"] == .array([.string("intro"), .string("welcome")]))
            #expect(intro["body"]?.stringValue?.contains("This is the *intro*.") == true)
            let text = try ClientTest.folio(["show", "config/site.plist"], cache: cache, edge: edge)
            #expect(text.status == 0 && text.stdout.contains("\"title\" => \"Folio\""), "\(text.stdout)")
        }
    }

    @Test("folio show of an asset prints its metadata (text and --json) instead of decoding it")
    func showAsset() throws {
        try withSyncedFixture("kinds-show-asset") { _, cache, edge in
            let sha = ContentHash.sha256Hex(KindFixture.png)
            let text = try ClientTest.folio(["show", "images/hero.png"], cache: cache, edge: edge)
            #expect(text.status == 0, "\(text.stderr)")
            for line in [
                "path:         images/hero.png", "kind:         asset", "content type: image/png",
                "size:         \(KindFixture.png.count) bytes", "sha256:       \(sha)",
                "cache:        public, max-age=3600, immutable, stale-while-revalidate=60",
            ] {
                #expect(text.stdout.contains(line + "\n"), "\(line) not in:\n\(text.stdout)")
            }
            let json = try ClientTest.json(try ClientTest.folio(["show", "images/hero.png", "--json"], cache: cache, edge: edge))
            #expect(json["path"] == .string("images/hero.png"))
            #expect(json["kind"] == .string("asset"))
            #expect(json["contentType"] == .string("image/png"))
            #expect(json["size"] == .int(Int64(KindFixture.png.count)))
            #expect(json["sha256"] == .string(sha))
            #expect(json["cache"]?["staleWhileRevalidate"] == .int(60))
            #expect(json["cache"]?["immutable"] == .bool(true))
        }
    }

    @Test("folio get writes an asset's exact bytes to stdout or, with -o, to a file; a missing path says what to do")
    func get() throws {
        try withSyncedFixture("kinds-get") { f, cache, edge in
            let out = try ClientTest.folio(["get", "images/hero.png"], cache: cache, edge: edge)
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdoutBytes == KindFixture.png)
            let file = f.dir + "/hero-copy.png"
            let written = try ClientTest.folio(["get", "images/hero.png", "-o", file], cache: cache, edge: edge)
            #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
            #expect(try FileIO.read(file) == KindFixture.png)
            // Any kind: a structured entry's bytes are its binary plist.
            let plist = try ClientTest.folio(["get", "config/site.plist"], cache: cache, edge: edge)
            #expect(try BinaryPlist.decode(plist.stdoutBytes)["title"] == .string("Folio"))
            let missing = try ClientTest.folio(["get", "images/nope.png"], cache: cache, edge: edge)
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("no entry images/nope.png") && missing.stderr.contains("folio ls"), "\(missing.stderr)")
        }
    }

    @Test("folio diff: value-level changes for a JSON entry, size and hash for an asset, in text, markdown and JSON")
    func diff() throws {
        let f = try KindFixture.make("kinds-diff")
        defer { f.cleanup() }
        let v1 = try Manifest(bytes: try FileIO.read(f.root + "/manifest.plist"))
        try f.write("config/site.json", KindFixture.siteJSON.replacingOccurrences(of: "\"version\": 3", with: "\"version\": 4"))
        let newPNG = KindFixture.png + Array("trailing".utf8)
        try FileIO.writeAtomically(newPNG, to: f.content + "/images/hero.png")
        try f.publish()
        let old = f.root + "/manifests/\(v1.version).plist"
        let new = f.root + "/manifest.plist"
        let cache = f.dir + "/cache"
        let oldSHA = ContentHash.sha256Hex(KindFixture.png)
        let newSHA = ContentHash.sha256Hex(newPNG)

        let text = try ClientTest.folio(["diff", old, new], cache: cache, edge: ClientTest.unreachableEdge)
        #expect(text.status == 1, "\(text.stderr)")
        #expect(text.stdout.contains("2 changed, 0 added, 0 removed"), "\(text.stdout)")
        #expect(text.stdout.contains("~ config/site.plist version: 3 → 4\n"), "\(text.stdout)")
        let asset = "~ images/hero.png (asset, image/png)"
        #expect(text.stdout.contains("\(asset) (size): \(KindFixture.png.count) → \(newPNG.count)\n"), "\(text.stdout)")
        #expect(text.stdout.contains("\(asset) (sha256): \"\(oldSHA)\" → \"\(newSHA)\"\n"), "\(text.stdout)")

        let md = try ClientTest.folio(["diff", old, new, "--format", "markdown"], cache: cache, edge: ClientTest.unreachableEdge)
        #expect(md.status == 1)
        #expect(md.stdout.contains("| ~ | `version` | 3 | 4 |"), "\(md.stdout)")
        #expect(md.stdout.contains("<code>images/hero.png</code> (asset, image/png)"), "\(md.stdout)")
        #expect(md.stdout.contains("| ~ | `(size)` | \(KindFixture.png.count) | \(newPNG.count) |"), "\(md.stdout)")

        let jsonOut = try ClientTest.folio(["diff", old, new, "--format", "json"], cache: cache, edge: ClientTest.unreachableEdge)
        #expect(jsonOut.status == 1)
        let changed = try #require(try DiffJSONReader.value(jsonOut)["changed"]?.arrayValue)
        let site = try #require(changed.first { $0["path"] == .string("config/site.plist") })
        let change = try #require(site["changes"]?.arrayValue?.first)
        #expect(site["changes"]?.arrayValue?.count == 1)
        #expect(change["op"] == .string("change") && change["at"] == .string("version") && change["path"] == .array([.string("version")]))
        #expect(change["old"] == .int(3) && change["new"] == .int(4))
        let hero = try #require(changed.first { $0["path"] == .string("images/hero.png") })
        #expect(hero["asset"] == .bool(true))
        let size = hero["metadata"]?.arrayValue?.first { $0["at"] == .string("size") }
        #expect(size?["old"] == .int(Int64(KindFixture.png.count)) && size?["new"] == .int(Int64(newPNG.count)), "\(hero)")
        #expect(hero["oldSHA256"] == .string(oldSHA) && hero["newSHA256"] == .string(newSHA))
    }

    @Test("FolioKit: entries(prefix:), data(at:) of an asset, decode of a YAML-sourced entry, and the asset-as-plist error")
    func folioKit() async throws {
        let f = try KindFixture.make("kinds-kit")
        defer { f.cleanup() }
        let edge = try EdgeProcess.start(root: f.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: f.dir + "/cache")
        #expect(try await store.sync().result == .updated)

        #expect(try store.entries().map(\.path) == ["articles/intro.plist", "config/people.plist", "config/site.plist", "images/hero.png"])
        #expect(try store.entries(prefix: "config").map(\.path) == ["config/people.plist", "config/site.plist"])
        #expect(try store.entries(prefix: "config/").map(\.path) == ["config/people.plist", "config/site.plist"])
        #expect(try store.entries(prefix: "conf").isEmpty)
        let hero = try #require(try store.entries(prefix: "images/hero.png").first)
        #expect(hero.kind == "asset" && hero.contentType == "image/png" && !hero.isPropertyList)
        #expect(hero.size == KindFixture.png.count && hero.sha256 == ContentHash.sha256Hex(KindFixture.png))
        #expect(hero.cachePolicy?.maxAge == 3600 && hero.cachePolicy?.immutable == true)
        #expect(try store.entry(at: "articles/intro.plist").kind == "document")

        #expect(try store.data(at: "images/hero.png") == Data(KindFixture.png))

        struct Person: Decodable, Equatable {
            var name: String
            var born: Int
            var languages: [String]
            var active: Bool
        }
        let ada = try store.decode(Person.self, at: "config/people.plist")
        #expect(ada == Person(name: "Ada Lovelace", born: 1815, languages: ["English", "French"], active: true))

        let message = "images/hero.png is an asset (image/png), not a property list; use data(at:)"
        do throws(FolioError) {
            _ = try store.plist(at: "images/hero.png")
            Issue.record("plist(at:) of an asset should throw")
        } catch {
            #expect(error.code == .invalidContent)
            #expect(error.message.hasPrefix(message), "\(error.message)")
            #expect(error.path == "images/hero.png")
        }
        do throws(FolioError) {
            _ = try store.decode(Person.self, at: "images/hero.png")
            Issue.record("decode(_:at:) of an asset should throw")
        } catch {
            #expect(error.code == .invalidContent && error.message.hasPrefix(message), "\(error.message)")
        }
    }
}
