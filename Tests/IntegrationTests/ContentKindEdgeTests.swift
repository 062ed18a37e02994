import FolioKit
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// Every kind through the edge, a cache tier in front of it, and FolioKit's freshness.
@Suite("content kinds: edge, tier and freshness", .serialized)
struct ContentKindEdgeTests {
    /// The example content published into a temp dir; `body` gets the root and its manifest.
    func withPublished(_ body: (String, Manifest) async throws -> Void) async throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let r = try Harness.run(
            Harness.binary("folio-build"), ["-q", "--content", Harness.repoRoot + "/content", "--output", dir + "/public"],
            env: ["SOURCE_DATE_EPOCH": "1700000000"])
        try #require(r.status == 0, "\(r.stderr)")
        try await body(dir + "/public", try Harness.verifyPublished(dir + "/public"))
    }

    @Test("each entry's cache policy is its /content/ Cache-Control; assets keep their type, with Range")
    func edgeServesKinds() async throws {
        try await withPublished { root, m in
            let edge = try EdgeProcess.start(root: root)
            defer { edge.stop() }
            let home = try RawHTTPConnection.fetch(port: edge.port, "/content/app/home.plist")
            #expect(home.status == 200)
            #expect(home.header("Cache-Control") == "public, max-age=300, stale-while-revalidate=600, stale-if-error=86400")
            let sonnet = try RawHTTPConnection.fetch(port: edge.port, "/content/sonnets/018.plist")
            #expect(sonnet.header("Cache-Control") == m.cacheHint("manifest").cacheControl, "no rule: the manifest's hint")
            let image = try #require(m.entry("images/quill.png"))
            let bytes = try FileIO.read(Harness.repoRoot + "/content/images/quill.png")
            let whole = try RawHTTPConnection.fetch(port: edge.port, "/content/images/quill.png", headers: [("Accept-Encoding", "gzip")])
            #expect(whole.status == 200 && whole.body == bytes && whole.header("Content-Encoding") == nil)
            #expect(whole.header("Content-Type") == "image/png")
            #expect(whole.header("Cache-Control") == "public, max-age=604800, stale-while-revalidate=86400")
            let part = try RawHTTPConnection.fetch(port: edge.port, "/content/images/quill.png", headers: [("Range", "bytes=0-7")])
            #expect(part.status == 206 && part.body == Array(bytes[0..<8]))
            #expect(part.header("Content-Range") == "bytes 0-7/\(bytes.count)")
            let object = try RawHTTPConnection.fetch(port: edge.port, "/" + image.objectPath)
            #expect(object.status == 200 && object.body == bytes && object.header("Content-Type") == "image/png")
            #expect(object.header("Cache-Control")?.contains("immutable") == true)
        }
    }

    @Test("a cache tier stores assets and documents like any object, and a sync through it verifies")
    func tierServesKinds() async throws {
        try await withPublished { root, m in
            let origin = try EdgeProcess.start(root: root)
            defer { origin.stop() }
            let cacheDir = Harness.tempDir("tier")
            defer { Harness.cleanup(cacheDir) }
            let tier = try EdgeProcess.start(root: root, args: ["--origin", origin.baseURL, "--cache-dir", cacheDir])
            defer { tier.stop() }
            let image = try #require(m.entry("images/quill.png"))
            let first = try RawHTTPConnection.fetch(port: tier.port, "/" + image.objectPath)
            let second = try RawHTTPConnection.fetch(port: tier.port, "/" + image.objectPath)
            #expect(first.status == 200 && second.body == first.body && first.header("Content-Type") == "image/png")
            #expect(second.header("Cache-Status") == "folio-edge; hit", "\(second.headers)")
            let cache = Harness.tempDir("kit")
            defer { Harness.cleanup(cache) }
            let store = try FolioStore(edge: tier.baseURL, cacheDirectory: cache)
            _ = try await store.sync()
            #expect(try store.data(at: "images/quill.png") == Data(try FileIO.read(Harness.repoRoot + "/content/images/quill.png")))
            #expect(try store.plist(at: "articles/welcome.plist")["title"] == .string("Welcome to the sonnets"))
        }
    }

    @Test("an entry's shorter max-age makes FolioKit revalidate sooner than the manifest's")
    func entryFreshness() async throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = ContentKindBuildTests.content(dir, [
            "news/today.json": "{\"headline\": \"a\"}", "legal/terms.md": "# Terms\n",
            "folio.toml": "[[rules]]\nmatch = \"news/**\"\ncache = { maxAge = 1 }\n\n[[rules]]\nmatch = \"legal/**\"\ncache = { maxAge = 31536000 }\n",
        ])
        let build = try Harness.run(Harness.binary("folio-build"), ["-q", "--content", content, "--output", dir + "/public"])
        try #require(build.status == 0, "\(build.stderr)")
        let edge = try EdgeProcess.start(root: dir + "/public")
        defer { edge.stop() }
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: dir + "/cache")
        #expect(try await store.sync().result == .updated)
        try await Task.sleep(for: .milliseconds(1200))
        // The manifest's own max-age (60 s) has not passed; the news entry's (1 s) has.
        let again = try await store.sync()
        #expect(again.result != .fresh, "\(again.message)")
        #expect(again.requests >= 1)
    }
}
