import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// One fenced block of a Markdown file.
struct DocBlock {
    /// The file, relative to the repository (`docs/serving.md`).
    var file: String
    /// The line of the opening fence, 1-based.
    var line: Int
    /// What follows the opening fence (`sh test`, `swift`, ``).
    var info: String
    var text: String
    /// The Markdown line just before the fence (a `<!-- compiled: NAME -->` marker).
    var before: String
}

/// The documentation as the tests read it: README.md and docs/*.md, their fenced blocks and
/// inline code.
enum Docs {
    /// README.md, then every docs/*.md, relative to the repository.
    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Harness.repoRoot + "/docs")) ?? []
        return ["README.md"] + names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    static func text(_ file: String) throws -> String {
        String(decoding: try FileIO.read(Harness.repoRoot + "/" + file), as: UTF8.self)
    }

    /// The fenced blocks of `file` (``` fences, as this documentation writes them), in order.
    static func blocks(_ file: String) throws -> [DocBlock] {
        var out: [DocBlock] = []
        var open: DocBlock?
        var previous = ""
        for (index, line) in try text(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                if var block = open {
                    block.text = String(block.text.dropLast())
                    out.append(block)
                    open = nil
                } else {
                    open = DocBlock(file: file, line: index + 1, info: String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), text: "", before: previous)
                }
            } else if open != nil {
                open!.text += line + "\n"
            }
            previous = String(line)
        }
        return out
    }

    /// The text of `file` outside its fenced blocks.
    static func prose(_ file: String) throws -> String {
        var out = ""
        var inBlock = false
        for line in try text(file).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inBlock.toggle(); continue }
            if !inBlock { out += line + "\n" }
        }
        return out
    }
}

