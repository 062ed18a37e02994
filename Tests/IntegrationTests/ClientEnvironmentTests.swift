import FolioKit
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// One cache, two edges (production and QA): each keeps its own version, switching back and
/// forth never reports a downgrade, and each edge reads its own content.
@Suite("environments: one cache, several edges")
struct ClientEnvironmentTests {
    @Test("switching --edge between production and QA keeps both, never a downgrade; status and reads follow the edge")
    func switching() async throws {
        let production = try ClientRoot.make("env-production", floor: 5)
        defer { production.cleanup() }
        let qa = try ClientRoot.make("env-qa") { r in try r.replace(in: 18, "summer’s day", with: "QA day") }
        defer { qa.cleanup() }
        #expect(try production.manifest().history != qa.manifest().history)
        let prodEdge = try EdgeProcess.start(root: production.root, args: ClientTest.edgeArgs)
        defer { prodEdge.stop() }
        let qaEdge = try EdgeProcess.start(root: qa.root, args: ClientTest.edgeArgs)
        defer { qaEdge.stop() }
        let cache = production.dir + "/cache"

        let first = try ClientSyncSummary(ClientTest.folio(["sync", "--json"], cache: cache, edge: prodEdge.baseURL))
        #expect(first.result == "updated" && first.versionAfter == 5)
        // QA publishes version 1 of another history: not a downgrade from 5.
        let toQA = try ClientTest.folio(["sync", "--json"], cache: cache, edge: qaEdge.baseURL)
        #expect(toQA.status == 0, "\(toQA.stderr)")
        let qaSync = try ClientSyncSummary(toQA)
        #expect(qaSync.result == "updated" && qaSync.versionBefore == 5 && qaSync.versionAfter == 1)
        let status = try ClientTest.json(ClientTest.folio(["status", "--json"], cache: cache, edge: qaEdge.baseURL))
        #expect(status["version"]?.intValue == 1)
        #expect(status["syncedFrom"]?.stringValue == qaEdge.baseURL)
        #expect(status["otherEdges"]?.arrayValue?.first?["edge"]?.stringValue == prodEdge.baseURL)
        #expect(status["otherEdges"]?.arrayValue?.first?["version"]?.intValue == 5)
        let qaRead = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache, edge: qaEdge.baseURL)
        #expect(qaRead.stdout.contains("QA day"), "\(qaRead.stdout)")

        // Back to production: its version is still held, revalidated in one request.
        let back = try ClientSyncSummary(ClientTest.folio(["sync", "--json", "--force"], cache: cache, edge: prodEdge.baseURL))
        #expect(back.result == "notModified" && back.versionAfter == 5 && back.requests == 1, "\(back)")
        let prodRead = try ClientTest.folio(["read", "sonnet", "18", "--offline"], cache: cache, edge: prodEdge.baseURL)
        #expect(prodRead.stdout.contains("summer’s day"), "\(prodRead.stdout)")

        // An edge never synced here reads the current environment, and status says whose.
        let other = try ClientTest.json(ClientTest.folio(["status", "--json"], cache: cache, edge: ClientTest.unreachableEdge))
        #expect(other["version"]?.intValue == 5 && other["syncedFrom"]?.stringValue == prodEdge.baseURL)

        // FolioKit: two stores on the one directory read their own edge's content.
        let prodStore = try FolioStore(edge: prodEdge.baseURL, cacheDirectory: cache)
        let qaStore = try FolioStore(edge: qaEdge.baseURL + "/", cacheDirectory: cache)
        #expect(prodStore.current?.version == 5)
        #expect(qaStore.current?.version == 1)
    }

    @Test("the same edge republished from scratch (another history, a lower version) is taken, not called a downgrade")
    func republished() throws {
        let root = try ClientRoot.make("env-republish", floor: 3)
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        #expect(try ClientSyncSummary(ClientTest.folio(["sync", "--json"], cache: cache, edge: edge.baseURL)).versionAfter == 3)
        // A fresh publish into an empty directory: version 1 of a new history.
        try FileManager.default.removeItem(atPath: root.root)
        try root.replace(in: 18, "summer’s day", with: "fresh start")
        try root.publish()
        try edge.requireVersion(1)
        let fresh = try ClientTest.folio(["sync", "--json", "--force"], cache: cache, edge: edge.baseURL)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(try ClientSyncSummary(fresh).versionAfter == 1)
    }
}
