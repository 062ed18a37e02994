import FolioPublished
import FolioSupport
import FolioToolSupport
import NIOCore

/// The verified objects of one load, by hash, and the memory budget they draw on.
///
/// A value: a load copies it before trying a channel and puts the copy back when the channel
/// is refused, so nothing of a refused channel stays (budget included).
struct ObjectSet {
    /// The published root; objects are under its `objects/`.
    let root: String
    /// The objects loaded or kept so far.
    private(set) var objects: [String: LoadedObject] = [:]
    /// The object bytes held in memory (kept objects of the replaced version not counted).
    private(set) var bytesInMemory = 0
    /// Bytes still allowed in memory; past it objects are streamed from their files.
    private var budget: Int
    /// The objects of the version being replaced, reused when they fit.
    private let previous: [String: LoadedObject]

    /// An empty set over `root`, reusing what `previous` verified.
    init(root: String, budget: Int, previous: [String: LoadedObject]) {
        self.root = root
        self.budget = budget
        self.previous = previous
    }

    /// Loads and verifies every object `entries` name that is not in the set yet.
    mutating func load(_ entries: [Manifest.Entry], lastModified: Int64) throws {
        for entry in entries where objects[entry.sha256] == nil {
            let obj: LoadedObject
            if let old = previous[entry.sha256], old.fits(entry) {
                obj = old
                budget -= old.bytesInMemory
            } else {
                obj = try loadObject(entry, lastModified: lastModified)
            }
            objects[entry.sha256] = obj
            bytesInMemory += obj.bytesInMemory
        }
    }

    /// Keeps the previous version's objects that `entries` name, as they are (verified when loaded).
    mutating func keep(_ entries: [Manifest.Entry]) {
        for entry in entries where objects[entry.sha256] == nil {
            if let old = previous[entry.sha256] { objects[entry.sha256] = old }
        }
    }

    /// Reads and verifies one object and its variants; keeps them in memory while the budget lasts.
    private mutating func loadObject(_ entry: Manifest.Entry, lastModified: Int64) throws -> LoadedObject {
        let path = root + "/" + entry.objectPath
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path) } catch { throw SiteLoadError("\(entry.path): \(error)") }
        switch entry.check(bytes) {
        case .matches: break
        case .wrongSize(let size): throw SiteLoadError("\(entry.path): \(path) is \(size) bytes, the manifest says \(entry.size)")
        case .wrongHash: throw SiteLoadError("\(entry.path): \(path) does not hash to \(entry.sha256)")
        }
        var obj = LoadedObject(identity: nil, identityPath: path, size: entry.size, sha256: entry.sha256, lastModified: lastModified)
        if bytes.count <= budget {
            obj.identity = ByteBuffer(bytes: bytes)
            budget -= bytes.count
        }
        if let gzPath = entry.gzipObjectPath, let size = entry.gzipSize {
            obj.gzip = try loadVariant(.gzip, entry, root + "/" + gzPath, size: size, object: bytes)
        }
        if let brPath = entry.brotliObjectPath, let size = entry.brSize {
            obj.brotli = try loadVariant(.brotli, entry, root + "/" + brPath, size: size, object: bytes)
        }
        return obj
    }

    /// Reads one compressed variant and checks that it has the manifest's size and decodes to
    /// the object.
    private mutating func loadVariant(
        _ coding: ContentCoding, _ entry: Manifest.Entry, _ full: String, size: Int, object: [UInt8]
    ) throws -> LoadedVariant {
        let encoded: [UInt8]
        do { encoded = try FileIO.read(full) } catch { throw SiteLoadError("\(entry.path): \(error)") }
        guard encoded.count == size else {
            throw SiteLoadError("\(entry.path): \(full) is \(encoded.count) bytes, the manifest says \(size)")
        }
        let (decoded, etag) = try Self.decode(coding, encoded, entry, full)
        guard decoded == object else { throw SiteLoadError("\(entry.path): \(full) does not decode to the object") }
        var variant = LoadedVariant(body: nil, path: full, size: size, etag: etag)
        if encoded.count <= budget {
            variant.body = ByteBuffer(bytes: encoded)
            budget -= encoded.count
        }
        return variant
    }

    /// A variant's bytes decoded (at most the object's size) and its strong ETag.
    private static func decode(
        _ coding: ContentCoding, _ encoded: [UInt8], _ entry: Manifest.Entry, _ full: String
    ) throws -> (decoded: [UInt8], etag: String) {
        do {
            switch coding {
            case .identity: return (encoded, ETags.identity(entry.sha256))
            case .gzip: return (try Gzip.decompress(encoded, maxSize: entry.size), ETags.gzip(entry.sha256, gzipBytes: encoded))
            case .brotli: return (try Brotli.decompress(encoded, maxSize: entry.size), ETags.brotli(entry.sha256, brotliBytes: encoded))
            }
        } catch { throw SiteLoadError("\(entry.path): \(full): \(error)") }
    }
}