/// The documentation cannot go stale: its ```` ```sh test ```` blocks run, the options it names
/// exist, the manifest's keys are the code's, and the FolioKit guide's code compiles.
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
        p.waitUntilExit()
        try out.close()
        try err.close()
        let o = try FileIO.read(dir + "/.\(name).out")
        var e = String(decoding: try FileIO.read(dir + "/.\(name).err"), as: UTF8.self)
        if status == nil { e += "\n(no status after \(Int(timeout)) s: killed)" }
        return Harness.Output(status: status ?? -1, stdout: String(decoding: o, as: UTF8.self), stderr: e, stdoutBytes: o)
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

    // MARK: - Options

    static let programs = ["folio", "folio-build", "folio-edge"]

    /// Every `--long-option` a program's help texts (its subcommands' included) name.
    static func helpOptions(_ program: String) throws -> Set<String> {
        var options: Set<String> = ["--help"]
        for (_, text) in try HelpTextTests.allHelp(program) { options.formUnion(longOptions(text)) }
        return options
    }

    static func longOptions(_ text: some StringProtocol) -> Set<String> {
        var out: Set<String> = []
        let chars = Array(text.unicodeScalars)
        var i = 0
        while i + 2 < chars.count {
            if chars[i] == "-", chars[i + 1] == "-", i == 0 || !(chars[i - 1].properties.isAlphabetic || chars[i - 1] == "-"),
                chars[i + 2].properties.isLowercase
            {
                var j = i + 2
                while j < chars.count, chars[j].properties.isLowercase || chars[j].properties.numericType != nil || chars[j] == "-" { j += 1 }
                out.insert(String(String.UnicodeScalarView(chars[i..<j])))
                i = j
            } else {
                i += 1
            }
        }
        return out
    }

    /// The program a command word names: ours by name or by a path ending in it.
    static func program(_ word: Substring) -> String? {
        let name = word.split(separator: "/").last.map(String.init) ?? ""
        return programs.contains(name) ? name : nil
    }

    /// `(program, option, where)` for every long option the documentation gives one of our
    /// programs: in code blocks, each command's options (its continuation lines included, and
    /// the indented lines of a usage block), and in prose, code spans that start with a program.
    static func documentedOptions() throws -> [(String, String, String)] {
        var found: [(String, String, String)] = []
        // `pipes`: a `|` separates commands (in a usage block, alternatives: `a | b --x`).
        func scan(_ line: Substring, current: inout String?, at place: String, pipes: Bool) {
            // Another command after a separator starts from nothing.
            var text = String(line)
            if let hash = text.range(of: " #") { text = String(text[..<hash.lowerBound]) }
            for separator in ["&&", ";", "$(", "`", "(", ")"] + (pipes ? ["|"] : []) {
                text = text.replacingOccurrences(of: separator, with: " ; ")
            }
            for word in text.split(separator: " ") {
                if word == ";" { current = nil; continue }
                if let p = program(word) { current = p; continue }
                if let current, word.hasPrefix("--") || word.hasPrefix("[--") {
                    for option in longOptions(word) { found.append((current, option, place)) }
                }
            }
        }
        for file in Docs.files {
            for block in try Docs.blocks(file) where ["", "sh", "sh test", "console", "text"].contains(block.info) {
                var current: String?
                var continued = false
                for (n, raw) in block.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    var line = raw
                    if line.hasPrefix("$ ") { line = line.dropFirst(2) }
                    let indented = line.hasPrefix(" ") || line.hasPrefix("[")
                    if !continued && !indented { current = nil }
                    scan(line, current: &current, at: "\(file):\(block.line + 1 + n)", pipes: !block.info.isEmpty)
                    continued = line.hasSuffix("\\")
                }
            }
            // Code spans in prose (a span that starts with a program names its options).
            var inBlock = false
            for (n, line) in try Docs.text(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if line.hasPrefix("```") { inBlock.toggle(); continue }
                guard !inBlock else { continue }
                for (k, span) in line.split(separator: "`", omittingEmptySubsequences: false).enumerated() where k % 2 == 1 {
                    guard let first = span.split(separator: " ").first, program(first) != nil else { continue }
                    var current: String?
                    scan(span, current: &current, at: "\(file):\(n + 1)", pipes: true)
                }
            }
        }
        return found
    }

    @Test("every --option the documentation gives a program is in that program's --help")
    func optionsExist() throws {
        let documented = try Self.documentedOptions()
        #expect(documented.count > 200, "the scan finds the guides' options: \(documented.count)")
        var known: [String: Set<String>] = [:]
        for program in Self.programs { known[program] = try Self.helpOptions(program) }
        for (program, option, place) in documented where !known[program]!.contains(option) {
            Issue.record("\(place): \(program) has no \(option) (not in any of its --help texts)")
        }
    }

    @Test("the option scan attributes options to their program")
    func optionScan() throws {
        #expect(Self.longOptions("[--tls-cert PEM --tls-key PEM]... --port=0 a--b --x") == ["--tls-cert", "--tls-key", "--port", "--x"])
        #expect(Self.program("$(RELEASE)/folio-build") == "folio-build")
        #expect(Self.program("folio-edge") == "folio-edge")
        #expect(Self.program("folio-edgy") == nil)
    }

    // MARK: - The manifest's keys

    /// The first column of the Markdown table that follows `heading` in `file`, backquotes removed.
    static func tableKeys(_ file: String, after marker: String) throws -> [String] {
        let text = try Docs.text(file)
        guard let start = text.range(of: marker) else { throw HarnessError("\(file) has no \(marker)") }
        var keys: [String] = []
        var inTable = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("|") {
                inTable = true
                let cell = line.split(separator: "|", omittingEmptySubsequences: false)[1].trimmingCharacters(in: .whitespaces)
                if cell.hasPrefix("`") { keys.append(cell.trimmingCharacters(in: CharacterSet(charactersIn: "`"))) }
            } else if inTable {
                break
            }
        }
        return keys
    }

    /// A manifest with every optional field set, as its plist.
    static func fullManifest() throws -> [String: PlistValue] {
        let cache = Manifest.CacheHint(maxAge: 60, staleWhileRevalidate: 1, staleIfError: 2, immutable: true)
        var entry = Manifest.Entry(
            path: "a.plist", sha256: String(repeating: "0", count: 64), size: 1, gzipSize: 1, contentType: "application/x-plist",
            locale: "en", kind: "data", cache: cache, brSize: 1)
        entry.minimumAppVersion = "1.0"
        var manifest = Manifest(
            version: 1, createdAt: Date(timeIntervalSince1970: 0), sourceRevision: "r", history: String(repeating: "0", count: 32),
            notice: "n", expiresAt: Date(timeIntervalSince1970: 1), entries: [entry])
        manifest.minimumAppVersion = "1.0"
        manifest.maintenanceUntil = Date(timeIntervalSince1970: 2)
        manifest.channel = "beta"
        manifest.critical = true
        manifest.releases = [Release(id: 1, rolloutBasisPoints: 10, entries: [entry])]
        guard case .dict(let d) = manifest.plist else { throw HarnessError("a manifest's plist is not a dictionary") }
        // What the reader reads back is what was written.
        #expect(try Manifest(plist: manifest.plist).plist == manifest.plist)
        return d
    }

    @Test("docs/format.md's table of the manifest's keys is the code's, and so is the entries' one")
    func manifestKeys() throws {
        let d = try Self.fullManifest()
        let documented = try Self.tableKeys("docs/format.md", after: "<!-- the manifest's keys -->")
        #expect(documented.sorted() == d.keys.sorted(), "format.md's table against Manifest.plist")
        #expect(Set(documented).count == documented.count, "each key once")
        // The reader names the same keys (Manifest.init(plist:) reads `root["KEY"]`, or `int(root, "KEY", …)`).
        let source = String(decoding: try FileIO.read(Harness.repoRoot + "/Sources/FolioPublished/Manifest.swift"), as: UTF8.self)
        var read: Set<String> = []
        for opening in ["root[\"", "(root, \""] {
            for part in source.components(separatedBy: opening).dropFirst() { read.insert(String(part.prefix { $0 != "\"" })) }
        }
        #expect(read == Set(documented), "the keys init(plist:) reads")

        guard case .array(let entries) = d["entries"], case .dict(let entry) = entries.first else { throw HarnessError("no entry") }
        let entryKeys = try Self.tableKeys("docs/format.md", after: "<!-- an entry's keys -->")
        #expect(entryKeys.sorted() == entry.keys.sorted(), "format.md's table of an entry's keys against Manifest.Entry.plist")
        // One table: no other document lists the manifest's keys in a table of its own.
        for file in Docs.files where file != "docs/format.md" {
            let text = try Docs.text(file)
            #expect(!(text.contains("| `schemaVersion` |") && text.contains("| `cacheHints` |")), "\(file) repeats the manifest's table")
        }
    }

    // MARK: - The FolioKit guide's code

    /// The regions of the compiled file, by name, less their common indentation.
    static func compiledRegions() throws -> [String: String] {
        let text = String(decoding: try FileIO.read(Harness.repoRoot + "/Tests/IntegrationTests/FolioKitGuideCode.swift"), as: UTF8.self)
        var regions: [String: [Substring]] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// guide: begin ") { current = String(trimmed.dropFirst("// guide: begin ".count)); regions[current!] = []; continue }
            if trimmed.hasPrefix("// guide: end ") { current = nil; continue }
            if let current { regions[current]!.append(line) }
        }
        return regions.mapValues { lines in
            let indent = lines.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
            return lines.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
        }
    }

    @Test("docs/foliokit.md's Swift is the code the tests compile")
    func folioKitSnippets() throws {
        let regions = try Self.compiledRegions()
        let swiftBlocks = try Docs.blocks("docs/foliokit.md").filter { $0.info == "swift" }
        #expect(swiftBlocks.count >= 3)
        var seen: Set<String> = []
        for block in swiftBlocks {
            let marker = block.before.trimmingCharacters(in: .whitespaces)
            guard marker.hasPrefix("<!-- compiled: "), marker.hasSuffix(" -->") else {
                Issue.record("docs/foliokit.md:\(block.line): a swift block without <!-- compiled: NAME --> before it")
                continue
            }
            let name = String(marker.dropFirst("<!-- compiled: ".count).dropLast(" -->".count))
            seen.insert(name)
            guard let region = regions[name] else { Issue.record("docs/foliokit.md:\(block.line): no region \(name)"); continue }
            #expect(block.text == region, "docs/foliokit.md:\(block.line) differs from FolioKitGuideCode.swift's region \(name)")
        }
        #expect(seen == Set(regions.keys), "every compiled region is shown in the guide")
        // Swift elsewhere would go uncompiled: it belongs in the FolioKit guide, or in a region.
        for file in Docs.files where file != "docs/foliokit.md" {
            for block in try Docs.blocks(file) where block.info == "swift" {
                Issue.record("\(file):\(block.line): a swift block outside docs/foliokit.md is not compiled by any test")
            }
        }
    }

    // MARK: - The README

    @Test("the README is short, repeats no section and links to every guide")
    func readme() throws {
        let text = try Docs.text("README.md")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 251, "README.md has \(lines.count) lines")
        for file in Docs.files {
            let prose = try Docs.prose(file)
            let headings = prose.split(separator: "\n").filter { $0.hasPrefix("#") }
            #expect(Set(headings).count == headings.count, "\(file) repeats a heading")
            // Every relative link leads to a file that exists.
            let base = (file as NSString).deletingLastPathComponent
            for part in prose.components(separatedBy: "](").dropFirst() {
                let target = String(part.prefix { $0 != ")" && $0 != "#" })
                guard !target.isEmpty, !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                let path = Harness.repoRoot + "/" + (base.isEmpty ? target : base + "/" + target)
                #expect(FileManager.default.fileExists(atPath: path), "\(file) links to \(target), which does not exist")
            }
        }
        for guide in Docs.files where guide.hasPrefix("docs/") {
            #expect(text.contains("](\(guide))"), "README.md links to \(guide)")
        }
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
