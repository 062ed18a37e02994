import FolioTestSupport
import FolioPlist
import Foundation
import Testing

/// `folio read|list|show|status|diff` with the real binaries (edge on loopback where needed).
@Suite("folio read, show, status and diff", .serialized)
struct ClientReadDiffTests {
    static let summerLine = "Shall I compare thee to a summer’s day?"
    static let winterLine = "Shall I compare thee to a winter’s night?"
    /// How `folio diff` shows sonnet 18's first line changed.
    static let lineChange = "~ sonnets/018.plist lines[0]: \"\(summerLine)\" → \"\(winterLine)\""

    /// A published root, its edge, and a cache synced from it.
    func withSyncedCache(_ label: String, _ body: (ClientRoot, EdgeProcess, ClientCache) throws -> Void) throws {
        let root = try ClientRoot.make(label)
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = ClientCache(dir: root.dir + "/cache")
        let sync = try ClientTest.folio(["sync"], cache: cache.dir, edge: edge.baseURL)
        try #require(sync.status == 0, "\(sync.stderr)")
        try body(root, edge, cache)
    }

    /// The poem lines of `read sonnet` output (after the numeral and the blank line).
    func poemLines(_ text: String) -> [Substring] {
        var lines = Array(text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2))
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    // MARK: read, list, show, status

