import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// A published version bundled with an app: what it reads on the first run and offline until a
/// sync succeeds. `folio-build --seed FILE` writes one.
public struct FolioSeed: Sendable {
    package let archive: SeedArchive
    package let manifest: Manifest

    /// Reads a seed from the bytes `folio-build --seed` wrote; each object is verified when read.
    public init(bytes: [UInt8]) throws(FolioError) {
        do {
            archive = try SeedArchive.decode(bytes, verify: false)
            manifest = try Manifest(bytes: archive.manifestBytes)
        } catch {
            throw FolioError(.invalidContent, "the seed is not a Folio seed archive: \(error)", underlying: error)
        }
    }

    /// Reads a seed file.
    public init(contentsOf path: String) throws(FolioError) {
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch {
            throw FolioError(.io, "cannot read the seed \(path): \(error)", path: path, underlying: error)
        }
        do { try self.init(bytes: bytes) } catch {
            throw FolioError(.invalidContent, "\(path): \(error.message)", path: path, underlying: error)
        }
    }

    /// The seed's published version.
    public var version: Int { manifest.version }
    /// The publish history the seed's version belongs to.
    public var history: String? { manifest.history }
    /// When the seed's version was published.
    public var publishedAt: Date { manifest.createdAt }
}

/// Which of the cache and the seed to read.
package enum SeedChoice {
    /// The seed is read only when the cache holds no verified version, or when the seed is a
    /// newer version of the same publish history. Versions of two histories (two `public/`
    /// directories published apart) are not comparable, so a verified cache always wins then.
    package static func prefersSeed(_ seed: Manifest?, over cached: Manifest?) -> Bool {
        guard let seed else { return false }
        guard let cached else { return true }
        guard let history = seed.history, history == cached.history else { return false }
        return seed.version > cached.version
    }
}
