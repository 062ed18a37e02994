import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

extension EdgeIntegration {
    /// A cache tier (`folio-edge --origin`) in front of an edge that takes push deploys.
    @Suite("folio-edge: a tier in front of a deployed edge", .serialized)
    struct EdgeTierDeployTests {
        @Test("the tier serves version 1, then version 2's manifest and objects on its first revalidation after the deploy")
        func revalidatesAfterDeploy() throws {
            // A 3 s manifest lifetime (the sync between the first fetch and the hit takes more
            // than 1 s on a loaded machine) and no stale-while-revalidate: once stale, the tier's next
            // request waits for the origin's answer.
            let s = try DeploySetup.make("tier-deploy", edgeArgs: ["--manifest-max-age", "3", "--stale-while-revalidate", "0"])
            defer { s.cleanup() }
            let tier = try EdgeProcess.start(root: s.dir, args: ["--origin", s.edge.baseURL, "--threads", "1"])
            defer { tier.stop() }
            let v1 = try FileIO.read(s.v1 + "/manifest.plist")
            let first = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            #expect(first.status == 200 && first.body == v1, "\(first.status) \(first.headers)")
            #expect(first.header("Cache-Control")?.contains("max-age=3") == true, "\(first.headers)")
            let cache = ClientCache(dir: s.dir + "/cache")
            let sync = { try ClientTest.folio(["sync", "--force", "--json"], cache: cache.dir, edge: tier.baseURL, env: ["FOLIO_SEED": ""]) }
            let one = try ClientTest.json(try sync())
            #expect(one["versionAfter"]?.intValue == 1, "\(one)")
            let hit = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            #expect(hit.body == v1 && hit.header("Cache-Status") == "folio-edge; hit", "\(hit.headers)")

            let deployed = try s.deploy()
            #expect(deployed.status == 0, "\(deployed.stderr)")
            try s.expectServesWhole(2)
            let v2 = try FileIO.read(s.src + "/manifest.plist")
            // Past the copy's max-age (its Age counts from the origin's answer).
            ClientTest.sleep(ms: 4200)
            let next = try RawHTTPConnection.fetch(port: tier.port, "/manifest.plist")
            #expect(next.status == 200 && next.body == v2, "still version 1 after max-age: \(next.headers)")
            #expect(next.header("Cache-Status")?.contains("fwd=stale") == true, "\(next.headers)")
            let manifest = try Manifest(bytes: v2)
            for entry in manifest.entries {
                let r = try RawHTTPConnection.fetch(port: tier.port, "/" + entry.objectPath)
                #expect(r.status == 200 && entry.matches(r.body), "\(entry.path): \(r.status)")
            }
            let content = try RawHTTPConnection.fetch(port: tier.port, "/content/sonnets/018.plist")
            let entry = try #require(manifest.entry("sonnets/018.plist"))
            #expect(content.status == 200 && entry.matches(content.body), "\(content.status) \(content.headers)")
            let two = try ClientTest.json(try sync())
            #expect(two["versionAfter"]?.intValue == 2 && two["result"]?.stringValue != "failed", "\(two)")
        }
    }
}
