import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

@Suite("folio-build", .serialized)
struct BuilderTests {
    let build = Harness.binary("folio-build")
    let env = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]

    @Test("publishes the sonnets as content-addressed binary plists with a manifest")
    func publishesContent() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let r = try Harness.run(build, ["--content", Harness.repoRoot + "/content", "--output", dir + "/public"], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        for (i, step) in ["load", "parse", "check + compile", "write objects", "write manifest"].enumerated() {
            #expect(r.stdout.contains("[\(i + 1)/5] \(step)"))
        }
        // 154 sonnets + index + all, and the catalogs (14 = 13 locales + their index).
        #expect(r.stdout.contains("published version 1: 174 added, 0 changed, 0 removed"), "\(r.stdout)")

        let m = try Harness.verifyPublished(dir + "/public")
        #expect(m.version == 1)
        #expect(m.schemaVersion == Manifest.unsignedSchemaVersion, "an unsigned publish stays readable by clients from before signing")
        #expect(m.createdAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(m.sourceRevision == "test")
        #expect(m.entries.count == 174)
        #expect(m.entries.filter { $0.path.hasPrefix("sonnets/") }.count == 156)
        #expect(m.entries.filter { $0.contentType != "application/x-plist" }.map(\.path) == ["images/quill.png"])

        func object(_ path: String) throws -> PlistValue {
            let e = try #require(m.entry(path))
            return try BinaryPlist.decode(try FileIO.read(dir + "/public/" + e.objectPath))
        }
        let s18 = try object("sonnets/018.plist")
        #expect(s18["number"] == .int(18))
        #expect(s18["roman"] == .string("XVIII"))
        #expect(s18["lines"]?.arrayValue?.first == .string("Shall I compare thee to a summer’s day?"))
        #expect(s18["lines"]?.arrayValue?.last == .string("So long lives this, and this gives life to thee."))
        #expect(try object("sonnets/099.plist")["lines"]?.arrayValue?.count == 15)
        #expect(try object("sonnets/126.plist")["lines"]?.arrayValue?.count == 12)
        #expect(try object("sonnets/154.plist")["roman"] == .string("CLIV"))

        let index = try #require(try object("sonnets/index.plist").arrayValue)
        #expect(index.count == 154)
        #expect(index[17]["firstLine"] == .string("Shall I compare thee to a summer’s day?"))
        #expect(index[17]["preview"]?.arrayValue?.count == 3)
        let all = try #require(try object("sonnets/all.plist").arrayValue)
        #expect(all.count == 154)
        #expect(all[17] == s18)

        // The JSON mirror says the same as the binary manifest.
        let json = try JSONPlist.decode(try FileIO.read(dir + "/public/manifest.json"))
        #expect(json["version"] == .int(1))
        #expect(json["entries"]?.arrayValue?.count == 174)
        // gzip variants exist only where smaller.
        for e in m.entries { if let g = e.gzipSize { #expect(g < e.size) } }
    }

    @Test("one-letter relative paths for --content and --output publish (Foundation's path functions trap on them)")
    func oneLetterRelativePaths() throws {
        let dir = Harness.tempDir("rel")
        defer { Harness.cleanup(dir) }
        try FileManager.default.copyItem(atPath: Harness.repoRoot + "/content", toPath: dir + "/c")
        // Both spellings of the options.
        let direct = try Harness.run(build, ["-q", "--content", "c", "--output", "p"], env: env, cwd: dir)
        #expect(direct.status == 0, "\(direct.stderr)")
        _ = try Harness.verifyPublished(dir + "/p")
        let parsed = try Harness.run(build, ["--quiet", "--content=c", "--output=q"], env: env, cwd: dir)
        #expect(parsed.status == 0, "\(parsed.stderr)")
        _ = try Harness.verifyPublished(dir + "/q")
        // The same bytes for the same content.
        #expect(try FileIO.list(dir + "/p/objects").sorted() == FileIO.list(dir + "/q/objects").sorted())
    }

    @Test("argument errors: unknown or valueless options and stray arguments exit 64 with the parser's message")
    func argumentErrors() throws {
        for args in [["--bogus"], ["--content"], ["--output", "a", "--output"], ["stray"]] {
            let r = try Harness.run(build, args, env: env)
            #expect(r.status == 64, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("Error:"), "\(args): \(r.stderr)")
        }
    }

    @Test("--output that is a URL (s3://, https://) is refused, pointing to publish; nothing is written")
    func outputURL() throws {
        let dir = Harness.tempDir("output-url")
        defer { Harness.cleanup(dir) }
        for url in ["s3://bucket/app", "https://127.0.0.1:9000/app"] {
            let r = try Harness.run(build, ["--content", Harness.repoRoot + "/content", "--output", url], env: env, cwd: dir)
            #expect(r.status == 64 && r.stderr.contains("folio-build publish DIR \(url)"), "\(url): \(r.status) \(r.stderr)")
        }
        #expect(try FileIO.list(dir).isEmpty, "a URL-named directory was made")
    }

    @Test("identical input gives byte-identical output and no new version")
    func reproducible() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.repoRoot + "/content"
        #expect(try Harness.run(build, ["--content", content, "--output", dir + "/a"], env: env).status == 0)
        #expect(try Harness.run(build, ["--content", content, "--output", dir + "/b"], env: env).status == 0)
        let a = Harness.snapshot(dir + "/a")
        #expect(a.count > 300)
        #expect(a == Harness.snapshot(dir + "/b"))

        // Rebuilding in place (even at another time) publishes nothing new and changes no byte.
        let again = try Harness.run(build, ["--content", content, "--output", dir + "/a"], env: ["SOURCE_DATE_EPOCH": "1800000000"])
        #expect(again.status == 0)
        #expect(again.stdout.contains("up to date at version 1"))
        #expect(Harness.snapshot(dir + "/a") == a)
    }

    @Test("the source revision defaults to the content's last commit in git (not HEAD), and to none outside a work tree")
    func sourceRevisionFromGit() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let repo = dir + "/repo"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        let content = Harness.copyContent(to: repo)
        let gitEnv = ["GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                      "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": dir]
        func git(_ args: [String]) throws -> String {
            let r = try Harness.run("/usr/bin/env", ["git", "-C", repo] + args, env: gitEnv)
            #expect(r.status == 0, "git \(args): \(r.stderr)")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        _ = try git(["init", "-q"])
        _ = try git(["add", "content"])
        _ = try git(["commit", "-q", "-m", "content"])
        let contentCommit = try git(["rev-parse", "HEAD"])
        try FileIO.writeAtomically(Array("notes\n".utf8), to: repo + "/NOTES")
        _ = try git(["add", "NOTES"])
        _ = try git(["commit", "-q", "-m", "not content"])
        #expect(try git(["rev-parse", "HEAD"]) != contentCommit)

        let noRevision = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": ""]
        let r = try Harness.run(build, ["-q", "--content", content, "--output", dir + "/public"], env: noRevision)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Harness.verifyPublished(dir + "/public").sourceRevision == contentCommit)

        // Outside any work tree (a copy under the system's temporary directory): no revision.
        let outside = Harness.tempDir("norepo")
        defer { Harness.cleanup(outside) }
        let plain = Harness.copyContent(to: outside)
        let r2 = try Harness.run(build, ["-q", "--content", plain, "--output", outside + "/public"], env: noRevision)
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(try Harness.verifyPublished(outside + "/public").sourceRevision == nil)
    }

    @Test("a gzip variant already on disk is kept and described as it is (another zlib or level compresses differently)")
    func keepsExistingGzipVariants() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let out = dir + "/public"
        let content = Harness.repoRoot + "/content"
        #expect(try Harness.run(build, ["--content", content, "--output", out], env: env).status == 0)
        let m = try Harness.verifyPublished(out)
        // Stand in for an older zlib: the same bytes, compressed at level 1, in place of one variant.
        let e = try #require(m.entry("sonnets/all.plist"))
        let gzPath = out + "/" + (try #require(e.gzipObjectPath))
        let level1 = try Gzip.compress(try FileIO.read(out + "/" + e.objectPath), level: 1)
        #expect(level1.count != e.gzipSize)
        try FileIO.writeAtomically(level1, to: gzPath)
        let again = try Harness.run(build, ["--content", content, "--output", out], env: env)
        #expect(again.status == 0, "\(again.stderr)")
        // The manifest now matches the variant on disk, and the variant was not rewritten.
        let after = try Harness.verifyPublished(out)
        #expect(after.entry("sonnets/all.plist")?.gzipSize == level1.count)
        #expect(try FileIO.read(gzPath) == level1)
        // With nothing changed since, the next build publishes nothing.
        let third = try Harness.run(build, ["--content", content, "--output", out], env: env)
        #expect(third.stdout.contains("up to date at version \(after.version)"), "\(third.stdout)")
        // A damaged variant is not trusted: it is compressed again and replaced.
        try FileIO.writeAtomically(Array(level1.dropLast(9)), to: gzPath)
        let repaired = try Harness.run(build, ["--content", content, "--output", out], env: env)
        #expect(repaired.status == 0, "\(repaired.stderr)")
        _ = try Harness.verifyPublished(out)
        #expect(try FileIO.read(gzPath).count == e.gzipSize)
    }

    @Test("a changed sonnet publishes a new version and keeps the old one")
    func newVersion() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        let out = dir + "/public"
        #expect(try Harness.run(build, ["--content", content, "--output", out], env: env).status == 0)
        let v1 = try Harness.verifyPublished(out)
        var text = try String(contentsOfFile: content + "/sonnets/018.txt", encoding: .utf8)
        text = text.replacingOccurrences(of: "summer’s day", with: "winter’s night")
        try text.write(toFile: content + "/sonnets/018.txt", atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: content + "/sonnets/154.txt")

        let r = try Harness.run(build, ["--content", content, "--output", out], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        // 018, index and all change; 154 is gone.
        #expect(r.stdout.contains("published version 2 (was 1): 0 added, 3 changed, 1 removed"), "\(r.stdout)")
        let v2 = try Harness.verifyPublished(out)
        #expect(v2.version == 2)
        #expect(v2.entry("sonnets/154.plist") == nil)
        #expect(v2.entry("sonnets/018.plist")?.sha256 != v1.entry("sonnets/018.plist")?.sha256)
        #expect(v2.entry("sonnets/017.plist") == v1.entry("sonnets/017.plist"))
        // Version 1 is still whole: its manifest and every object it names.
        let old = try Manifest(bytes: try FileIO.read(out + "/manifests/1.plist"))
        #expect(old == v1)
        for e in old.entries { #expect(FileIO.exists(out + "/" + e.objectPath)) }
    }

    @Test("bad content fails with every error at path:line:col and leaves public/ untouched")
    func badContent() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        let out = dir + "/public"
        #expect(try Harness.run(build, ["--content", content, "--output", out], env: env).status == 0)
        let before = Harness.snapshot(out)

        let s = content + "/sonnets/"
        try Data().write(to: URL(fileURLWithPath: s + "001.txt"))  // empty
        try "Shall I compare\n\nline\n".write(toFile: s + "002.txt", atomically: true, encoding: .utf8)  // no numeral
        try "IV\n\nA line\nAnother\n".write(toFile: s + "003.txt", atomically: true, encoding: .utf8)  // out of order
        try FileManager.default.copyItem(atPath: s + "005.txt", toPath: s + "05.txt")  // duplicate of V
        var bad = Array("VI\n\nGood line\nBad ".utf8)
        bad += [0xFF, 0xFE]
        bad += Array(" line\n".utf8)
        try Data(bad).write(to: URL(fileURLWithPath: s + "006.txt"))  // invalid UTF-8
        try "VII\n\nLine one\nLine two\n\n  stray words\n".write(toFile: s + "007.txt", atomically: true, encoding: .utf8)

        let r = try Harness.run(build, ["--content", content, "--output", out], env: env)
        #expect(r.status == 1)
        let errors = r.stderr.split(separator: "\n").filter { $0.contains(": error: ") }
        func has(_ file: String, _ pos: String, _ words: String) -> Bool {
            errors.contains { $0.hasPrefix(s + file + ":" + pos + ": error: ") && $0.contains(words) }
        }
        #expect(has("001.txt", "1:1", "empty"), "\(r.stderr)")
        #expect(has("002.txt", "1:1", "missing numeral"), "\(r.stderr)")
        #expect(has("003.txt", "1:1", "out of order"), "\(r.stderr)")
        #expect(has("05.txt", "1:1", "duplicate sonnet V"), "\(r.stderr)")
        #expect(has("006.txt", "4:5", "invalid UTF-8"), "\(r.stderr)")
        #expect(has("007.txt", "6:3", "stray line"), "\(r.stderr)")
        #expect(r.stderr.contains("is unchanged"))
        #expect(Harness.snapshot(out) == before)
    }

    @Test("a missing sonnet in the sequence and a stray file are errors")
    func sequenceErrors() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = Harness.copyContent(to: dir)
        try FileManager.default.removeItem(atPath: content + "/sonnets/010.txt")
        try "notes".write(toFile: content + "/sonnets/notes.txt", atomically: true, encoding: .utf8)
        let r = try Harness.run(build, ["--content", content, "--output", dir + "/public"], env: env)
        #expect(r.status == 1)
        #expect(r.stderr.contains("sonnets/011.txt:1:1: error: sonnet X (10) is missing"), "\(r.stderr)")
        #expect(r.stderr.contains("sonnets/notes.txt:1:1: error: unexpected file"), "\(r.stderr)")
        #expect(!FileIO.exists(dir + "/public/manifest.plist"))
    }

    @Test("kill -9 at any instant leaves public/ a complete published version")
    func killDuringPublish() async throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let a = Harness.copyContent(to: dir)
        let b = dir + "/content-b"
        try FileManager.default.copyItem(atPath: a, toPath: b)
        // Variant B changes every sonnet, so each publish writes a full set of new objects.
        for n in 1...154 {
            let path = b + "/sonnets/" + String(format: "%03d.txt", n)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            try text.replacingOccurrences(of: "\n\n", with: "\n\nB-side\n").write(toFile: path, atomically: false, encoding: .utf8)
        }
        let out = dir + "/public"
        #expect(try Harness.run(build, ["--content", a, "--output", out], env: env).status == 0)

        var rng = SystemRandomNumberGenerator()
        var killed = 0
        for i in 0..<24 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: build)
            p.arguments = ["--content", i % 2 == 0 ? b : a, "--output", out, "--quiet"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            try await Task.sleep(for: .microseconds(Int.random(in: 0...60_000, using: &rng)))
            if p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                killed += 1
            }
            p.waitForExit()
            _ = try Harness.verifyPublished(out)
        }
        #expect(killed > 0)
        // After the carnage a normal build still works and leaves no temporary files.
        #expect(try Harness.run(build, ["--content", b, "--output", out], env: env).status == 0)
        let m = try Harness.verifyPublished(out)
        #expect(m.entry("sonnets/001.plist") != nil)
        #expect(!Harness.snapshot(out).keys.contains { $0.contains(".tmp-") })
    }

    /// BatchMemory, seen from outside: while the builder waits on its input (a FIFO standing in
    /// for a sonnet file), its heap has a mapping marked for transparent huge pages ("hg").
    @Test("the builder's heap is marked for transparent huge pages")
    func hugePageHeap() throws {
        guard FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage") else { return }
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        try FileIO.makeDirectory(dir + "/content/sonnets")
        let fifo = dir + "/content/sonnets/001.txt"
        #expect(mkfifo(fifo, 0o600) == 0)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: build)
        p.arguments = ["--content", dir + "/content", "--output", dir + "/public", "--quiet"]
        p.environment = ProcessInfo.processInfo.environment.merging(env) { _, new in new }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer {
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitForExit()
        }
        // The write end opens once the builder has opened the file to read it, after its
        // allocator settings; until then, ENXIO. Bounded: 10 s.
        var fd: Int32 = -1
        let deadline = ContinuousClock.now + .seconds(10)
        while fd < 0, p.isRunning, ContinuousClock.now < deadline {
            fd = open(fifo, O_WRONLY | O_NONBLOCK)
            if fd < 0 { usleep(2_000) }
        }
        try #require(fd >= 0, "the builder never opened its input")
        let smaps = String(decoding: try FileIO.read("/proc/\(p.processIdentifier)/smaps"), as: UTF8.self)
        close(fd)  // end of file: the builder reports an empty sonnet and exits
        var inHeap = false
        var hugeHeap = false
        for line in smaps.split(separator: "\n") {
            if line.first.map({ $0.isHexDigit }) == true, line.contains("-") {
                inHeap = line.hasSuffix("[heap]")
            } else if inHeap, line.hasPrefix("VmFlags:"), line.split(separator: " ").contains("hg") {
                hugeHeap = true
            }
        }
        #expect(hugeHeap, "no [heap] mapping with VmFlags hg")
        let exitBy = ContinuousClock.now + .seconds(10)
        while p.isRunning, ContinuousClock.now < exitBy { usleep(5_000) }
        #expect(!p.isRunning, "the builder did not exit after its input ended")
        if !p.isRunning { #expect(p.terminationStatus == 1) }
    }

    @Test("two builders at once: the second says the output is busy")
    func lock() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let out = dir + "/public"
        try FileIO.makeDirectory(out)
        let fd = try #require(try FileIO.tryLock(out + "/.folio-build.lock"))
        defer { close(fd) }
        let r = try Harness.run(build, ["--content", Harness.repoRoot + "/content", "--output", out], env: env)
        #expect(r.status == 1)
        #expect(r.stderr.contains("another folio-build is publishing"))
        #expect(!FileIO.exists(out + "/manifest.plist"))
    }
}
