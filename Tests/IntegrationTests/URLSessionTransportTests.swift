import FolioKit
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// FolioKit's default transport, URLSession (FoundationNetworking over libcurl here), against a
/// real folio-edge: bodies decoded by URLSession with their size on the wire kept, conditional
/// requests, the size limit, timeouts and refused connections.
@Suite("URLSession transport", .serialized)
struct URLSessionTransportTests {
    /// A published root and an edge over it.
    static func edge(_ label: String) throws -> (ClientRoot, EdgeProcess) {
        let root = try ClientRoot.make(label)
        do { return (root, try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)) } catch {
            root.cleanup()
            throw error
        }
    }

    @Test("a compressed object arrives decoded, without Content-Encoding, its size on the wire kept")
    func decodedBodies() async throws {
        let (root, edge) = try Self.edge("urlsession-decoded")
        defer {
            edge.stop()
            root.cleanup()
        }
        let entry = try #require(try root.manifest().entries.filter { $0.gzipSize != nil }.max { $0.size < $1.size })
        let transport = Transports.forEdge(edge.baseURL)
        let r = try await transport.get(TransportRequest(path: "/" + entry.objectPath, headers: [], maxBody: entry.size))
        #expect(r.status == 200)
        #expect(r.body == (try FileIO.read(root.root + "/" + entry.objectPath)), "the decoded bytes are the object's")
        #expect(r.headers.first(name: "content-encoding") == nil, "\(r.headers)")
        let onWire = try #require(r.wireBodyBytes, "a compressed answer says its size on the wire")
        #expect(onWire < entry.size && [entry.gzipSize, entry.brSize].contains(onWire), "\(onWire) of \(entry.size)")
        #expect(r.headers.first(name: "etag") != nil && r.headBytes > 100)
    }

    @Test("a conditional GET is answered 304 and handed on as such (no URL cache in between)")
    func conditional() async throws {
        let (root, edge) = try Self.edge("urlsession-304")
        defer {
            edge.stop()
            root.cleanup()
        }
        let transport = Transports.forEdge(edge.baseURL)
        let first = try await transport.get(TransportRequest(path: "/manifest.plist", headers: [], maxBody: 1 << 24))
        let etag = try #require(first.headers.first(name: "etag"))
        let again = try await transport.get(TransportRequest(path: "/manifest.plist", headers: [("If-None-Match", etag)], maxBody: 1 << 24))
        #expect(again.status == 304 && again.body.isEmpty, "\(again.status)")
        #expect(try Manifest(bytes: first.body).version == (try root.manifest().version))
    }

    @Test("an answer larger than the request's limit is refused")
    func sizeLimit() async throws {
        let (root, edge) = try Self.edge("urlsession-limit")
        defer {
            edge.stop()
            root.cleanup()
        }
        do {
            _ = try await Transports.forEdge(edge.baseURL).get(TransportRequest(path: "/manifest.plist", headers: [], maxBody: 100))
            Issue.record("a manifest of more than 100 bytes was taken")
        } catch let error as TransportError {
            #expect(error.kind == .other && error.description.contains("larger than expected"), "\(error)")
        }
    }

    @Test("no answer within the configured timeout, and a refused connection, are the transport's errors")
    func failures() async throws {
        let dir = Harness.tempDir("urlsession-slow")
        defer { Harness.cleanup(dir) }
        try FileIO.writeAtomically(Array("x".utf8), to: dir + "/x", sync: false)
        let server = try FolioKitAppTests.slowServer(dir, delayMs: 30_000)
        defer { server.stop() }
        let slow = Transports.forEdge(server.url, configuration: FolioHTTPConfiguration(timeout: .milliseconds(500)))
        let start = ContinuousClock.now
        do {
            _ = try await slow.get(TransportRequest(path: "/x", headers: [], maxBody: 10))
            Issue.record("a 30 s answer came within a 0.5 s timeout")
        } catch let error as TransportError {
            #expect(error.kind == .timedOut && error.description.contains("0.5 s"), "\(error)")
        }
        // Loose: with the whole suite running in this process, Dispatch's timers run late (seen:
        // 9.7 s); alone it takes 0.5 s. The answer would take 30.
        #expect(ContinuousClock.now - start < .seconds(20))
        do {  // Nothing listens on port 1.
            _ = try await Transports.forEdge("http://127.0.0.1:1").get(TransportRequest(path: "/x", headers: [], maxBody: 10))
            Issue.record("an answer from a closed port")
        } catch let error as TransportError {
            #expect(error.kind == .connectionRefused, "\(error)")
        }
    }
}

/// FolioKit's store over URLSession, against a live edge: a whole first sync, then an edit taken
/// as a delta, then nothing to fetch.
@Suite("FolioKit over URLSession: deltas")
struct URLSessionDeltaTests {
    @Test("an edit arrives as a delta (objects patched, fewer bytes than the objects), then not modified")
    func deltaOverURLSession() async throws {
        let (root, edge) = try URLSessionTransportTests.edge("urlsession-delta")
        defer {
            edge.stop()
            root.cleanup()
        }
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: root.dir + "/cache")
        let first = try await store.sync()
        #expect(first.result == .updated && first.objectsFetched > 150, "\(first)")
        for n in 1...3 { try root.rewriteLines(of: n) { i, line in i == 0 ? "Edited " + line : line } }
        try root.publish()
        let version = try root.manifest().version
        try edge.requireVersion(version)
        let second = try await store.sync(force: true)  // the first manifest is still fresh
        #expect(second.result == .updated && second.versionAfter == version, "\(second)")
        #expect(second.objectsPatched > 0 && second.objectsFetched == 0, "patched \(second.objectsPatched), fetched \(second.objectsFetched)")
        struct Sonnet: Decodable { var lines: [String] }
        #expect(try store.decode(Sonnet.self, at: "sonnets/001.plist").lines.first?.hasPrefix("Edited ") == true)
        let again = try await store.sync(force: true)
        #expect(again.result == .notModified, "\(again)")
    }
}
