import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// Codable structs with optionals, as an app declares them, over the real files' published objects.
enum RealNullModels {
    struct Trigger: Decodable, Equatable { var branches: [String]? }
    struct Step: Decodable, Equatable {
        var name: String?
        var uses: String?
        var with: [String: String?]?
    }
    struct Job: Decodable, Equatable { var steps: [Step]? }
    /// A workflow's name and triggers (`on` as a mapping; it may also be a list).
    struct Workflow: Decodable, Equatable {
        var name: String
        var on: [String: Trigger?]
    }
    /// A workflow's jobs.
    struct Jobs: Decodable, Equatable { var jobs: [String: Job] }
    struct Service: Decodable, Equatable {
        var image: String?
        var ports: [String]?
    }
    struct Options: Decodable, Equatable { var driver: String? }
    struct Compose: Decodable, Equatable {
        var services: [String: Service]
        var networks: [String: Options?]
        var volumes: [String: Options?]
    }
    struct License: Decodable, Equatable { var key: String }
    struct Repository: Decodable, Equatable {
        var name: String
        var description: String?
        var homepage: String?
        var language: String?
        var license: License?
        var mirrorURL: String?
        var stargazers: Int

        enum CodingKeys: String, CodingKey {
            case name, description, homepage, language, license
            case mirrorURL = "mirror_url"
            case stargazers = "stargazers_count"
        }
    }
    struct Exchange: Decodable, Equatable {
        var status: Int
        var response: Repository
    }
}

extension RealNullTests {
    /// `T` decoded from the object at `path` by FolioKit (FolioPlist's decoder) and by Foundation's
    /// `PropertyListDecoder` from the same published bytes; the two must agree.
    static func decodeBoth<T: Decodable & Equatable>(_ type: T.Type, _ path: String, _ store: FolioStore, _ root: String) throws -> T {
        let kit = try store.decode(type, at: path)
        let entry = try #require(try Harness.verifyPublished(root).entry(path))
        let foundation = try PropertyListDecoder().decode(type, from: Data(try FileIO.read(root + "/" + entry.objectPath)))
        #expect(kit == foundation, "\(path): FolioKit and Foundation differ")
        return kit
    }

    @Test("Codable structs with optionals decode the real files through FolioKit and Foundation: nulls are nil")
    func decodesReal() async throws {
        typealias M = RealNullModels
        let dir = Harness.tempDir("real-nulls-decode")
        defer { Harness.cleanup(dir) }
        let root = dir + "/public"
        try #require(try Self.publish(Self.fixture, root).status == 0)
        let edge = try EdgeProcess.start(root: root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: dir + "/cache")
        _ = try await store.sync()

        let hugo = try Self.decodeBoth(M.Workflow.self, "workflows/hugo.plist", store, root)
        #expect(hugo.on.keys.sorted() == ["push", "workflow_dispatch"])
        #expect(hugo.on["workflow_dispatch"] == .some(nil) && hugo.on["push"] == M.Trigger(branches: ["$default-branch"]))
        let call = try Self.decodeBoth(M.Workflow.self, "workflows/swift_6_language_mode.plist", store, root)
        #expect(call.on == ["workflow_call": nil] && call.on.count == 1)
        let scan = try Self.decodeBoth(M.Jobs.self, "workflows/zscaler-iac-scan.plist", store, root)
        let with = try #require(scan.jobs["zscaler-iac-scan"]?.steps?[1].with)
        #expect(with["region"] == "US" && with.keys.count == 7)
        for key in ["iac_dir", "iac_file", "output_format", "fail_build"] { #expect(with[key] == .some(nil), "\(key)") }

        let compose = try Self.decodeBoth(M.Compose.self, "compose/react-express-mysql.plist", store, root)
        #expect(compose.networks == ["public": nil, "private": nil] && compose.volumes == ["back-notused": nil, "db-data": nil])
        #expect(compose.services["backend"]?.ports == ["80:80", "9229:9229", "9230:9230"], "YAML 1.2: a port pair is a string")

        let exchanges = try Self.decodeBoth([M.Exchange].self, "api/get-repository.plist", store, root)
        let repo = try #require(exchanges.first?.response)
        #expect(exchanges.first?.status == 200 && repo.name == "hello-world" && repo.stargazers == 42)
        #expect(repo.description == nil && repo.homepage == nil && repo.language == nil && repo.license == nil && repo.mirrorURL == nil)
    }
}
