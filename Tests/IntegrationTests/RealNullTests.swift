import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// Real files with nulls that nobody here wrote (Tests/Fixtures/RealNulls, see its SOURCE.md:
/// GitHub Actions workflows, docker compose files, GitHub REST API responses), published by the
/// real folio-build with no edit: read back by `folio show --json` and FolioKit and compared with
/// Python's `json` and PyYAML, decoded into Codable structs, and built under `nulls = "omit"` and
/// `"error"`.
@Suite("real files with nulls: published with no edit, read back, decoded", .serialized)
struct RealNullTests {
    static let fixture = Harness.repoRoot + "/Tests/Fixtures/RealNulls/content"
    static let comparer = Harness.repoRoot + "/Tests/IntegrationTests/compare_content.py"
    static let build = Harness.binary("folio-build")
    static let env = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]
    /// The fixture's nulls (32, counted with Python) and its structured files.
    static let nullCount = 32
    static let paths = [
        "api/get-repository.plist", "api/search-issues.plist", "compose/nextcloud-redis-mariadb.plist", "compose/react-express-mysql.plist",
        "workflows/hugo.plist", "workflows/swift_6_language_mode.plist", "workflows/terraform.plist", "workflows/zscaler-iac-scan.plist",
    ]

    /// A copy of the fixture under `dir`, with `project` as its folio.toml.
    static func content(_ dir: String, project: String? = nil) throws -> String {
        let content = dir + "/content"
        try FileManager.default.copyItem(atPath: fixture, toPath: content)
        if let project { try FileIO.writeAtomically(Array(project.utf8), to: content + "/folio.toml", sync: false) }
        return content
    }

    static func publish(_ content: String, _ root: String) throws -> Harness.Output {
        try Harness.run(build, ["-q", "--content", content, "--output", root], env: env)
    }

    /// Every property-list entry of a published directory, decoded from its object.
    static func objects(_ root: String) throws -> [String: PlistValue] {
        let m = try Harness.verifyPublished(root)
        var out: [String: PlistValue] = [:]
        for e in m.entries where e.path.hasSuffix(".plist") {
            out[e.path] = try BinaryPlist.decode(try FileIO.read(root + "/" + e.objectPath))
        }
        return out
    }

    /// How many values of `v` are `"$null"`.
    static func nulls(_ v: PlistValue) -> Int {
        switch v {
        case .array(let a), .set(let a): a.map(nulls).reduce(0, +)
        case .dict(let d): d.values.map(nulls).reduce(0, +)
        default: v.isNull ? 1 : 0
        }
    }

    /// `v` without the keys whose value is `"$null"`, at any depth.
    static func droppingNullKeys(_ v: PlistValue) -> PlistValue {
        switch v {
        case .array(let a): .array(a.map(droppingNullKeys))
        case .dict(let d): .dict(d.filter { !$0.value.isNull }.mapValues(droppingNullKeys))
        default: v
        }
    }

    /// Runs the comparer on `published` (logical path → JSON text, as `folio show --json` prints it).
    static func compareWithPython(_ published: [String: [UInt8]], _ dir: String) throws -> String {
        var json: [UInt8] = Array("{".utf8)
        for (i, path) in published.keys.sorted().enumerated() {
            if i > 0 { json += Array(",\n".utf8) }
            JSONPlist.writeString(path, into: &json)
            json += Array(": ".utf8) + published[path]!
        }
        json += Array("}\n".utf8)
        try FileIO.writeAtomically(json, to: dir + "/published.json", sync: false)
        let out = try Harness.run("/usr/bin/env", ["python3", comparer, fixture, dir + "/published.json"])
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        return out.stdout.split(separator: "\n").last.map(String.init) ?? ""
    }

    @Test("the comparer's self-test: YAML 1.2 keys and ports, and a null told from \"$null\" and from a missing key")
    func comparerSelfTest() throws {
        let out = try Harness.run("/usr/bin/env", ["python3", Self.comparer, "--selftest", Self.fixture])
        #expect(out.status == 0 && out.stdout.hasSuffix("selftest: passed\n"), "\(out.stdout)\(out.stderr)")
        for check in ["nulls as null", "YAML 1.2 core", "content: null -> \"$null\" caught", "content: null key dropped caught"] {
            #expect(out.stdout.contains("selftest ok   \(check)"), "\(check) in\n\(out.stdout)")
        }
    }

    @Test("published with no edit; folio show --json and FolioKit print null where Python reads None, key by key")
    func readBack() async throws {
        let dir = Harness.tempDir("real-nulls")
        defer { Harness.cleanup(dir) }
        let root = dir + "/public"
        let built = try Self.publish(Self.fixture, root)
        try #require(built.status == 0, "\(built.stderr)")
        let objects = try Self.objects(root)
        #expect(objects.keys.sorted() == Self.paths)
        #expect(objects.values.map(Self.nulls).reduce(0, +) == Self.nullCount)
        let edge = try EdgeProcess.start(root: root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: dir + "/cache")
        _ = try await store.sync()
        var shown: [String: [UInt8]] = [:]
        for path in Self.paths {
            let show = try ClientTest.folio(["show", path, "--json", "--offline"], cache: dir + "/cache", edge: edge.baseURL)
            #expect(show.status == 0, "\(show.stderr)")
            shown[path] = show.stdoutBytes
            // FolioKit reads the same value that folio prints.
            #expect(try JSONPlist.encode(store.plist(at: path), nulls: true) == show.stdoutBytes, "\(path)")
        }
        #expect(String(decoding: shown["workflows/hugo.plist"] ?? [], as: UTF8.self).contains("\"workflow_dispatch\": null"))
        #expect(!shown.values.contains { String(decoding: $0, as: UTF8.self).contains("$null") })
        #expect(try Self.compareWithPython(shown, dir) == "compared 8 entries, 0 mismatches")
    }
}
