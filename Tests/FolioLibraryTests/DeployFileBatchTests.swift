import FolioTestSupport
import Testing

@testable import FolioPublished

/// The body of `POST /.folio/deploy/ID/files`: files survive the round trip byte for byte, and
/// a body that is not one is refused with where.
@Suite("deploy: batches of files")
struct DeployFileBatchTests {
    @Test("files of any bytes, newlines and empty ones included, come back as sent", arguments: 0..<10 as Range<UInt64>)
    func roundTrip(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let files = (0..<rng.int(1...20)).map { i in ("objects/\(i).plist", rng.bytes(rng.pick([0, 1, 10, 5000]))) }
        let decoded = try DeployFileBatch.decode(DeployFileBatch.encode(files))
        #expect(decoded.map(\.relative) == files.map(\.0))
        #expect(decoded.map { Array($0.bytes) } == files.map(\.1))
    }

    @Test("a body that is not a batch says which file and where")
    func refused() {
        let cases: [([UInt8], String)] = [
            (Array("a\n".utf8), "file 1 of the batch has no size line at byte 2"),
            (Array("a\n-1\n".utf8), "a in the batch has size '-1'"),
            (Array("a\n+1\nx".utf8), "a in the batch has size '+1'"),
            (Array("a\n1\nxb\n5\nab".utf8), "b in the batch is cut short: 2 of its 5 bytes came"),
            (Array("\n1\nx".utf8), "file 1 of the batch has no path line at byte 0"),
            (Array(String(repeating: "p", count: 5000).utf8) + [10], "no path line"),
        ]
        for (body, words) in cases {
            #expect(throws: DeployFileBatchError.self) { try DeployFileBatch.decode(body) }
            do {
                _ = try DeployFileBatch.decode(body)
            } catch {
                #expect(error.description.contains(words), "\(error.description)")
            }
        }
    }
}
