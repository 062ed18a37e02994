import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A built published directory and an edge to deploy it to: `content/` copied, a small part
/// of it published as version 1 (the edge's root starts as a copy of that), then all of it
/// published as version 2 into `src`, the directory the tests deploy.
struct DeploySetup {
    let dir: String
    let content: String
    /// The directory folio-build writes and `folio-build publish` deploys.
    let src: String
    /// The edge's root.
    let edgeRoot: String
    /// A copy of version 1 as built (for a rollback).
    let v1: String
    let tokenFile: String
    let edge: EdgeProcess

    static let token = "deploy-token-0123456789abcdef"

    /// The setup, with the edge started with `--admin-listen 127.0.0.1:0 --deploy-token-file`
    /// and `edgeArgs`; `buildArgs` go to every build.
    static func make(_ label: String, edgeArgs: [String] = [], adminListen: Bool = true, buildArgs: [String] = []) throws -> DeploySetup {
        let dir = Harness.tempDir(label)
        do {
            let content = Harness.copyContent(to: dir)
            let small = try smallContent(dir)
            let src = dir + "/public"
            try build(small, into: src, buildArgs)
            let v1 = dir + "/v1"
            let edgeRoot = dir + "/edge"
            try FileManager.default.copyItem(atPath: src, toPath: v1)
            try FileManager.default.copyItem(atPath: src, toPath: edgeRoot)
            try build(content, into: src, buildArgs)
            let tokenFile = dir + "/token"
            try FileIO.writeAtomically(Array((token + "\n").utf8), to: tokenFile)
            let admin = adminListen ? ["--admin-listen", "127.0.0.1:0"] : []
            let edge = try EdgeProcess.start(
                root: edgeRoot, args: ["--threads", "1", "--watch-interval-ms", "100", "--deploy-token-file", tokenFile] + admin + edgeArgs)
            return DeploySetup(dir: dir, content: content, src: src, edgeRoot: edgeRoot, v1: v1, tokenFile: tokenFile, edge: edge)
        } catch {
            Harness.cleanup(dir)
            throw error
        }
    }

    /// A copy of content/ with only its first ten sonnets.
    private static func smallContent(_ dir: String) throws -> String {
        let small = dir + "/small"
        try FileManager.default.copyItem(atPath: Harness.repoRoot + "/content", toPath: small)
        for name in try FileIO.list(small + "/sonnets") where name.hasSuffix(".txt") && name > "010.txt" {
            try FileManager.default.removeItem(atPath: small + "/sonnets/" + name)
        }
        return small
    }

    static func build(_ content: String, into output: String, _ extra: [String] = []) throws {
        let r = try Harness.run(
            Harness.binary("folio-build"), ["--content", content, "--output", output, "--quiet"] + extra, env: EdgeFixture.buildEnv)
        guard r.status == 0 else { throw HarnessError("folio-build failed (\(r.status)): \(r.stderr)") }
    }

    /// Rebuilds `src` from the (edited) content.
    func rebuild(_ extra: [String] = []) throws { try Self.build(content, into: src, extra) }

    func cleanup() {
        edge.stop()
        Harness.cleanup(dir)
    }

    /// The admin listener's URL (or the only listener's).
    var url: String { edge.adminPort.map { "http://127.0.0.1:\($0)" } ?? edge.baseURL }
    var adminPort: Int { edge.adminPort ?? edge.port }

    /// `folio-build publish DIR URL --token-file FILE ARGS`.
    func deploy(_ args: [String] = [], from dir: String? = nil, url: String? = nil, env: [String: String] = [:]) throws -> Harness.Output {
        try Harness.run(
            Harness.binary("folio-build"), ["publish", dir ?? src, url ?? self.url, "--token-file", tokenFile] + args, env: env)
    }

    /// The number N in the deploy's `objects: N uploaded` line.
    static func objectsUploaded(_ out: Harness.Output) -> Int? {
        guard let line = out.stdout.split(separator: "\n").first(where: { $0.hasPrefix("objects: ") }) else { return nil }
        return Int(line.dropFirst("objects: ".count).prefix { $0.isNumber })
    }

