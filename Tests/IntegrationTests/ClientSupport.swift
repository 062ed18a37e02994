import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Helpers for the client tests (ClientSyncTests, ClientReadDiffTests): a published root built
// by the real folio-build, the real folio-edge on an ephemeral loopback port, the real folio
// client against a temporary cache dir, and checks of the cache layout
// (state.plist, manifests/<N>.plist, objects/<sha>.plist).

/// Running the client, the repository's sonnet sources, and small utilities.
enum ClientTest {
    /// How the client tests start `folio-edge` (`EdgeProcess.start(root:args:)`): one thread,
    /// and a new version noticed within 100 ms.
    static let edgeArgs = ["--threads", "1", "--watch-interval-ms", "100"]

    static let folioPath = Harness.binary("folio")
    static let buildEnv = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "client-tests"]

    /// Runs `folio ARGS --cache-dir CACHE --edge EDGE` (the options go after the subcommand).
    @discardableResult
    static func folio(
        _ args: [String], cache: String, edge: String, env: [String: String] = [:], cwd: String? = nil
    ) throws -> Harness.Output {
        // The locale variables are cleared so that labels do not depend on the test runner's locale.
        let base = ["FOLIO_EDGE": "", "FOLIO_CACHE_DIR": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": ""]
        return try Harness.run(folioPath, args + ["--cache-dir", cache, "--edge", edge], env: base.merging(env) { $1 }, cwd: cwd)
    }

    /// An address where nothing listens (port 1 on loopback).
    static let unreachableEdge = "http://127.0.0.1:1"

    /// The repository's source text of sonnet `n` (`content/sonnets/NNN.txt`).
    static func sourceText(_ n: Int) throws -> String {
        String(decoding: try FileIO.read(Harness.repoRoot + "/content/sonnets/\(threeDigits(n)).txt"), as: UTF8.self)
    }

    static func threeDigits(_ n: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, 3 - s.count)) + s
    }

    /// Decodes a command's JSON output.
    static func json(_ out: Harness.Output) throws -> PlistValue {
        do { return try JSONPlist.decode(out.stdoutBytes) } catch {
            throw HarnessError("not JSON (\(error)): status \(out.status), stdout: \(out.stdout), stderr: \(out.stderr)")
        }
    }

    /// Blocks the calling thread for `ms` milliseconds.
    static func sleep(ms: Int) {
        usleep(useconds_t(ms * 1000))
    }
}

// MARK: - A published root

/// A temporary directory with an editable copy of content/ and a root published from it.
struct ClientRoot: Sendable {
    let dir: String
    let content: String
    let root: String

    /// Copies content/, lets `prepare` edit it, and publishes it. Versions start at `floor`.
    static func make(
        _ label: String = "client", floor: Int? = nil, publishArgs: [String] = [], prepare: (ClientRoot) throws -> Void = { _ in }
    ) throws -> ClientRoot {
        let dir = Harness.tempDir(label)
        let r = ClientRoot(dir: dir, content: Harness.copyContent(to: dir), root: dir + "/public")
        do {
            let first = floor ?? 1
            if first > 1 {
                // folio-build numbers a publish after the highest manifests/<N>.plist name it finds.
                try FileIO.makeDirectory(r.root + "/manifests")
                try FileIO.writeAtomically([], to: r.root + "/manifests/\(first - 1).plist")
            }
            try prepare(r)
            try r.publish(seed: nil, publishArgs)
        } catch {
            r.cleanup()
            throw error
        }
        return r
    }

    /// Runs folio-build content → root (with `--seed FILE` when given, and `extra` arguments);
    /// throws unless it succeeds.
    func publish(seed: String? = nil, _ extra: [String] = []) throws {
        let out = try Harness.run(
            Harness.binary("folio-build"),
            ["--content", content, "--output", root, "--quiet"] + (seed.map { ["--seed", $0] } ?? []) + extra,
            env: ClientTest.buildEnv)
        guard out.status == 0 else { throw HarnessError("folio-build failed (\(out.status)): \(out.stderr)") }
    }

    func manifest() throws -> Manifest {
        try Manifest(bytes: try FileIO.read(root + "/manifest.plist"))
    }

    /// The path of sonnet `n`'s source file.
    func sonnetFile(_ n: Int) -> String { content + "/sonnets/\(ClientTest.threeDigits(n)).txt" }

