import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport

extension Steps {
    /// The gzip level for an object of `size` bytes (``PublishedCompression/gzipLevel(_:)``).
    package static func gzipLevel(_ size: Int) -> Int32 { PublishedCompression.gzipLevel(size) }

    /// Every item's object bytes and hash, on all cores, with the project file's cache policy.
    /// A large plist's first gzip chunks are compressed on another core while the rest of it is
    /// encoded.
    package static func encode(_ items: [CompiledItem], _ project: BuildProject) -> [Artifact] {
        let contentDir = project.config.contentDir
        // Without a rule that sets either, no path is matched (20,000 source paths made for nothing).
        let ruled = project.file.rules.contains { $0.cache != nil || $0.minimumAppVersion != nil }
        return Parallel.map(items) { item in
            var a = artifact(item)
            a.kind = item.kind
            a.locale = item.locale
            a.sources = item.sources
            a.cache = item.ruleCache
            guard ruled else { return a }
            // A file's own entry matches by its source path too; an index (of however many
            // files) by its own path, else its rule's policy.
            let perFile = item.sources.count == 1 && item.kind != "index"
            let source = perFile ? IndexBuilder.relative(item.sources[0], contentDir) : item.path
            a.cache = project.file.cache(for: source, item.path) ?? item.ruleCache
            a.minimumAppVersion = project.file.minimumAppVersion(for: source, item.path)
            return a
        }
    }

    private static func artifact(_ item: CompiledItem) -> Artifact {
        switch item.body {
        case .reused(let entry):
            return Artifact(reusing: entry, source: item.sources.first ?? "")
        case .bytes(let bytes, let compressible):
            var a = Artifact(path: item.path, bytes: bytes, sha256: ContentHash.sha256Hex(bytes), contentType: item.contentType)
            a.compressible = compressible
            return a
        case .file(let path, let size, let sha256):
            var a = Artifact(path: item.path, bytes: [], sha256: sha256, contentType: item.contentType)
            a.sourceFile = (path, size)
            a.compressible = false
            return a
        case .plist(let value):
            var stream: GzipChunkStream?
            let bytes = BinaryPlist.encode(value, chunkSize: Gzip.chunkSize) { chunk in
                // Only objects larger than a chunk get here, so the level is the large one.
                if stream == nil { stream = GzipChunkStream(level: gzipLevel(Gzip.chunkSize + 1)) }
                stream?.submit(Array(chunk))
            }
            return Artifact(path: item.path, bytes: bytes, sha256: ContentHash.sha256Hex(bytes), gzipStream: stream)
        }
    }

    /// Adds each object's gzip variant (when compressible and smaller) and, with a brotli
    /// setting, its brotli variant (when smaller than the gzip one), compressing on all cores.
    ///
    /// An object already published keeps its variants: the manifest must describe the bytes on
    /// disk (another compressor or level would compress differently), and it saves the work.
    /// One that does not decode to the object (damaged on disk) is compressed again and replaced.
    package static func compress(_ artifacts: consuming [Artifact], root: String, brotli: BrotliSetting? = .default) throws(GzipError) -> [Artifact] {
        // Only new compressible objects are compressed, copied or looked at: on a rebuild, the
        // few that changed, not the thousands reused from the build cache.
        let todo = artifacts.indices.filter { artifacts[$0].reused == nil && artifacts[$0].compressible }
        for i in artifacts.indices where artifacts[i].gzipStream != nil && !(artifacts[i].reused == nil && artifacts[i].compressible) {
            artifacts[i].gzipStream?.cancel()
            artifacts[i].gzipStream = nil
        }
        let work = todo.map { artifacts[$0] }
        // A first publish has no `objects/`: no variant on disk to look for, object by object.
        let published = FileIO.exists(PublishedLayout.path(root, PublishedLayout.objects)) ? root : nil
        let plans = brotliPlans(work, root: published, brotli)
        let compressed = Parallel.map(Array(zip(work, plans))) { artifact, plan in
            Result { () throws(GzipError) in try variants(artifact, stream: artifact.gzipStream, root: published, brotli: plan) }
        }
        for (i, result) in zip(todo, compressed) {
            let v = try result.get()
            (artifacts[i].gzip, artifacts[i].replaceGzip) = (v.gzip, v.replaceGzip)
            (artifacts[i].brotli, artifacts[i].replaceBrotli) = (v.brotli, v.replaceBrotli)
            artifacts[i].gzipStream = nil
        }
        return artifacts
    }

