import FolioTestSupport
import FolioPublished
import FolioSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Helpers for the live folio-edge tests: a published fixture, the real edge process, a raw
// HTTP/1.1 client over POSIX sockets (127.0.0.1 only), curl, and a few thread utilities.

/// The parent of every live edge suite. Serialized so that the timing-sensitive suites
/// (slowloris, hot swap under load) never share the machine's two cores with each other.
@Suite(.serialized) enum EdgeIntegration {}

// MARK: - Published fixture

/// A directory published by the real `folio-build`.
struct EdgeFixture: Sendable {
    /// The temporary directory holding everything (removed by `cleanup`).
    let dir: String
    /// The published root (`dir/public`).
    let root: String
    /// The content directory it was built from.
    let content: String

    static let buildEnv = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]

    /// Publishes the repository's content (or an editable copy of it) into a fresh directory.
    static func make(_ label: String = "edge", editableContent: Bool = false) throws -> EdgeFixture {
        let dir = Harness.tempDir(label)
        do {
            let content = editableContent ? Harness.copyContent(to: dir) : Harness.repoRoot + "/content"
            let fixture = EdgeFixture(dir: dir, root: dir + "/public", content: content)
            let r = try fixture.publish()
            guard r.status == 0 else { throw HarnessError("folio-build failed (\(r.status)): \(r.stderr)") }
            return fixture
        } catch {
            Harness.cleanup(dir)
            throw error
        }
    }

    /// Runs folio-build from `content` (default: this fixture's) into the root.
    @discardableResult
    func publish(from content: String? = nil) throws -> Harness.Output {
        try Harness.run(
            Harness.binary("folio-build"),
            ["--content", content ?? self.content, "--output", root, "--quiet"], env: Self.buildEnv)
    }

    /// The manifest currently on disk.
    func manifest() throws -> Manifest {
        try Manifest(bytes: try FileIO.read(root + "/manifest.plist"))
    }

    /// The bytes of a file under the root.
    func bytes(_ relative: String) throws -> [UInt8] {
        try FileIO.read(root + "/" + relative)
    }

    func cleanup() { Harness.cleanup(dir) }
}

// MARK: - A shared edge per suite

/// What a suite sharing one edge gets: the fixture it serves and the running edge.
struct SharedEdgeContext: Sendable {
    let fixture: EdgeFixture
    let edge: EdgeProcess
    let manifest: Manifest
}

enum SharedEdge {
    @TaskLocal static var context: SharedEdgeContext?

    /// The context of the enclosing suite's `.sharedEdge` trait.
    static func current() throws -> SharedEdgeContext {
        guard let context else { throw HarnessError("no shared edge: the suite needs the .sharedEdge trait") }
        return context
    }
}

/// Publishes a fixture and starts one edge for a whole suite, stopping it when the suite ends.
struct SharedEdgeTrait: SuiteTrait, TestScoping {
    var label: String
    var args: [String]

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let fixture = try EdgeFixture.make(label)
        defer { fixture.cleanup() }
        let edge = try EdgeProcess.start(root: fixture.root, args: args)
        defer { edge.stop() }
        let context = SharedEdgeContext(fixture: fixture, edge: edge, manifest: try fixture.manifest())
        try await SharedEdge.$context.withValue(context) {
            try await function()
        }
    }
}

extension Trait where Self == SharedEdgeTrait {
    /// One published fixture and one edge (started with `args`) for the whole suite.
    static func sharedEdge(_ label: String, args: [String] = []) -> Self {
        SharedEdgeTrait(label: label, args: args)
    }
}

extension Trait where Self == ConditionTrait {
    /// For a test that writes raw HTTP/1.1 bytes (framing, pipelining, malformed heads, slow
    /// clients): it runs in the cleartext stack only (`FOLIO_TEST_STACK`, see `TestStack`).
    static var http1Only: Self { .enabled(if: TestStack.current == .http1, "writes raw HTTP/1.1 bytes") }
}