    /// Replaces text in sonnet `n`'s source (it must occur).
    func replace(in n: Int, _ old: String, with new: String) throws {
        let path = sonnetFile(n)
        let text = String(decoding: try FileIO.read(path), as: UTF8.self)
        guard text.contains(old) else { throw HarnessError("\(path) does not contain \(old)") }
        try FileIO.writeAtomically(Array(text.replacingOccurrences(of: old, with: new).utf8), to: path)
    }

    /// Rewrites the poem lines (after the numeral and the blank line) of sonnet `n`, keeping
    /// the couplet's indentation.
    func rewriteLines(of n: Int, _ transform: (Int, String) -> String) throws {
        let path = sonnetFile(n)
        let text = String(decoding: try FileIO.read(path), as: UTF8.self)
        var lines = text.components(separatedBy: "\n")
        var index = 0
        for i in 2..<lines.count where !lines[i].trimmingCharacters(in: .whitespaces).isEmpty {
            let indent = String(lines[i].prefix { $0 == " " })
            lines[i] = indent + transform(index, String(lines[i].dropFirst(indent.count)))
            index += 1
        }
        try FileIO.writeAtomically(Array(lines.joined(separator: "\n").utf8), to: path)
    }

    func cleanup() { Harness.cleanup(dir) }
}

// MARK: - A folio process in the background

/// A `folio` process running on its own (for the lock and crash tests); output goes to files.
final class ClientProcess {
    private let process: Process
    private let dir: String

    init(_ args: [String]) throws {
        dir = Harness.tempDir("client-proc")
        _ = FileManager.default.createFile(atPath: dir + "/out", contents: nil)
        _ = FileManager.default.createFile(atPath: dir + "/err", contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: ClientTest.folioPath)
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        env["FOLIO_EDGE"] = ""
        env["FOLIO_CACHE_DIR"] = ""
        process.environment = env
        process.standardOutput = FileHandle(forWritingAtPath: dir + "/out")!
        process.standardError = FileHandle(forWritingAtPath: dir + "/err")!
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            Harness.cleanup(dir)
            throw error
        }
    }

    var pid: pid_t { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// SIGKILL, only while this process of ours runs; true if it was still running.
    @discardableResult
    func killNow() -> Bool {
        guard process.isRunning else { return false }
        kill(process.processIdentifier, SIGKILL)
        return true
    }

    /// Waits up to `timeout` seconds (then kills it); returns the exit status.
    func wait(timeout: Double) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { ClientTest.sleep(ms: 5) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitForExit()
        return process.terminationStatus
    }

    var stdout: String { String(decoding: (try? FileIO.read(dir + "/out")) ?? [], as: UTF8.self) }
    var stderr: String { String(decoding: (try? FileIO.read(dir + "/err")) ?? [], as: UTF8.self) }

    /// Kills (if needed), reaps, and removes the output files.
    func finish() {
        killNow()
        process.waitForExit()
        Harness.cleanup(dir)
    }
}

// MARK: - The cache dir

/// Reads and checks a client cache dir from the outside.
struct ClientCache {
    let dir: String

    var statePath: String { dir + "/state.plist" }
    var objectsDir: String { dir + "/objects" }

    struct State {
        var version: Int
        var manifestSHA256: String
        var lastResult: String
        var validatedAt: Date
        var raw: PlistValue
    }

    /// `state.plist`, decoded; nil when absent; throws when present but unreadable.
    func state() throws -> State? {
        guard FileIO.exists(statePath) else { return nil }
        let raw = try BinaryPlist.decode(try FileIO.read(statePath))
        guard let v = raw["version"]?.intValue, let sha = raw["manifestSHA256"]?.stringValue,
            let result = raw["lastResult"]?.stringValue, let validated = raw["validatedAt"]?.dateValue
        else { throw HarnessError("state.plist lacks version/manifestSHA256/lastResult/validatedAt: \(raw)") }
        return State(version: v, manifestSHA256: sha, lastResult: result, validatedAt: validated, raw: raw)
    }

