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
    /// Object files (relative to the root) a deploy staged and checked just now: read, not
    /// decoded and hashed again (their sizes are still checked).
    private let checked: Set<String>

    /// An empty set over `root`, reusing what `previous` verified and trusting `checked`.
    init(root: String, budget: Int, previous: [String: LoadedObject], checked: Set<String> = []) {
        self.root = root
        self.budget = budget
        self.previous = previous
        self.checked = checked
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
        switch checked.contains(entry.objectPath) ? (bytes.count == entry.size ? .matches : .wrongSize(bytes.count)) : entry.check(bytes) {
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
            obj.gzip = try loadVariant(.gzip, entry, gzPath, size: size, object: bytes)
        }
        if let brPath = entry.brotliObjectPath, let size = entry.brSize {
            obj.brotli = try loadVariant(.brotli, entry, brPath, size: size, object: bytes)
        }
        return obj
    }

    /// Reads one compressed variant (at `relative` under the root) and checks that it has the
    /// manifest's size and decodes to the object (unless a deploy just checked it).
    private mutating func loadVariant(
        _ coding: ContentCoding, _ entry: Manifest.Entry, _ relative: String, size: Int, object: [UInt8]
    ) throws -> LoadedVariant {
        let full = root + "/" + relative
        let encoded: [UInt8]
        do { encoded = try FileIO.read(full) } catch { throw SiteLoadError("\(entry.path): \(error)") }
        guard encoded.count == size else {
            throw SiteLoadError("\(entry.path): \(full) is \(encoded.count) bytes, the manifest says \(size)")
        }
        let etag = checked.contains(relative) ? Self.etag(coding, encoded, entry) : try Self.verified(coding, encoded, entry, full, object: object)
        var variant = LoadedVariant(body: nil, path: full, size: size, etag: etag)
        if encoded.count <= budget {
            variant.body = ByteBuffer(bytes: encoded)
            budget -= encoded.count
        }
        return variant
    }

    /// The strong ETag of a variant that decodes to `object`; an error when it does not.
    private static func verified(_ coding: ContentCoding, _ encoded: [UInt8], _ entry: Manifest.Entry, _ full: String, object: [UInt8]) throws -> String {
        let (decoded, etag) = try decode(coding, encoded, entry, full)
        guard decoded == object else { throw SiteLoadError("\(entry.path): \(full) does not decode to the object") }
        return etag
    }

    /// The strong ETag of a variant, unchecked.
    private static func etag(_ coding: ContentCoding, _ encoded: [UInt8], _ entry: Manifest.Entry) -> String {
        switch coding {
        case .identity: ETags.identity(entry.sha256)
        case .gzip: ETags.gzip(entry.sha256, gzipBytes: encoded)
        case .brotli: ETags.brotli(entry.sha256, brotliBytes: encoded)
        }
    }

    /// A variant's bytes decoded (at most the object's size) and its strong ETag.
    private static func decode(
        _ coding: ContentCoding, _ encoded: [UInt8], _ entry: Manifest.Entry, _ full: String
    ) throws -> (decoded: [UInt8], etag: String) {
        do {
            switch coding {
            case .identity: return (encoded, etag(coding, encoded, entry))
            case .gzip: return (try Gzip.decompress(encoded, maxSize: entry.size), etag(coding, encoded, entry))
            case .brotli: return (try Brotli.decompress(encoded, maxSize: entry.size), etag(coding, encoded, entry))
            }
        } catch { throw SiteLoadError("\(entry.path): \(full): \(error)") }
    }
}