    /// The number N in the deploy's `objects: … uploaded, N rebuilt by the edge` line.
    static func objectsRebuilt(_ out: Harness.Output) -> Int? {
        guard let line = out.stdout.split(separator: "\n").first(where: { $0.hasPrefix("objects: ") }),
            let range = line.range(of: " uploaded, ")
        else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    /// The object files under `root` (`objects/…`, variants included).
    static func objectFiles(_ root: String) throws -> Set<String> {
        Set(try FileIO.list(root + "/objects").filter { !$0.hasPrefix(".") })
    }

    /// The edge's production manifest on disk.
    func edgeManifestBytes() throws -> [UInt8] { try FileIO.read(edgeRoot + "/manifest.plist") }

    /// Edits sonnet 18's first line and builds `src` again; the object files the edge lacks now
    /// (the sonnet, index.plist, all.plist and their variants).
    func editSonnet(sourceLocation: SourceLocation = #_sourceLocation) throws -> Set<String> {
        try EdgeIntegration.EdgePublishTests.editSonnet18(in: content, to: "winter’s day")
        try rebuild()
        let changed = try Self.objectFiles(src).subtracting(try Self.objectFiles(edgeRoot))
        #expect(!changed.isEmpty && changed.count <= 9, "\(changed)", sourceLocation: sourceLocation)
        return changed
    }

    /// Requires a deploy of an edit to have succeeded sending at most the `changed` objects'
    /// brotli variants: the edge rebuilt the objects from the delta and made their gzip ones.
    static func expectEditDeployed(_ edit: Harness.Output, changed: Set<String>, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(edit.status == 0, "\(edit.stderr)", sourceLocation: sourceLocation)
        let sent = objectsUploaded(edit) ?? 99
        #expect(sent <= changed.count { $0.hasSuffix(".br") }, "\(edit.stdout)", sourceLocation: sourceLocation)
        #expect(sent + (objectsRebuilt(edit) ?? 0) == changed.count, "\(edit.stdout)", sourceLocation: sourceLocation)
    }

    /// Requires every file of `src` (but dot files) on the edge's disk with the same bytes: what
    /// the edge rebuilt (objects, variants, mirrors, versioned manifests, deltas) included.
    func expectSameFiles(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let files = FileManager.default.enumerator(atPath: src)?.allObjects.compactMap { $0 as? String } ?? []
        var differing: [String] = []
        for relative in files where !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: src + "/" + relative, isDirectory: &isDir), !isDir.boolValue else { continue }
            if (try? FileIO.read(edgeRoot + "/" + relative)) != (try FileIO.read(src + "/" + relative)) { differing.append(relative) }
        }
        #expect(differing.isEmpty, "the edge's copy differs: \(differing.prefix(10))", sourceLocation: sourceLocation)
    }

    /// Requires the edge to serve `version` whole: /healthz, the manifest as on its disk, and
    /// every object that manifest names; and no staging left behind (unless `staging`).
    func expectServesWhole(_ version: Int, staging: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try edge.requireVersion(version)
        let bytes = try edgeManifestBytes()
        let manifest = try Manifest(bytes: bytes)
        #expect(manifest.version == version, sourceLocation: sourceLocation)
        let served = try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist")
        #expect(served.status == 200 && served.body == bytes, "the edge serves another manifest than its disk's", sourceLocation: sourceLocation)
        for entry in manifest.entries.prefix(40) {
            let r = try RawHTTPConnection.fetch(port: edge.port, "/" + entry.objectPath)
            #expect(r.status == 200 && entry.matches(r.body), "\(entry.path)", sourceLocation: sourceLocation)
        }
        if !staging {
            // An upload still arriving when the client aborted is dropped as it ends.
            var left = (try? FileIO.list(edgeRoot + "/.deploy")) ?? []
            for _ in 0..<20 where !left.isEmpty {
                ClientTest.sleep(ms: 100)
                left = (try? FileIO.list(edgeRoot + "/.deploy")) ?? []
            }
            #expect(left.isEmpty, "staging left behind: \(left)", sourceLocation: sourceLocation)
        }
    }
}

/// Raw requests to the deploy endpoints (the admin listener is cleartext HTTP/1.1).
enum DeployRaw {
    /// Sends `method target` with `body` and the token on a fresh connection; the response.
    static func request(port: Int, _ method: String, _ target: String, body: [UInt8] = [], token: String = DeploySetup.token) throws -> EdgeResponse {
        let c = try RawHTTPConnection(port: port)
        defer { c.close() }
        let head = RawHTTPConnection.head(
            method, target, headers: [("Authorization", "Bearer \(token)"), ("Content-Length", "\(body.count)")])
        try c.send(Array(head.utf8) + body)
        return try c.readResponse(method: method)
    }

    /// Begins a deploy held by `holder` of a production manifest the edge does not serve (and
    /// no files); its id.
    static func begin(port: Int, holder: String, version: Int, sha256: String = String(repeating: "0", count: 64), size: Int = 1) throws -> String {
        let manifest = #"{"version":\#(version),"sha256":"\#(sha256)","size":\#(size)}"#
        let body = #"{"protocol":5,"version":\#(version),"holder":"\#(holder)","force":false,"channels":{"production":\#(manifest)},"files":[]}"#
        let r = try request(port: port, "POST", "/.folio/deploy", body: Array(body.utf8))
        guard r.status == 200, let object = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any], let id = object["id"] as? String
        else { throw HarnessError("begin: \(r.status) \(r.text)") }
        return id
    }
}

/// A `folio-build` process running in the background (to be killed mid-deploy).
final class BuilderProcess {
    private let process = Process()
    private let dir = Harness.tempDir("builder-proc")

    init(_ args: [String]) throws {
        _ = FileManager.default.createFile(atPath: dir + "/out", contents: nil)
        _ = FileManager.default.createFile(atPath: dir + "/err", contents: nil)
        process.executableURL = URL(fileURLWithPath: Harness.binary("folio-build"))
        process.arguments = args
        process.standardOutput = FileHandle(forWritingAtPath: dir + "/out")!
        process.standardError = FileHandle(forWritingAtPath: dir + "/err")!
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// SIGKILL, only while this process of ours runs; true when it was still running.
    @discardableResult
    func killNow() -> Bool {
        guard process.isRunning else { return false }
        kill(process.processIdentifier, SIGKILL)
        return true
    }

    var pid: pid_t { process.processIdentifier }
    var stderr: String { String(decoding: (try? FileIO.read(dir + "/err")) ?? [], as: UTF8.self) }

    /// Kills (if needed), reaps, removes the output files; whether it ended by a signal.
    @discardableResult
    func finish() -> Bool {
        killNow()
        process.waitForExit()
        Harness.cleanup(dir)
        return process.terminationReason == .uncaughtSignal
    }
}
