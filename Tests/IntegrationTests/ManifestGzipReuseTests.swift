import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

@testable import FolioBuilder

/// A publish gzips its manifest taking the unchanged chunks from the gzip mirror of the current
/// one (``PublishSession/gzipManifest(_:current:channelDir:prefetched:)``): the bytes must be
/// those of a whole compression, whatever the mirror on disk or the chunks read ahead hold.
@Suite("Builder: the manifest's gzip from the last one's chunks")
struct ManifestGzipReuseTests {
    /// About 1 MB of manifest-like bytes (four chunks), and the same with a few bytes changed in the second.
    static func manifests() -> (current: [UInt8], edited: [UInt8]) {
        var current: [UInt8] = []
        var n = 0
        while current.count < 4 * Gzip.chunkSize - 1000 {
            current += Array("posts/post-\(n).plist \(ContentHash.sha256Hex(Array("post \(n)".utf8))) \(n * 37 % 4096)\n".utf8)
            n += 1
        }
        var edited = current
        let at = Gzip.chunkSize + 5000
        edited.replaceSubrange(at..<(at + 64), with: Array(ContentHash.sha256Hex(Array("edited".utf8)).utf8))
        return (current, edited)
    }

    @Test("from a mirror of the current manifest, from a stale or corrupt one, and from none: a whole compression's bytes")
    func sameBytes() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let (current, edited) = Self.manifests()
        let level = Steps.gzipLevel(edited.count)
        let whole = try Gzip.compress(edited, level: level)
        let mirror = dir + "/" + PublishedLayout.manifestGzip
        // None on disk.
        #expect(try PublishSession.gzipManifest(edited, current: current, channelDir: dir) == whole)
        // The current manifest's mirror: three of four chunks taken, the same bytes.
        try FileIO.writeAtomically(try Gzip.compress(current, level: level), to: mirror, sync: false)
        let chunks = try #require(GzipChunks(recovering: try FileIO.read(mirror), of: current, level: level))
        #expect(try Gzip.compress(edited, level: level, reusing: chunks).reusedChunks == 3)
        #expect(try PublishSession.gzipManifest(edited, current: current, channelDir: dir) == whole)
        // A mirror of another version (a build killed before writing mirrors), and a corrupt one.
        try FileIO.writeAtomically(try Gzip.compress(Array(current.reversed()), level: level), to: mirror, sync: false)
        #expect(try PublishSession.gzipManifest(edited, current: current, channelDir: dir) == whole)
        var corrupt = try Gzip.compress(current, level: level)
        corrupt[corrupt.count / 2] ^= 0xFF
        try FileIO.writeAtomically(corrupt, to: mirror, sync: false)
        #expect(try PublishSession.gzipManifest(edited, current: current, channelDir: dir) == whole)
        // No current manifest (a first publish).
        #expect(try PublishSession.gzipManifest(edited, current: nil, channelDir: dir) == whole)
    }

    @Test("chunks read ahead: taken only when they are the current manifest's, at the same level")
    func prefetchedChunks() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let (current, edited) = Self.manifests()
        let level = Steps.gzipLevel(edited.count)
        let whole = try Gzip.compress(edited, level: level)
        let ahead = try #require(GzipChunks(recovering: try Gzip.compress(current, level: level), of: current, level: level))
        // No mirror on disk: the chunks read ahead are the only ones to take.
        #expect(try PublishSession.gzipManifest(edited, current: current, channelDir: dir, prefetched: ahead) == whole)
        // Chunks of another manifest, or at another level, are not taken: the same bytes.
        let other = Array(current.reversed())
        let stale = try #require(GzipChunks(recovering: try Gzip.compress(other, level: level), of: other, level: level))
        #expect(try PublishSession.gzipManifest(edited, current: current, channelDir: dir, prefetched: stale) == whole)
        let otherLevel = try #require(GzipChunks(recovering: try Gzip.compress(current, level: 1), of: current, level: 1))
        #expect(try PublishSession.gzipManifest(edited, current: current, channelDir: dir, prefetched: otherLevel) == whole)
    }
}
