import FolioTestSupport
import Testing

/// `folio diff` over 20 random edits of content/ (seeded): nothing missed, nothing extra.
@Suite("folio diff: complete over random edits of content/", .serialized)
struct DiffCompletenessTests {
    @Test("the reported changes turn every old value into the new; added and removed match the manifests", arguments: [UInt64(1), 7, 42])
    func complete(seed: UInt64) throws {
        let dir = Harness.tempDir("diff-complete-\(seed)")
        defer { Harness.cleanup(dir) }
        let root = ClientRoot(dir: dir, content: Harness.copyContent(to: dir), root: dir + "/public")
        var edits = ContentEdits(content: root.content, seed: seed)
        try edits.writeData()
        try root.publish()
        try edits.apply(20)
        try root.publish()
        let out = try ClientTest.folio(
            ["diff", root.root + "/manifests/1.plist", root.root + "/manifests/2.plist", "--format", "json"], cache: dir + "/cache",
            edge: ClientTest.unreachableEdge)
        #expect(out.status == 1, "\(out.stderr)")
        let check = try DiffCompleteness(root: root.root, oldVersion: 1, newVersion: 2, report: try DiffJSONReader.value(out))
        let log = edits.log.joined(separator: "\n")
        #expect(check.reported("changed").count >= 3, "\(out.stdout.prefix(2000))")
        #expect(Set(check.reported("added")) == check.addedPaths, "\(log)")
        #expect(Set(check.reported("removed")) == check.removedPaths, "\(log)")
        let problems = try check.valueProblems()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n\n"))\nedits:\n\(log)")
    }
}
