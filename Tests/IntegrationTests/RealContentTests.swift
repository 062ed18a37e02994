import FolioKit
import FolioTestSupport
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Testing

/// Data sets nobody here wrote (RealContent/, see its SOURCES.md) and the example content:
/// built, served, synced with FolioKit and read back, every structured value compared with
/// what Python's own readers (json, tomllib, PyYAML, plistlib) make of the source.
@Suite("content kinds: real data read back", .serialized)
struct RealContentTests {
    static let realContent = Harness.repoRoot + "/Tests/IntegrationTests/RealContent"
    static let comparer = Harness.repoRoot + "/Tests/IntegrationTests/compare_content.py"

    /// Builds `content`, serves it, syncs a FolioKit store and returns every plist entry's
    /// value in FolioPlist's JSON form, keyed by logical path, and the store.
    func readBack(_ content: String, _ dir: String) async throws -> (values: [String: PlistValue], store: FolioStore, edge: EdgeProcess) {
        let r = try Harness.run(Harness.binary("folio-build"), ["-q", "--content", content, "--output", dir + "/public"], env: ["SOURCE_DATE_EPOCH": "1700000000"])
        try #require(r.status == 0, "\(r.stderr)")
        let edge = try EdgeProcess.start(root: dir + "/public")
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: dir + "/cache")
        _ = try await store.sync()
        var values: [String: PlistValue] = [:]
        for path in try store.paths() {
            guard let value = try? store.plist(at: path) else { continue }
            values[path] = value
        }
        return (values, store, edge)
    }

    /// Runs the comparer; returns its last line.
    func compare(_ content: String, _ values: [String: PlistValue], _ dir: String) throws -> String {
        let file = dir + "/published.json"
        try FileIO.writeAtomically(try JSONPlist.encode(.dict(values), nulls: true), to: file, sync: false)
        let out = try Harness.run("/usr/bin/env", ["python3", Self.comparer, content, file])
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        return out.stdout.split(separator: "\n").last.map(String.init) ?? ""
    }

    @Test("real JSON, YAML, TOML and Markdown read back equal to Python's reading, through FolioKit and folio")
    func realDataSets() async throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let (values, store, edge) = try await readBack(Self.realContent, dir)
        defer { edge.stop() }
        let last = try compare(Self.realContent, values, dir)
        let compared = Int(last.split(separator: " ").dropFirst().first ?? "") ?? 0
        #expect(compared >= 10 && last.hasSuffix(" 0 mismatches"), "\(last)")
        // The command-line client prints the same values.
        for path in values.keys.sorted().prefix(5) {
            let out = try Harness.run(
                Harness.binary("folio"), ["--edge", edge.baseURL, "--cache-dir", dir + "/cache", "show", path, "--json", "--offline"])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(try out.stdoutBytes == JSONPlist.encode(values[path]!, nulls: true), "\(path)")
        }
        #expect(try store.paths().contains { $0.hasSuffix(".plist") })
    }

    @Test("the example content reads back equal to Python's reading of its sources")
    func exampleContent() async throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.repoRoot + "/content"
        let (values, store, edge) = try await readBack(content, dir)
        defer { edge.stop() }
        // Only data and documents have a source Python reads; sonnets, catalogs and indexes are compiled.
        let entries = try store.entries()
        let structured = Set(entries.filter { $0.kind == "data" || $0.kind == "document" }.map(\.path))
        #expect(structured == ["app/home.plist", "articles/welcome.plist"])
        var byPython = values.filter { structured.contains($0.key) }
        // html is rendered by the builder, not in the source.
        byPython["articles/welcome.plist"] = byPython["articles/welcome.plist"].map { v in
            guard case .dict(var d) = v else { return v }
            d["html"] = nil
            return .dict(d)
        }
        let probe = dir + "/probe"
        try FileIO.makeDirectory(probe + "/app")
        try FileIO.makeDirectory(probe + "/articles")
        for file in ["app/home.yaml", "articles/welcome.md"] {
            try FileIO.writeAtomically(try FileIO.read(content + "/" + file), to: probe + "/" + file, sync: false)
        }
        #expect(try compare(probe, byPython, dir) == "compared 2 entries, 0 mismatches")
        let image = try #require(entries.first { $0.path == "images/quill.png" })
        #expect(try store.data(at: image.path) == Data(try FileIO.read(content + "/images/quill.png")))
    }
}