    @Test("read sonnet by number or numeral lays the poem out; bad numbers fail clearly")
    func readSonnet() throws {
        try withSyncedCache("client-read") { _, edge, cache in
            func read(_ n: String) throws -> Harness.Output {
                try ClientTest.folio(["read", "sonnet", n], cache: cache.dir, edge: edge.baseURL)
            }
            let arabic = try read("18")
            let roman = try read("XVIII")
            #expect(arabic.status == 0 && roman.status == 0, "\(arabic.stderr)\(roman.stderr)")
            #expect(arabic.stdout == roman.stdout)
            let lines = arabic.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first == "XVIII")
            #expect(lines.dropFirst().first == "")
            let poem = poemLines(arabic.stdout)
            #expect(poem.count == 14)
            #expect(poem.suffix(2).allSatisfy { $0.hasPrefix("    ") && !$0.hasPrefix("     ") })
            #expect(poem.prefix(12).allSatisfy { !$0.hasPrefix(" ") })
            #expect(poem.first.map(String.init) == Self.summerLine)
            #expect(arabic.stdout == (try ClientTest.sourceText(18)))

            for (n, count) in [(99, 15), (126, 12), (1, 14), (154, 14)] {
                let out = try read(String(n))
                #expect(out.status == 0)
                let p = poemLines(out.stdout)
                #expect(p.count == count, "sonnet \(n)")
                #expect(p.suffix(2).allSatisfy { $0.hasPrefix("    ") }, "sonnet \(n)")
                #expect(p.dropLast(2).allSatisfy { !$0.hasPrefix(" ") }, "sonnet \(n)")
                #expect(out.stdout == (try ClientTest.sourceText(n)), "sonnet \(n)")
            }

            let bad = [
                ("0", "'0' is not a sonnet number"), ("155", "There is no sonnet 155."),
                ("abc", "'abc' is not a sonnet number"), ("CLV", "There is no sonnet 155."),
            ]
            for (arg, message) in bad {
                let out = try read(arg)
                #expect(out.status != 0, "read sonnet \(arg)")
                #expect(out.stdout.isEmpty, "read sonnet \(arg)")
                #expect(out.stderr.contains(message), "read sonnet \(arg): \(out.stderr)")
            }
        }
    }

    @Test("read sonnet with a number beyond 32 bits does not read another sonnet")
    func readHugeNumber() throws {
        // 4294967314 = 2^32 + 18: no such sonnet. Formatting it for the path with a 32-bit
        // conversion would turn it into sonnets/018.plist.
        try withSyncedCache("client-readhuge") { _, edge, cache in
            let out = try ClientTest.folio(["read", "sonnet", "4294967314"], cache: cache.dir, edge: edge.baseURL)
            #expect(out.status != 0, "printed: \(out.stdout)")
            #expect(!out.stdout.contains("XVIII"))
            #expect(out.stderr.contains("4294967314"), "\(out.stderr)")
        }
    }

    @Test("with no cache and no edge, read uses the bundled seed; a verified cache of another history wins")
    func seed() throws {
        let dir = Harness.tempDir("client-seed")
        defer { Harness.cleanup(dir) }
        let empty = dir + "/cache"
        let read = try ClientTest.folio(["read", "sonnet", "18", "--verbose"], cache: empty, edge: ClientTest.unreachableEdge)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == (try ClientTest.sourceText(18)))
        #expect(read.stderr.contains("from the seed"), "\(read.stderr)")

        let status = try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: empty, edge: ClientTest.unreachableEdge))
        #expect(status["seedVersion"]?.intValue == 1)
        #expect(status["reading"]?.stringValue == "seed")
        #expect(status["version"] == nil)

        // A cache at version 1, synced from a root published here (its own history): read
        // over the seed although both are version 1 (SeedTests covers the other cases).
        let root = try ClientRoot.make("client-seedroot", floor: 1)
        defer { root.cleanup() }
        #expect(try root.manifest().version == 1)
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        #expect(try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL).status == 0)
        let after = try ClientTest.folio(["read", "sonnet", "18", "--verbose"], cache: cache, edge: edge.baseURL)
        #expect(after.status == 0)
        #expect(after.stderr.contains("from the cache"), "\(after.stderr)")
        let reading = try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: cache, edge: edge.baseURL))["reading"]?.stringValue
        #expect(reading == "cache")
    }

    @Test("list sonnets prints 154 lines; show prints an entry or a plist file as text or JSON")
    func listAndShow() throws {
        try withSyncedCache("client-show") { root, edge, cache in
            let list = try ClientTest.folio(["list", "sonnets"], cache: cache.dir, edge: edge.baseURL)
            #expect(list.status == 0, "\(list.stderr)")
            let lines = list.stdout.split(separator: "\n")
            #expect(lines.count == 154)
            #expect(lines.count >= 18 && lines[17].contains("18") && lines[17].contains("XVIII") && lines[17].contains(Self.summerLine))
            #expect(lines.first?.contains("From fairest creatures we desire increase") == true)

            let show = try ClientTest.folio(["show", "sonnets/018.plist"], cache: cache.dir, edge: edge.baseURL)
            #expect(show.status == 0, "\(show.stderr)")
            #expect(show.stdout.contains("XVIII"))
            #expect(show.stdout.contains(Self.summerLine))

            let json = try ClientTest.folio(["show", "sonnets/018.plist", "--json"], cache: cache.dir, edge: edge.baseURL)
            #expect(json.status == 0, "\(json.stderr)")
            let value = try ClientTest.json(json)
            #expect(value["number"]?.intValue == 18)
            #expect(value["roman"]?.stringValue == "XVIII")
            #expect(value["lines"]?.arrayValue?.count == 14)

            // A plist file given by path: the published object, and the manifest.
            let entry = try #require(try root.manifest().entry("sonnets/018.plist"))
            let file = try ClientTest.folio(["show", root.root + "/" + entry.objectPath], cache: cache.dir, edge: edge.baseURL)
            #expect(file.status == 0, "\(file.stderr)")
            #expect(file.stdout == show.stdout)
            let fileJSON = try ClientTest.folio(["show", root.root + "/" + entry.objectPath, "--json"], cache: cache.dir, edge: edge.baseURL)
            #expect(try ClientTest.json(fileJSON) == value)
            let manifest = try ClientTest.folio(["show", root.root + "/manifest.plist"], cache: cache.dir, edge: edge.baseURL)
            #expect(manifest.status == 0)
            #expect(manifest.stdout.contains("sonnets/018.plist"))

            let missing = try ClientTest.folio(["show", "sonnets/999.plist"], cache: cache.dir, edge: edge.baseURL)
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("sonnets/999.plist"), "\(missing.stderr)")
        }
    }

    @Test("status --json after a sync: version, last result, freshness, bytes")
    func status() throws {
        try withSyncedCache("client-status") { root, edge, cache in
            let version = try root.manifest().version
            func status() throws -> PlistValue {
                try ClientTest.json(try ClientTest.folio(["status", "--json"], cache: cache.dir, edge: edge.baseURL))
            }
            let s = try status()
            #expect(s["version"]?.intValue == version)
            #expect(s["lastResult"]?.stringValue == "updated")
            #expect(s["fresh"]?.boolValue == true)
            #expect((s["cacheBytes"]?.intValue ?? 0) > 0)
            #expect(s["reading"]?.stringValue == "cache")
            #expect(s["edge"]?.stringValue == edge.baseURL)
            #expect(s["cacheDir"]?.stringValue == cache.dir)

            #expect(try ClientTest.folio(["sync", "--force"], cache: cache.dir, edge: edge.baseURL).status == 0)
            #expect(try status()["lastResult"]?.stringValue == "notModified")

            try cache.age(by: 3600)
            let stale = try status()
            #expect(stale["fresh"]?.boolValue == false)
            #expect(stale["version"]?.intValue == version)

            let text = try ClientTest.folio(["status"], cache: cache.dir, edge: edge.baseURL)
            #expect(text.status == 0)
            #expect(text.stdout.contains("version:     \(version)"))
            #expect(text.stdout.contains("stale"))
        }
    }

    // MARK: diff

    @Test("diff of two published directories: exit codes and the text, JSON and markdown forms")
    func diffDirectories() throws {
        let a = try ClientRoot.make("client-diffA")
        defer { a.cleanup() }
        let b = try ClientRoot.make("client-diffB") { r in try r.replace(in: 18, Self.summerLine, with: Self.winterLine) }
        defer { b.cleanup() }
        let same = try ClientRoot.make("client-diffSame")
        defer { same.cleanup() }
        let cache = a.dir + "/cache"
        func diff(_ args: [String]) throws -> Harness.Output {
            try ClientTest.folio(["diff"] + args, cache: cache, edge: ClientTest.unreachableEdge)
        }

        let text = try diff([a.root, b.root])
        #expect(text.status == 1, "\(text.stderr)")
        // A manifest file named by a one-letter relative path: its objects are read from the
        // directory it is in (".").
        try FileManager.default.copyItem(atPath: a.root + "/manifest.plist", toPath: a.root + "/m")
        let m = try ClientTest.folio(["diff", "m", b.root + "/manifest.plist"], cache: cache, edge: ClientTest.unreachableEdge, cwd: a.root)
        #expect(m.status == 1, "\(m.stderr)")
        #expect(m.stdout.contains(Self.lineChange), "\(m.stdout)")
        #expect(text.stdout.contains("sonnets/018.plist"))
        #expect(text.stdout.contains(Self.lineChange), "\(text.stdout)")
        #expect(text.stdout.contains("3 changed"))

        let json = try diff([a.root, b.root, "--format", "json"])
        #expect(json.status == 1)
        let value = try DiffJSONReader.value(json)
        #expect(value["equal"]?.boolValue == false)
        #expect(value["added"]?.arrayValue?.isEmpty == true)
        #expect(value["removed"]?.arrayValue?.isEmpty == true)
        let changed = value["changed"]?.arrayValue ?? []
        #expect(Set(changed.compactMap { $0["path"]?.stringValue }) == ["sonnets/018.plist", "sonnets/index.plist", "sonnets/all.plist"])
        let sonnet = changed.first { $0["path"]?.stringValue == "sonnets/018.plist" }
        let change = sonnet?["changes"]?.arrayValue?.first
        #expect(change?["op"] == .string("change") && change?["at"] == .string("lines[0]"), "\(String(describing: change))")
        #expect(change?["old"] == .string(Self.summerLine) && change?["new"] == .string(Self.winterLine))

        let md = try diff([a.root, b.root, "--format", "markdown"])
        #expect(md.status == 1)
        #expect(md.stdout.hasPrefix("#"), "\(md.stdout.prefix(200))")
        #expect(md.stdout.contains("|---"))
        #expect(md.stdout.contains("**3 changed, 0 added, 0 removed"), "\(md.stdout.prefix(300))")
        #expect(md.stdout.contains("<details>"))
        #expect(md.stdout.contains("</details>"))
        #expect(md.stdout.contains("sonnets/018.plist"))

        // Identical content published twice (byte-identical roots) and a root against itself.
        let equal = try diff([a.root, same.root])
        #expect(equal.status == 0, "\(equal.stdout)\(equal.stderr)")
        #expect(equal.stdout.contains("no differences"))
        #expect(try diff([b.root, b.root, "--format", "json"]).status == 0)

        // A manifest file against a directory, and a versioned manifest from manifests/.
        let version = try a.manifest().version
        let file = try diff([a.root + "/manifest.plist", b.root])
        #expect(file.status == 1, "\(file.stderr)")
        #expect(file.stdout.contains("sonnets/018.plist"))
        let versioned = try diff([b.root, a.root + "/manifests/\(version).plist", "--format", "json"])
        #expect(versioned.status == 1, "\(versioned.stderr)")
        #expect(try DiffJSONReader.value(versioned)["changed"]?.arrayValue?.count == 3)

        let missing = try diff([a.dir + "/no-such-dir", b.root])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no-such-dir"), "\(missing.stderr)")
        #expect(missing.stdout.isEmpty)
    }

    @Test("diff @N from the cache and from the edge's history, and an edge URL side")
    func diffVersionsAndEdge() throws {
        let root = try ClientRoot.make("client-diffN")
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let cache = root.dir + "/cache"
        let v1 = try root.manifest().version
        #expect(try ClientTest.folio(["sync"], cache: cache, edge: edge.baseURL).status == 0)
        try root.replace(in: 18, Self.summerLine, with: Self.winterLine)
        try root.publish()
        let v2 = try root.manifest().version
        try #require(v2 == v1 + 1)
        try edge.requireVersion(v2)
        #expect(try ClientTest.folio(["sync", "--force"], cache: cache, edge: edge.baseURL).status == 0)

        // The edge's history, with an empty cache: /manifests/N.plist and the objects.
        let empty = root.dir + "/empty-cache"
        let history = try ClientTest.folio(["diff", "@\(v1)", "@\(v2)"], cache: empty, edge: edge.baseURL)
        #expect(history.status == 1, "\(history.stderr)")
        #expect(history.stdout.contains("sonnets/018.plist"))
        #expect(history.stdout.contains(Self.lineChange), "\(history.stdout)")
        #expect(history.stdout.contains(edge.baseURL))

        // An edge URL side (its current manifest), with and without /manifest.plist.
        let url = try ClientTest.folio(["diff", "@\(v1)", edge.baseURL, "--format", "json"], cache: empty, edge: edge.baseURL)
        #expect(url.status == 1, "\(url.stderr)")
        #expect(try DiffJSONReader.value(url)["to"]?["version"]?.intValue == v2)
        let sameAsEdge = try ClientTest.folio(["diff", "@\(v2)", edge.baseURL + "/manifest.plist"], cache: empty, edge: edge.baseURL)
        #expect(sameAsEdge.status == 0, "\(sameAsEdge.stdout)\(sameAsEdge.stderr)")

        // The cache alone: stop the edge; both versions and their objects are on disk.
        edge.stop()
        let cached = try ClientTest.folio(["diff", "@\(v1)", "@\(v2)", "--format", "json"], cache: cache, edge: edge.baseURL)
        #expect(cached.status == 1, "\(cached.stderr)")
        let value = try DiffJSONReader.value(cached)
        #expect(value["from"]?["label"]?.stringValue?.contains("cache") == true)
        #expect(Set((value["changed"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }) == ["sonnets/018.plist", "sonnets/index.plist", "sonnets/all.plist"])

        // A version neither in the cache nor reachable: exit 2 with a message.
        let gone = try ClientTest.folio(["diff", "@\(v2 + 50)", "@\(v2)"], cache: cache, edge: edge.baseURL)
        #expect(gone.status == 2)
        #expect(gone.stderr.contains("version \(v2 + 50) is not in the cache") && gone.stderr.contains("sync first"), "\(gone.stderr)")
        let badSpec = try ClientTest.folio(["diff", "@x", "@\(v2)"], cache: cache, edge: edge.baseURL)
        #expect(badSpec.status == 2)
        #expect(badSpec.stderr.contains("@x"), "\(badSpec.stderr)")
    }

    /// Publishes the repository's content as A, and B with every line of every sonnet changed.
    func bigDiffRoots(_ label: String) throws -> (ClientRoot, ClientRoot) {
        let a = try ClientRoot.make(label + "A")
        do {
            let b = try ClientRoot.make(label + "B") { r in
                for n in 1...154 { try r.rewriteLines(of: n) { _, line in line + " (revised)" } }
            }
            return (a, b)
        } catch {
            a.cleanup()
            throw error
        }
    }

    static let markdownCap = 60_000

    @Test("markdown output is capped at 60,000 characters with a note")
    func markdownCap() throws {
        let (a, b) = try bigDiffRoots("client-cap")
        defer { a.cleanup(); b.cleanup() }
        let cache = a.dir + "/cache"
        let text = try ClientTest.folio(["diff", a.root, b.root], cache: cache, edge: ClientTest.unreachableEdge)
        #expect(text.status == 1)
        #expect(text.stdout.count > 2 * Self.markdownCap)  // the full diff is far bigger than the cap

        let md = try ClientTest.folio(["diff", a.root, b.root, "--format", "markdown"], cache: cache, edge: ClientTest.unreachableEdge)
        #expect(md.status == 1, "\(md.stderr)")
        #expect(md.stdout.count <= Self.markdownCap, "\(md.stdout.count) characters")
        #expect(md.stdout.count > Self.markdownCap / 2)
        #expect(md.stdout.contains("capped at 60000 characters"), "\(md.stdout.suffix(300))")
        #expect(md.stdout.contains("more section(s) not shown"))
        #expect(md.stdout.contains("sonnets/001.plist"))
    }

    @Test("markdown cap holds when the kept sections end right at the limit")
    func markdownCapBoundary() throws {
        // The renderer keeps sections while `kept + note` fits, then appends a line longer than
        // the note ("> K more section(s) not shown: Output capped…"). Lengthen one kept section
        // so the kept text ends exactly where the note would still fit.
        let (a, b) = try bigDiffRoots("client-capedge")
        defer { a.cleanup(); b.cleanup() }
        let cache = a.dir + "/cache"
        func markdown() throws -> String {
            let out = try ClientTest.folio(["diff", a.root, b.root, "--format", "markdown"], cache: cache, edge: ClientTest.unreachableEdge)
            #expect(out.status == 1, "\(out.stderr)")
            return out.stdout
        }
        let first = try markdown()
        #expect(first.count <= Self.markdownCap, "\(first.count) characters")
        // Where the kept sections end: "\n> K more section(s) not shown:" + the note (less "\n>").
        let marker = try #require(first.range(of: " more section(s) not shown:", options: .backwards))
        let capLineStart = try #require(first[..<marker.lowerBound].range(of: "\n> ", options: .backwards))
        let kept = first.distance(from: first.startIndex, to: capLineStart.lowerBound)
        let noteCount = first.distance(from: marker.upperBound, to: first.endIndex) + 2
        let slack = Self.markdownCap - noteCount - kept
        try #require(slack >= 0)

        // Pad a changed line of sonnet 1 (the first section) by `slack` characters and republish B
        // (compensating for a longer version number in B's label).
        let versionBefore = try b.manifest().version
        let widen = String(versionBefore + 1).count - String(versionBefore).count
        let pad = slack - widen
        if pad > 0 {
            try b.rewriteLines(of: 1) { i, line in i == 5 ? line + String(repeating: "x", count: pad) : line }
            try b.publish()
        }
        let second = try markdown()
        #expect(second.count <= Self.markdownCap, "\(second.count) characters (kept sections end \(slack - pad) before the note's budget)")
        #expect(second.contains("more section(s) not shown"))
    }
}