    /// The current version's manifest: state.plist names it, it exists and hashes to manifestSHA256.
    /// Manifests are held as `manifests/<N>-<sha256>.plist` (or, in the first layout, `<N>.plist`).
    func currentManifest() throws -> Manifest {
        guard let s = try state() else { throw HarnessError("\(statePath) is missing") }
        let byHash = dir + "/manifests/\(s.version)-\(s.manifestSHA256).plist"
        let path = FileIO.exists(byHash) ? byHash : dir + "/manifests/\(s.version).plist"
        let bytes = try FileIO.read(path)
        guard ContentHash.sha256Hex(bytes) == s.manifestSHA256 else {
            throw HarnessError("\(path) hashes to \(ContentHash.sha256Hex(bytes)), but state.plist says \(s.manifestSHA256)")
        }
        return try Manifest(bytes: bytes)
    }

    func objectPath(_ sha: String) -> String { objectsDir + "/\(sha).plist" }

    /// Names of cached objects (`<sha>.plist`, temporary files excluded).
    func objectNames() -> [String] {
        ((try? FileIO.list(objectsDir)) ?? []).filter { !$0.hasPrefix(".") && $0.hasSuffix(".plist") }
    }

    /// Objects whose bytes do not hash to their name (should be none).
    func badObjects() -> [String] {
        objectNames().filter { name in
            guard let bytes = try? FileIO.read(objectsDir + "/" + name) else { return true }
            return ContentHash.sha256Hex(bytes) + ".plist" != name
        }
    }

    /// Entries of `manifest` whose object is present but does not match (size or hash).
    func mismatchedEntries(_ manifest: Manifest) -> [String] {
        manifest.entries.compactMap { e in
            let path = objectPath(e.sha256)
            guard FileIO.exists(path) else { return nil }
            guard let bytes = try? FileIO.read(path), bytes.count == e.size, ContentHash.sha256Hex(bytes) == e.sha256 else {
                return e.path
            }
            return nil
        }
    }

    /// Entries of `manifest` whose object is absent.
    func missingEntries(_ manifest: Manifest) -> [String] {
        manifest.entries.filter { !FileIO.exists(objectPath($0.sha256)) }.map(\.path)
    }

    /// Rewrites state.plist as if the manifest had been validated `seconds` ago (stale cache).
    func age(by seconds: Double) throws {
        guard case .dict(var d)? = try state()?.raw else { throw HarnessError("no state.plist to age") }
        d["validatedAt"] = .date(Date().addingTimeInterval(-seconds))
        try FileIO.writeAtomically(BinaryPlist.encode(.dict(d)), to: statePath)
    }
}

// MARK: - Sync summaries

/// `folio sync --json`, decoded.
struct ClientSyncSummary {
    var result: String
    var requests: Int
    var objectsFetched: Int
    var bytes: Int
    var versionBefore: Int?
    var versionAfter: Int?
    var message: String

    init(_ out: Harness.Output) throws {
        let v = try ClientTest.json(out)
        guard let result = v["result"]?.stringValue, let requests = v["requests"]?.intValue,
            let fetched = v["objectsFetched"]?.intValue, let bytes = v["bytes"]?.intValue
        else { throw HarnessError("sync --json lacks result/requests/objectsFetched/bytes: \(out.stdout)") }
        self.result = result
        self.requests = requests
        self.objectsFetched = fetched
        self.bytes = bytes
        versionBefore = v["versionBefore"]?.intValue
        versionAfter = v["versionAfter"]?.intValue
        message = v["message"]?.stringValue ?? ""
    }
}

/// Changes an object's bytes while keeping its size: one ASCII letter becomes another.
/// Returns candidates in order (the caller picks one whose gzip fits).
enum ClientTamper {
    static func variants(of bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        for i in stride(from: bytes.count / 3, to: bytes.count, by: 7) where (97...122).contains(bytes[i]) {
            var copy = bytes
            copy[i] = bytes[i] == 122 ? 121 : bytes[i] + 1
            out.append(copy)
            if out.count >= 40 { break }
        }
        return out
    }

    /// A valid gzip member of `bytes` exactly `length` bytes long (padded with an FCOMMENT
    /// header field), or nil if the compressed form is longer.
    static func gzip(_ bytes: [UInt8], length: Int) -> [UInt8]? {
        guard var z = try? Gzip.compress(bytes, level: 9), z.count <= length, z.count >= 10 else { return nil }
        let pad = length - z.count
        if pad > 0 {
            z[3] |= 0x10  // FCOMMENT: a zero-terminated comment follows the 10-byte header
            z.insert(contentsOf: [UInt8](repeating: 0x61, count: pad - 1) + [0], at: 10)
        }
        return z
    }
}
