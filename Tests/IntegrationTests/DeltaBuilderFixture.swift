import FolioPlist
import FolioSupport
import FolioToolSupport
import Foundation

@testable import FolioBuilder

/// Publishes plist values as entries through the builder's own publisher (no content/
/// directory), for deltas between objects that real content does not produce.
enum DeltaBuilderFixture {
    static func publish(_ root: String, _ entries: [String: PlistValue]) throws {
        let artifacts = try entries.map { path, value in
            let bytes = BinaryPlist.encode(value)
            let gzip = try Gzip.compress(bytes)
            var artifact = Artifact(path: path, bytes: bytes, sha256: ContentHash.sha256Hex(bytes))
            artifact.gzip = gzip.count < bytes.count ? gzip : nil
            return artifact
        }
        let session = try PublishSession(root: root)
        try session.writeObjects(artifacts)
        _ = try session.publish(artifacts, PublishOptions(createdAt: Date(timeIntervalSince1970: 1_700_000_000), reproducible: true))
    }
}
