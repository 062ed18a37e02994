import FolioTestSupport
import FolioKit
import FolioSupport
import Foundation
import Synchronization
import Testing

/// FolioKit's public API, used as an app uses it (no `folio` process), against a live edge.
@Suite("FolioKit")
struct FolioKitTests {
    struct Sonnet: Decodable, Equatable {
        var number: Int
        var roman: String
        var lines: [String]
    }

    @Test("no cache and no seed: no content, and every read says so")
    func noContent() async throws {
        let dir = Harness.tempDir("kit-empty")
        defer { Harness.cleanup(dir) }
        let store = try FolioStore(edge: ClientTest.unreachableEdge, cacheDirectory: dir + "/cache")
        #expect(!store.hasContent)
        #expect(store.current == nil)
        do {
            _ = try store.data(at: "sonnets/018.plist")
            Issue.record("read with no content")
        } catch {
            #expect(error.code == .noContent)
            #expect(!error.hasContent)
        }
        // Offline sync: reported, not thrown; still nothing to read.
        let outcome = try await store.sync()
        #expect(outcome.result == .offline)
        #expect(!store.hasContent)
    }

    @Test("rejects an edge that is not an http(s) URL")
    func badEdge() {
        for edge in ["ftp://example.com", "example.com", "", "http://"] {
            #expect(throws: FolioError.self) { try FolioStore(edge: edge, cacheDirectory: "/tmp/unused") }
        }
    }

    @Test("the seed answers before any sync: bytes, plists, Codable, strings with plurals")
    func seedReads() throws {
        let root = try ClientRoot.make("kit-seed", floor: 1)
        defer { root.cleanup() }
        let seedFile = root.dir + "/seed.folioseed"
        try root.publish(seed: seedFile)
        let store = try FolioStore(
            edge: ClientTest.unreachableEdge, cacheDirectory: root.dir + "/cache", seed: try FolioSeed(contentsOf: seedFile))
        let snapshot = try #require(store.current)
        #expect(snapshot.origin == .seed)
        #expect(snapshot.version == 1)
        #expect(snapshot.history == (try root.manifest().history))

        let sonnet = try store.decode(Sonnet.self, at: "sonnets/018.plist")
        #expect(sonnet.number == 18 && sonnet.roman == "XVIII" && sonnet.lines.count == 14)
        #expect(sonnet.lines[0] == "Shall I compare thee to a summer’s day?")
        #expect(try store.plist(at: "sonnets/018.plist")["number"]?.intValue == 18)
        #expect(try store.paths().contains("sonnets/all.plist"))
        let all = try store.decode([Sonnet].self, at: "sonnets/all.plist")
        #expect(all.count == 154 && all[17] == sonnet)

        let fr = try store.strings(locale: "fr-CA")
        #expect(fr.locale == "fr")
        #expect(fr.string("list.count", .int(1)) == "1 sonnet")
        #expect(fr.string("list.count", .int(154)) == "154 sonnets")
        #expect(fr.string("list.count", .int(1_000_000)) == "1000000 de sonnets")
        #expect(fr.string("no.such.key") == nil)
        #expect(try store.strings().locale == "en")

        do {
            _ = try store.data(at: "sonnets/999.plist")
            Issue.record("read a path that does not exist")
        } catch {
            #expect(error.code == .entryNotFound)
            #expect(error.hasContent)
        }
        #expect(throws: FolioError.self) { try store.decode([String].self, at: "sonnets/018.plist") }
        #expect(throws: FolioError.self) { try store.strings(locale: "not a locale!") }
    }

    @Test("sync: progress to 1, one change naming the edited paths, reads follow; offline keeps reading")
    func syncStreams() async throws {
        let root = try ClientRoot.make("kit-sync", floor: 1)
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: root.dir + "/cache")

        let progress = store.progress()
        let changes = store.changes()
        let first = try await store.sync()
        #expect(first.result == .updated)
        #expect(first.versionAfter == 1)
        #expect(first.objectsFetched > 150)
        #expect(store.current?.origin == .cache)

        var iterator = changes.makeAsyncIterator()
        let change = try #require(await iterator.next())
        #expect(change.previousVersion == nil && change.version == 1)
        #expect(change.added.count == (try root.manifest().entries.count))
        // The stream keeps the newest events when not read at once; they only go forward.
        var last: SyncProgress?
        for await p in progress {
            if let last { #expect(p.objectsDone > last.objectsDone && p.bytesReceived >= last.bytesReceived) }
            #expect(p.objectsTotal == first.objectsFetched)
            last = p
            if p.objectsDone == p.objectsTotal { break }
        }
        #expect(last?.fraction == 1)

        // A one-line edit: the sonnet, the index and the whole collection change.
        try root.replace(in: 18, "summer’s day", with: "winter’s night")
        try root.publish()
        try edge.requireVersion(2)
        let second = try await store.sync(force: true)
        #expect(second.result == .updated && second.versionBefore == 1 && second.versionAfter == 2)
        // Rebuilt from the edge's delta, in two requests, not fetched whole.
        #expect(second.objectsPatched == 3 && second.objectsFetched == 0 && second.requests == 2, "\(second)")
        #expect((second.bytesSaved ?? 0) > 80_000)
        let edit = try #require(await iterator.next())
        #expect(edit.previousVersion == 1 && edit.version == 2)
        #expect(edit.modified == ["sonnets/018.plist", "sonnets/all.plist", "sonnets/index.plist"])
        #expect(edit.added.isEmpty && edit.removed.isEmpty)
        #expect(try store.decode(Sonnet.self, at: "sonnets/018.plist").lines[0] == "Shall I compare thee to a winter’s night?")

        // The edge goes away: sync says offline, reads still answer from the cache.
        edge.stop()
        let offline = try await store.sync(force: true)
        #expect(offline.result == .offline)
        #expect(try store.decode(Sonnet.self, at: "sonnets/018.plist").number == 18)
    }

    @Test("a corrupted cached object is reported as corrupt, with content still there")
    func corruptObject() async throws {
        let root = try ClientRoot.make("kit-corrupt", floor: 1)
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cacheDir = root.dir + "/cache"
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: cacheDir)
        try await store.sync()
        let entry = try #require(try root.manifest().entry("sonnets/018.plist"))
        let path = cacheDir + "/objects/\(entry.sha256).plist"
        var bytes = try FileIO.read(path)
        bytes[bytes.count / 2] ^= 0x20
        try FileIO.writeAtomically(bytes, to: path)
        do {
            _ = try store.data(at: "sonnets/018.plist")
            Issue.record("read a corrupt object")
        } catch {
            #expect(error.code == .corruptObject)
            #expect(error.hasContent)
            #expect(error.path == "sonnets/018.plist")
        }
        // A sync repairs it.
        let repaired = try await store.sync(force: true)
        #expect(repaired.result == .repaired)
        #expect(try store.data(at: "sonnets/018.plist").count == entry.size)
    }
}
