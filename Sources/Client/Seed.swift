import FolioCore
import Foundation

/// The snapshot compiled into the client (see SeedData.swift), for the first run offline.
enum Seed {
    /// The decoded seed, or nil if the bundled data is unusable (which a test guards against).
    static let archive: SeedArchive? = {
        let text = seedArchiveBase64.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else { return nil }
        return try? SeedArchive.decode(Array(data), verify: false)  // each object is verified when read
    }()

    static let manifest: Manifest? = archive.flatMap { try? Manifest(bytes: $0.manifestBytes) }
}