    /// Each artifact's brotli plan under `setting`. Under a budget (the default), an object
    /// already published is not new: it keeps the variants it was published with, a damaged
    /// `.br` alone being compressed again, and spends no budget (a rebuild that compiles it
    /// again, its file being newer than the build cache's scan, changes no entry). `root` is nil
    /// when it has no `objects/` yet.
    private static func brotliPlans(_ work: [Artifact], root: String?, _ setting: BrotliSetting?) -> [BrotliPlan] {
        guard let setting else { return work.map { _ in .none } }
        let published = work.map { a in
            guard let root, setting.budget != nil else { return false }
            return FileIO.exists(PublishedLayout.path(root, PublishedLayout.object(a.sha256, ext: a.objectExtension)))
        }
        let sizes = zip(work, published).map { a, old in old ? nil : a.bytes.count }
        return zip(setting.qualities(for: sizes), zip(work, published)).map { quality, item in
            let (artifact, old) = item
            if old { return .repair(brotliLevel(setting.quality, artifact.bytes.count)) }
            return quality.map { .compress($0) } ?? .keepOnly
        }
    }

    /// The brotli quality for `size` bytes at the build's `quality`: at most 5 past 1 MiB (a large
    /// manifest or data file in tens of milliseconds, not seconds).
    package static func brotliLevel(_ quality: Int32, _ size: Int) -> Int32 { PublishedCompression.objectBrotliQuality(quality, size: size) }

    /// An object's compressed variants, each kept only when smaller than what it would replace.
    package struct Variants: Sendable {
        var gzip: [UInt8]?
        var replaceGzip = false
        var brotli: [UInt8]?
        var replaceBrotli = false
    }

    /// What an object gets of brotli: none (`--no-brotli`), a `.br` already on disk that decodes
    /// to it (past the default's budget: the variants of an object published before stay as
    /// they are), that or one compressed at a quality when a `.br` on disk is damaged (an object
    /// published before), or that or one compressed at a quality.
    enum BrotliPlan {
        case none, keepOnly, repair(Int32), compress(Int32)

        /// The quality to compress at when no `.br` on disk decodes to the object (`damaged`: one is there).
        func quality(damaged: Bool) -> Int32? {
            switch self {
            case .none, .keepOnly: nil
            case .repair(let q): damaged ? q : nil
            case .compress(let q): q
            }
        }
    }

    /// `root` is nil when it has no `objects/` yet (no variant on disk to reuse).
    private static func variants(_ artifact: Artifact, stream: GzipChunkStream?, root: String?, brotli plan: BrotliPlan) throws(GzipError) -> Variants {
        let bytes = artifact.bytes
        var v = Variants()
        let (sha, ext) = (artifact.sha256, artifact.objectExtension)
        let existing = root.flatMap { try? FileIO.read(PublishedLayout.path($0, PublishedLayout.gzipObject(sha, ext: ext))) }
        if let existing, (try? Gzip.decompress(existing, maxSize: bytes.count)) == bytes {
            stream?.cancel()
            v.gzip = existing
        } else {
            if let stream { v.gzip = try stream.finish(bytes) } else { v.gzip = try Gzip.compress(bytes, level: gzipLevel(bytes.count)) }
            v.replaceGzip = existing != nil
        }
        if v.gzip!.count >= bytes.count { v.gzip = nil }
        if case .none = plan { return v }
        let existingBr = root.flatMap { try? FileIO.read(PublishedLayout.path($0, PublishedLayout.brotliObject(sha, ext: ext))) }
        if let existingBr, (try? Brotli.decompress(existingBr, maxSize: bytes.count)) == bytes {
            v.brotli = existingBr
        } else if let quality = plan.quality(damaged: existingBr != nil) {
            v.brotli = try? Brotli.compress(bytes, quality: quality)
            v.replaceBrotli = existingBr != nil
        }
        if let br = v.brotli, br.count >= (v.gzip?.count ?? bytes.count) { v.brotli = nil }
        return v
    }
}

