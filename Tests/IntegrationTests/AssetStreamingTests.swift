import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// Assets gzip would not shrink (images, video, archives) are hashed and copied into `objects/`
/// a chunk at a time: a build's memory does not grow with them.
@Suite("folio-build: large assets streamed", .serialized)
struct AssetStreamingTests {
    let build = Harness.binary("folio-build")
    let env = ["SOURCE_DATE_EPOCH": "1700000000", "FOLIO_SOURCE_REVISION": "test"]

    /// Runs `args` and returns its exit status and the peak RSS of the process in KiB (through
    /// Python's `getrusage` of its children).
    func peakRSS(_ args: [String]) throws -> (status: Int32, kib: Int, stderr: String) {
        let script = "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
            + "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)"
        let r = try Harness.run("/usr/bin/env", ["python3", "-c", script] + args, env: env)
        let kib = Int(r.stdout.split(separator: "\n").last.map(String.init) ?? "") ?? -1
        return (r.status, kib, r.stderr)
    }

    @Test("a 96 MiB video is published byte for byte while the build's peak RSS stays well under its size")
    func largeVideo() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let content = ContentKindBuildTests.content(dir, ["about.json": "{\"title\": \"Clips\"}"])
        let video = content + "/clips/intro.mp4"
        try FileIO.makeDirectory(content + "/clips")
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        var bytes = [UInt8]()
        for _ in 0..<96 { bytes += random.readData(ofLength: 1 << 20) }
        try FileIO.writeAtomically(bytes, to: video, sync: false)

        let r = try peakRSS([build, "--content", content, "--output", dir + "/public", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.kib > 0 && r.kib < 64 * 1024, "peak RSS \(r.kib) KiB for a 96 MiB asset")
        let manifest = try Manifest(bytes: try FileIO.read(dir + "/public/manifest.plist"))
        let entry = try #require(manifest.entry("clips/intro.mp4"))
        #expect(entry.size == bytes.count && entry.sha256 == ContentHash.sha256Hex(bytes) && entry.contentType == "video/mp4")
        #expect(entry.gzipSize == nil)
        #expect(try ContentHash.sha256Hex(file: dir + "/public/" + entry.objectPath).hex == entry.sha256)
        #expect(try FileIO.list(dir + "/public/objects").allSatisfy { !$0.hasPrefix(".tmp-") })

        // Edited, it is hashed and published again.
        bytes[50 << 20] ^= 0xff
        try FileIO.writeAtomically(bytes, to: video, sync: false)
        let again = try Harness.run(build, ["--content", content, "--output", dir + "/public"], env: env)
        #expect(again.status == 0, "\(again.stderr)")
        let edited = try #require(try Manifest(bytes: try FileIO.read(dir + "/public/manifest.plist")).entry("clips/intro.mp4"))
        #expect(edited.sha256 == ContentHash.sha256Hex(bytes))
        #expect(try ContentHash.sha256Hex(file: dir + "/public/" + edited.objectPath).hex == edited.sha256)
    }
}
