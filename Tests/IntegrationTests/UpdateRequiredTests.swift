import FolioKit
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// `folio-build --minimum-app-version` and the project file's `minimumAppVersion`: an older app
/// keeps the version it has and is told to update; an entry for newer apps is refused to older
/// ones while the rest reads.
@Suite("required app updates")
struct UpdateRequiredTests {
    @Test("a version for newer apps is not taken: exit 5, the cache keeps its version; a new enough app takes it")
    func wholeVersion() throws {
        let root = try ClientRoot.make("update-required")
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        #expect(try ClientTest.folio(["sync", "--app-version", "3.1"], cache: cache, edge: edge.baseURL).status == 0)

        let bad = try Harness.run(
            Harness.binary("folio-build"), ["--content", root.content, "--output", root.root, "--minimum-app-version", "3.2-beta"],
            env: ClientTest.buildEnv)
        #expect(bad.status != 0 && bad.stderr.contains("'3.2-beta' is not an app version"), "\(bad.stderr)")
        try root.replace(in: 18, "summer’s day", with: "newer day")
        try root.publish(["--minimum-app-version", "3.2"])
        #expect(try root.manifest().minimumAppVersion == "3.2")
        try edge.requireVersion(2)

        let old = try ClientTest.folio(["sync", "--force", "--app-version", "3.1"], cache: cache, edge: edge.baseURL)
        #expect(old.status == 5, "\(old.stderr)")
        #expect(old.stderr.contains("needs app version 3.2 or later (this is 3.1); the cache keeps version 1"), "\(old.stderr)")
        let status = try ClientTest.json(ClientTest.folio(["status", "--json"], cache: cache, edge: edge.baseURL))
        #expect(status["version"]?.intValue == 1 && status["lastResult"]?.stringValue == "updateRequired")
        let read = try ClientTest.folio(["read", "sonnet", "18", "--offline", "--app-version", "3.1"], cache: cache, edge: edge.baseURL)
        #expect(read.status == 0 && read.stdout.contains("summer’s day"))

        // FOLIO_APP_VERSION says the same; 3.2.0 is 3.2.
        let env = try ClientTest.folio(["sync", "--force"], cache: cache, edge: edge.baseURL, env: ["FOLIO_APP_VERSION": "3.1.9"])
        #expect(env.status == 5)
        let new = try ClientSyncSummary(ClientTest.folio(["sync", "--force", "--json", "--app-version", "3.2.0"], cache: cache, edge: edge.baseURL))
        #expect(new.result == "updated" && new.versionAfter == 2)
        let now = try ClientTest.json(ClientTest.folio(["status", "--json"], cache: cache, edge: edge.baseURL))
        #expect(now["minimumAppVersion"]?.stringValue == "3.2")
        let wrong = try ClientTest.folio(["status", "--app-version", "three"], cache: cache, edge: edge.baseURL)
        #expect(wrong.status != 0 && wrong.stderr.contains("'three' is not an app version"), "\(wrong.stderr)")
    }

    @Test("an entry for newer apps: older apps read everything else; FolioKit says which version it needs")
    func perEntry() async throws {
        let root = try ClientRoot.make("update-required-entry") { r in
            let toml = r.content + "/folio.toml"
            let rule = "\n[[rules]]\nmatch = \"sonnets/018.*\"\nminimumAppVersion = \"4.0\"\n"
            try FileIO.writeAtomically(try FileIO.read(toml) + Array(rule.utf8), to: toml)
        }
        defer { root.cleanup() }
        #expect(try root.manifest().entry("sonnets/018.plist")?.minimumAppVersion == "4.0")
        #expect(try root.manifest().entry("sonnets/017.plist")?.minimumAppVersion == nil)
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        let old = FolioHTTPConfiguration(context: FolioClientContext(appVersion: "3.5", platform: "linux"))
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: cache, http: old)
        #expect(try await store.sync().result == .updated)
        #expect(try store.entry(at: "sonnets/018.plist").minimumAppVersion == "4.0")
        #expect(try store.plist(at: "sonnets/017.plist")["number"]?.intValue == 17)
        do {
            _ = try store.plist(at: "sonnets/018.plist")
            Issue.record("an entry for app 4.0 was read by app 3.5")
        } catch {
            #expect(error.code == .updateRequired && error.requiredAppVersion == "4.0" && error.hasContent)
        }
        let newer = try FolioStore(edge: edge.baseURL, cacheDirectory: cache, http: FolioHTTPConfiguration(context: FolioClientContext(appVersion: "4")))
        #expect(try newer.plist(at: "sonnets/018.plist")["number"]?.intValue == 18)
        let cli = try ClientTest.folio(["read", "sonnet", "18", "--offline", "--app-version", "3.5"], cache: cache, edge: edge.baseURL)
        #expect(cli.status == 5 && cli.stderr.contains("needs app version 4.0"), "\(cli.stderr)")

        #expect {
            _ = try ClientRoot.make("update-required-bad") { r in
                let toml = r.content + "/folio.toml"
                try FileIO.writeAtomically(try FileIO.read(toml) + Array("\n[[rules]]\nmatch = \"x\"\nminimumAppVersion = 4\n".utf8), to: toml)
            }
        } throws: { error in
            "\(error)".contains("minimumAppVersion must be a string like \"3.2\"")
        }
    }
}