/// How a build compresses its brotli variants.
///
/// Quality 11, the smallest, as CDNs precompress, runs at about 0.85 MB/s a core on small
/// objects (2.6 ms for a 2 KiB post), so by default it goes to the first ``defaultBudget`` bytes
/// of new objects a build compresses (in the build's order, so a build is reproducible): a
/// publish of a few changed objects, or a small project whole, gets the best. Past the budget (a
/// first publish or a bulk import), objects of ``worthwhileSize`` and more get quality 5, which
/// runs at 30 to 50 MB/s on them; smaller ones get no brotli variant: quality 5 costs them more
/// than their gzip -9 (64 µs for a 2 KiB post) and saves 3 to 8% of it. `--brotli-quality Q` sets
/// one quality for everything.
package struct BrotliSetting: Sendable, Equatable {
    package var quality: Int32
    /// New bytes compressed at `quality` before the rest drop to quality 5 (or none); nil for no limit.
    package var budget: Int?

    package static let defaultBudget = 384 << 10
    /// Past the budget, the smallest object that still gets a brotli variant (at quality 5).
    package static let worthwhileSize = 64 << 10
    package static let `default` = BrotliSetting(quality: 11, budget: defaultBudget)

    package init(quality: Int32, budget: Int? = nil) {
        self.quality = quality
        self.budget = budget
    }

    /// The quality of each object of `sizes` (nil: no new brotli variant, though one already on
    /// disk is kept), spending the budget in order on the objects compressed at `quality`
    /// (those past 1 MiB get at most 5 anyway).
    package func qualities(for sizes: [Int?]) -> [Int32?] {
        var left = budget ?? .max
        return sizes.map { size in
            guard let size else { return nil }
            let q = Steps.brotliLevel(quality, size)
            guard q == quality else { return q }
            guard left > 0 else { return size >= Self.worthwhileSize ? min(quality, 5) : nil }
            left -= size
            return quality
        }
    }

    /// Its part of the build cache's key: a change compiles every source again.
    var cacheKey: String { "br\(quality)" + (budget.map { "/\($0)" } ?? "") }
}

/// The logical paths a build publishes: each from one source, none differing from another
/// only in case (they would collide on a case-insensitive file system or CDN).
package enum LogicalPaths {
    /// One table by case-folded path finds both collisions (most paths are their own folded
    /// form, so most items hash one string once); a path that collided only in case is kept
    /// aside, so that its own duplicate is reported against it, as a table by exact path would.
    package static func check(_ items: [CompiledItem], into diags: inout Diagnostics) {
        var folded: [String: Int] = [:]
        folded.reserveCapacity(items.count)
        var caseOnly: [String: Int] = [:]
        func origin(_ i: Int) -> String { items[i].sources.count == 1 ? items[i].sources[0] : items[i].path }
        for index in items.indices {
            let path = items[index].path
            let key = caseFolded(path)
            if let other = folded[key] {
                if let same = items[other].path == path ? other : caseOnly[path] {
                    diags.error(origin(index), 1, 1, "\(origin(index)) and \(origin(same)) both publish \(path); keep one of them (or rename one)")
                } else {
                    caseOnly[path] = index
                    diags.error(origin(index), 1, 1, "\(path) and \(items[other].path) (from \(origin(other))) differ only in case; rename one, as case-insensitive file systems and CDNs would mix them up")
                }
                continue
            }
            folded[key] = index
            if !Manifest.isValidPath(path) {
                diags.error(origin(index), 1, 1, "\(path) cannot be a published path (an empty, hidden or control-character segment); rename the file")
            }
        }
    }

    /// The path in lower case; the path itself (no new string) when it has no upper-case or
    /// non-ASCII character, as most published paths.
    static func caseFolded(_ path: String) -> String {
        path.utf8.contains { $0 >= 0x80 || (0x41...0x5A).contains($0) } ? path.lowercased() : path
    }
}
