import FolioTestSupport
import Testing

/// `folio diff @N` for a version the edge never published, while the edge is up.
@Suite("folio diff: a version beyond the edge's", .serialized)
struct ClientDiffEdgeVersionTests {
    @Test("@7 against an edge at version 2: exit 2, says so and what to pass, in text and JSON")
    func beyondEdge() throws {
        let root = try ClientRoot.make("diff-beyond")
        defer { root.cleanup() }
        try root.replace(in: 18, "summer’s day", with: "winter’s night")
        try root.publish()
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        try edge.requireVersion(2)
        let cache = root.dir + "/cache"

        let text = try ClientTest.folio(["diff", "@7", "@2"], cache: cache, edge: edge.baseURL)
        #expect(text.status == 2, "\(text.stdout) \(text.stderr)")
        #expect(text.stderr.contains("version 7") && text.stderr.contains("its current version is 2"), "\(text.stderr)")
        #expect(text.stderr.contains("pass @N with N up to 2"), "\(text.stderr)")
        #expect(!text.stderr.contains("404") && !text.stderr.contains("answered"), "\(text.stderr)")
        #expect(!text.stderr.contains("Error(") && !text.stderr.contains("Error:") && !text.stderr.contains("CLIError"), "\(text.stderr)")
        #expect(text.stdout.isEmpty, "\(text.stdout)")

        let json = try ClientTest.folio(["diff", "@7", "@2", "--format", "json"], cache: cache, edge: edge.baseURL)
        #expect(json.status == 2)
        let v = try DiffJSONReader.value(json)
        #expect(v["result"] == .string("error") && v["error"]?["code"] == .int(2), "\(json.stdout)")
        let message = v["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("its current version is 2") && !message.contains("404"), "\(message)")
    }
}
