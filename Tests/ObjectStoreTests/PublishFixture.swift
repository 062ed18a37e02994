import FolioObjectStore
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation

/// A copy of content/, built by the real `folio-build` into `root`, and published by the real
/// `folio-build publish`.
struct PublishFixture {
    let dir: String
    let content: String
    var root: String { dir + "/public" }

    init(_ label: String) {
        dir = Harness.tempDir(label)
        content = Harness.copyContent(to: dir)
    }

    func cleanup() { Harness.cleanup(dir) }

    /// Builds the next version; throws with the builder's output when it fails.
    @discardableResult
    func build() throws -> Manifest {
        let out = try Harness.run(
            Harness.binary("folio-build"), ["--content", content, "--output", root, "--quiet"],
            env: ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "s3-tests"])
        guard out.status == 0 else { throw HarnessError("folio-build failed: \(out.stdout) \(out.stderr)") }
        return try Manifest(bytes: FileIO.read(root + "/manifest.plist"))
    }

    /// Writes `text` to `content/relative` (a new or changed source file).
    func write(_ relative: String, _ bytes: [UInt8]) throws {
        let path = content + "/" + relative
        try FileManager.default.createDirectory(atPath: FileIO.parent(of: path), withIntermediateDirectories: true)
        try FileIO.writeAtomically(bytes, to: path)
    }

    /// `folio-build publish ROOT DESTINATION ARGS` against `server`.
    func publish(_ server: ObjectStoreServer, _ destination: String, _ args: [String] = [], env: [String: String] = [:]) throws -> Harness.Output {
        try Harness.run(
            Harness.binary("folio-build"), ["publish", root, destination] + args, env: server.environment().merging(env) { $1 })
    }

    /// The files of a published directory a publish uploads (without the builder's dot files).
    static func published(_ root: String) -> [String: [UInt8]] {
        Harness.snapshot(root).filter { !FileIO.lastComponent(of: $0.key).hasPrefix(".") }
    }

    /// Bytes that do not compress (a seeded generator, so runs repeat).
    static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count { withUnsafeBytes(of: rng.next()) { out += $0 } }
        return Array(out.prefix(count))
    }

    /// The counts of a publish's summary line: files uploaded and files already there.
    static func counts(_ out: Harness.Output) -> (uploaded: Int, skipped: Int)? {
        guard let line = out.stdout.split(separator: "\n").last(where: { $0.hasPrefix("published version") }) else { return nil }
        let words = line.split(separator: " ")
        guard let up = words.firstIndex(of: "files").flatMap({ Int(words[$0 - 1]) }),
            let there = words.firstIndex(of: "already").flatMap({ Int(words[$0 - 1]) })
        else { return nil }
        return (up, there)
    }
}
