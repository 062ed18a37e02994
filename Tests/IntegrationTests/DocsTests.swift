import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// The documentation runs as written: its ```` ```sh test ```` blocks succeed (the options it
/// names, the manifest's keys and the FolioKit guide's code: ``DocsReferenceTests``).
@Suite("the documentation runs as written")
struct DocsTests {
    // MARK: - Shell examples

    /// What runs one block: bash with `set -euo pipefail`, the built programs first on PATH,
    /// HOME in the scratch directory, and none of the caller's FOLIO_ settings.
    static func blockEnvironment(_ dir: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FOLIO_") && !$0.key.hasPrefix("XDG_") }
        env["PATH"] = Harness.binDir + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["HOME"] = dir
        env["TMPDIR"] = dir
        // A tour's `make install DESTDIR=…` installs the programs just built rather than building again.
        env["FOLIO_REPO"] = Harness.repoRoot
        return env
    }

    /// Runs `script` with bash in `dir`, in a session and process group of its own (`setsid
    /// --fork --wait`, whose shell records the group's id, its own PID, and then the script's
    /// status) so that whatever the script started and left behind is stopped with it, by that
    /// id; killed after `timeout` seconds. The end is the status file, not the process's: a
    /// program left running may hold the descriptors Foundation watches.
    static func runBlock(_ script: String, in dir: String, name: String, timeout: Double = 120) throws -> Harness.Output {
        let path = dir + "/.\(name).sh"
        let groupFile = dir + "/.\(name).pgid"
        let statusFile = dir + "/.\(name).status"
        try FileIO.writeAtomically(Array(("set -euo pipefail\n" + script).utf8), to: path)
        _ = FileManager.default.createFile(atPath: dir + "/.\(name).out", contents: nil)
        _ = FileManager.default.createFile(atPath: dir + "/.\(name).err", contents: nil)
        let out = FileHandle(forWritingAtPath: dir + "/.\(name).out")!
        let err = FileHandle(forWritingAtPath: dir + "/.\(name).err")!
        let p = Process()
        // The test process blocks most signals in its threads, and a child inherits the mask: a
        // block starts with none blocked, as from a terminal (so `kill $edge` in its trap works).
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [
            "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
            "/usr/bin/setsid", "--fork", "--wait", "/bin/bash", "-c", "echo $$ > \"$2\"; status=0; /bin/bash \"$1\" || status=$?; echo $status > \"$3\"",
            "block", path, groupFile, statusFile,
        ]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.environment = blockEnvironment(dir)
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = out
        p.standardError = err
        try p.run()
        func read(_ file: String) -> Int32? {
            (try? FileIO.read(file)).flatMap { Int32(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32?
        while status == nil, Date() < deadline, p.isRunning || read(statusFile) != nil {
            status = read(statusFile)
            if status == nil { usleep(20_000) }
        }
        // Anything the block left running (a server without its trap) goes with the group; a
        // block past its time goes too.
        if let group = read(groupFile) {
            kill(-group, status == nil ? SIGKILL : SIGTERM)
            for _ in 0..<100 where kill(-group, 0) == 0 { usleep(20_000) }
            kill(-group, SIGKILL)
        }
        p.waitForExit()
        try out.close()
        try err.close()
        let o = try FileIO.read(dir + "/.\(name).out")
        var e = String(decoding: try FileIO.read(dir + "/.\(name).err"), as: UTF8.self)
        if status == nil { e += "\n(no status after \(Int(timeout)) s: killed)" }
        return Harness.Output(status: status ?? -1, stdoutBytes: o, stderr: e)
    }

    /// The ```` ```sh test ```` blocks of `file`, run in order, each in its own bash, all in one
    /// fresh directory holding a copy of the repository's content/ (as a clone's top does). The
    /// first failure is returned as `file:line`, the status and the block's stderr.
    static func runExamples(_ file: String, blocks: [DocBlock]) throws -> String? {
        let dir = Harness.tempDir("docs")
        defer { Harness.cleanup(dir) }
        _ = Harness.copyContent(to: dir)
        for (i, block) in blocks.enumerated() {
            let r = try runBlock(block.text, in: dir, name: "block\(i)")
            if r.status != 0 {
                var report = "\(file):\(block.line): the block failed (exit \(r.status))\n--- stderr\n\(r.stderr.suffix(3000))\n--- stdout\n\(r.stdout.suffix(1500))"
                // A server's own words are in its log (`folio-edge … > edge.log 2>&1 &`).
                for log in ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter({ $0.hasSuffix(".log") }).sorted() {
                    let text = String(decoding: (try? FileIO.read(dir + "/" + log)) ?? [], as: UTF8.self)
                    report += "\n--- \(log)\n\(text.suffix(1500))"
                }
                return report
            }
        }
        return nil
    }

    static func examples(_ file: String) throws -> [DocBlock] {
        try Docs.blocks(file).filter { $0.info == "sh test" }
    }

    @Test("every ```sh test block of the README and the guides succeeds", arguments: Docs.files)
    func shellExamples(file: String) throws {
        let blocks = try Self.examples(file)
        guard !blocks.isEmpty else { return }
        if let failure = try Self.runExamples(file, blocks: blocks) {
            Issue.record("\(failure)")
        }
    }

    @Test("the tour and each task's guide have examples that run")
    func examplesExist() throws {
        for file in ["README.md", "docs/authoring.md", "docs/serving.md", "docs/https.md", "docs/client.md", "docs/signing.md",
                     "docs/releases.md", "docs/catalogs.md", "docs/operating.md", "docs/format.md", "docs/object-storage.md",
                     "docs/exit-codes.md"] {
            #expect(try !Self.examples(file).isEmpty, "\(file) has no ```sh test block")
        }
    }

    @Test("a failing block is reported with its file, line and stderr")
    func failureIsReported() throws {
        let block = DocBlock(file: "scratch.md", line: 7, info: "sh test", text: "folio-build --content content --no-such-option public", before: "")
        let failure = try #require(try Self.runExamples("scratch.md", blocks: [block]))
        #expect(failure.hasPrefix("scratch.md:7: the block failed (exit"), "\(failure)")
        #expect(failure.contains("--no-such-option"), "the program's own stderr: \(failure)")
    }

    @Test("a server a block leaves running is stopped with the block")
    func leftoverServerIsStopped() throws {
        let dir = Harness.tempDir("docs-leftover")
        defer { Harness.cleanup(dir) }
        let r = try Self.runBlock("sleep 300 &\necho $! > pid", in: dir, name: "leftover")
        #expect(r.status == 0)
        let pid = try #require(Int32(String(decoding: try FileIO.read(dir + "/pid"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        var gone = false
        for _ in 0..<100 where !gone {
            gone = kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true
            if !gone { usleep(20_000) }
        }
        #expect(gone, "sleep \(pid) still runs")
    }
}

/// The FolioKit guide's code does what the guide says, against a real edge.
@Suite("docs/foliokit.md's code runs")
struct FolioKitGuideRunTests {
    @Test("showSonnet18 shows nothing offline with an empty cache, then sonnet 18 once synced")
    func showSonnet18Runs() async throws {
        let root = try ClientRoot.make("guide-kit", floor: 1)
        defer { root.cleanup() }
        let edge = try EdgeProcess.start(root: root.root, args: ClientTest.edgeArgs)
        defer { edge.stop() }
        let store = try FolioStore(edge: edge.baseURL, cacheDirectory: root.dir + "/cache")
        var shown: [Sonnet] = []
        await showSonnet18(from: store) { shown.append($0) }
        #expect(shown.map(\.number) == [18], "no seed: nothing before the sync, sonnet 18 after it")
        #expect(shown.first?.roman == "XVIII" && shown.first?.lines.count == 14)
        // Synced: the next call shows it at once, then again after a sync with nothing new.
        shown = []
        await showSonnet18(from: store) { shown.append($0) }
        #expect(shown.map(\.number) == [18, 18])
    }
}
