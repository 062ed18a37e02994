import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// A compiled entry before it is written: its logical path and plist bytes.
package struct Artifact: Sendable {
    package var path: String
    package var bytes: [UInt8]
    package var sha256: String
    package var gzip: [UInt8]?
    package var contentType: String = Manifest.plistContentType
    package var locale: String?
    /// The gzip variant on disk is damaged and must be replaced.
    package var replaceGzip = false
    /// For an object larger than one gzip chunk: its first chunks, already being compressed
    /// while the rest was encoded.
    package var gzipStream: GzipChunkStream?
}

/// The state the build steps share.
package struct BuildContext {
    package let config: BuildConfiguration
    package var diagnostics = Diagnostics()
    /// Source files by path, in path order.
    package var sonnetFiles: [(path: String, number: Int, bytes: [UInt8])] = []
    package var sonnets: [Sonnet] = []
    package var catalogFiles: [CatalogSourceFile] = []
    /// Whether `content/sonnets/` exists (a catalogs-only content directory has none).
    package var hasSonnets = false
    package var catalogs: CatalogOutput?
    package var artifacts: [Artifact] = []
    package var session: PublishSession?
    package var result: PublishResult?

    package init(config: BuildConfiguration) {
        self.config = config
        diagnostics.strict = config.strict
    }
}

/// One named step of the build.
package struct Step: Sendable {
    package var name: String
    package var run: @Sendable (inout BuildContext) throws -> Void
}

/// The build as a list of named steps, printed as `[i/n] step` while they run.
package struct Pipeline: Sendable {
    package var steps: [Step]

    package static let standard = Pipeline(steps: [
        Step(name: "load", run: Steps.load),
        Step(name: "parse", run: Steps.parse),
        Step(name: "check + compile", run: Steps.checkAndCompile),
        Step(name: "write objects", run: Steps.writeObjects),
        Step(name: "write manifest", run: Steps.writeManifest),
    ])

    /// Runs every step; prints diagnostics and the summary. Returns false when the build failed.
    /// The output's lock is released on return. With `keepUntilExit` (a process that exits right
    /// after), the parsed content is not torn down.
    package func run(_ config: BuildConfiguration, keepUntilExit: Bool = false) -> Bool {
        var context = BuildContext(config: config)
        let start = ContinuousClock.now
        for (i, step) in steps.enumerated() {
            let stepStart = ContinuousClock.now
            do {
                try step.run(&context)
            } catch {
                printDiagnostics(context.diagnostics, quiet: config.quiet)
                printErr("folio-build: error: \(error)")
                printErr("folio-build: failed in step '\(step.name)'; \(config.outputDir)/ is unchanged")
                return false
            }
            if !config.quiet {
                print("[\(i + 1)/\(steps.count)] \(step.name) (\(Self.milliseconds(since: stepStart)) ms)")
            }
        }
        printDiagnostics(context.diagnostics, quiet: config.quiet)
        if let r = context.result { print(r.summary(elapsedMilliseconds: Self.milliseconds(since: start))) }
        context.session = nil  // releases the output's lock
        // A process that ends right after a build need not tear down every parsed string and
        // plist (a few ms for a large catalog): the context is kept, as compilers do with
        // -disable-free.
        if keepUntilExit { Self.retained.append(context) }
        return true
    }

    /// Prints every diagnostic; with `quiet`, only errors (warnings are counted in the last line).
    private func printDiagnostics(_ diags: Diagnostics, quiet: Bool) {
        for d in diags.sorted where d.severity == .error || !quiet { printErr(d.description) }
        if diags.errorCount > 0 || diags.warningCount > 0 {
            printErr("\(diags.errorCount) error(s), \(diags.warningCount) warning(s)")
        }
    }

    /// Finished build contexts, kept until the process exits (see `run`); only `run` with
    /// `keepUntilExit` touches it, once per process, from folio-build's one task.
    nonisolated(unsafe) private static var retained: [BuildContext] = []

    package static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let d = ContinuousClock.now - start
        let ms = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        return String(format: "%.1f", ms)
    }
}

package func printErr(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

/// The content failed validation; the diagnostics say where.
package struct ValidationFailed: Error, CustomStringConvertible {
    package var errors: Int
    package var description: String { "\(errors) error(s) in the content; nothing was published" }
}

/// The steps themselves.
package enum Steps {
    package static func load(_ ctx: inout BuildContext) throws {
        let dir = ctx.config.contentDir + "/sonnets"
        guard FileIO.exists(ctx.config.contentDir) else {
            throw BuildError("content directory \(ctx.config.contentDir) does not exist; pass --content DIR")
        }
        ctx.catalogFiles = try CatalogSources.load(contentDir: ctx.config.contentDir, into: &ctx.diagnostics)
        ctx.hasSonnets = CatalogSources.isDirectory(dir)
        guard ctx.hasSonnets || ctx.catalogFiles.isEmpty else { return }
        let names: [String]
        do { names = try FileIO.list(dir).sorted() } catch { throw BuildError("\(error); sonnets live in \(dir)/NNN.txt, catalogs in \(ctx.config.contentDir)/catalogs/") }
        for name in names where !name.hasPrefix(".") && name != "README.md" {
            let path = dir + "/" + name
            let stem = name.hasSuffix(".txt") ? String(name.dropLast(4)) : ""
            guard !stem.isEmpty, stem.allSatisfy(\.isASCII), stem.allSatisfy(\.isNumber), let number = Int(stem), number >= 1 else {
                ctx.diagnostics.error(path, 1, 1, "unexpected file in \(dir): sonnet files are named by number, like 018.txt")
                continue
            }
            ctx.sonnetFiles.append((path, number, try FileIO.read(path)))
        }
    }

    /// Parses the sonnets and the catalogs and compiles the catalogs. When that finds errors, the
    /// catalogs' checks run too, so that one run reports every problem, and the build stops.
    package static func parse(_ ctx: inout BuildContext) throws {
        for file in ctx.sonnetFiles {
            if let s = SonnetSource.parse(path: file.path, fileNumber: file.number, bytes: file.bytes, into: &ctx.diagnostics) {
                ctx.sonnets.append(s)
            }
        }
        SonnetSource.checkSequence(ctx.sonnets, into: &ctx.diagnostics)
        ctx.catalogs = CatalogSources.compile(
            ctx.catalogFiles, developmentLanguage: ctx.config.developmentLanguage, into: &ctx.diagnostics)
        if ctx.sonnetFiles.isEmpty && ctx.hasSonnets {
            ctx.diagnostics.error(ctx.config.contentDir + "/sonnets", 1, 1, "no sonnet files found; add NNN.txt files")
        }
        ctx.sonnets.sort { $0.number < $1.number }
        if ctx.diagnostics.errorCount > 0 {
            if let catalogs = ctx.catalogs { ctx.diagnostics.append(catalogs.check(parallel: true)) }
            throw ValidationFailed(errors: ctx.diagnostics.errorCount)
        }
    }

    /// Runs the catalogs' format and plural checks and, at the same time, encodes and compresses
    /// every object: the bytes do not depend on the checks, which only decide whether to publish.
    package static func checkAndCompile(_ ctx: inout BuildContext) throws {
        let catalogs = ctx.catalogs
        let (sonnets, root) = (ctx.sonnets, ctx.config.outputDir)
        let (found, artifacts) = Parallel.both(
            { catalogs?.check(parallel: false) ?? Diagnostics() },
            { Result { () throws(GzipError) in try compress(compile(sonnets: sonnets, catalogs: catalogs), root: root) } })
        ctx.diagnostics.append(found)
        if ctx.diagnostics.errorCount > 0 { throw ValidationFailed(errors: ctx.diagnostics.errorCount) }
        ctx.artifacts = try artifacts.get()
    }

    /// The gzip level for an object of `size` bytes: 9 for the usual small objects; above 128 KB
    /// 6, about 3x faster for ~1% more bytes (libdeflate's 6 is still smaller than zlib's 9).
    package static func gzipLevel(_ size: Int) -> Int32 { size > 128 * 1024 ? 6 : 9 }

    /// Every object's plist bytes and hash. A large object's first gzip chunks are compressed
    /// on another core while the rest of it is encoded.
    package static func compile(sonnets: [Sonnet], catalogs: CatalogOutput?) -> [Artifact] {
        var artifacts: [Artifact] = []
        func add(_ path: String, _ value: PlistValue, locale: String? = nil) {
            var stream: GzipChunkStream?
            let bytes = BinaryPlist.encode(value, chunkSize: Gzip.chunkSize) { chunk in
                // Only objects larger than a chunk get here, so the level is the large one.
                if stream == nil { stream = GzipChunkStream(level: gzipLevel(Gzip.chunkSize + 1)) }
                stream?.submit(Array(chunk))
            }
            artifacts.append(Artifact(
                path: path, bytes: bytes, sha256: ContentHash.sha256Hex(bytes), locale: locale, gzipStream: stream))
        }
        for s in sonnets { add(SonnetPaths.sonnet(s.number), s.plist) }
        if !sonnets.isEmpty {
            add(SonnetPaths.index, .array(sonnets.map(\.indexPlist)))
            add(SonnetPaths.all, .array(sonnets.map(\.plist)))
        }
        if let catalogs {
            for catalog in catalogs.catalogs {
                add(CompiledCatalog.path(table: catalog.table, locale: catalog.locale), catalog.plist, locale: catalog.locale)
            }
            add(CatalogIndex.path, catalogs.index.plist)
        }
        return artifacts
    }

    /// Adds each object's gzip variant (when smaller), compressing on all cores.
    ///
    /// An object already published keeps its gzip variant: the manifest must describe the bytes on
    /// disk (another compressor or level would compress differently), and it saves the work.
    /// One that does not inflate to the object (damaged on disk) is compressed again and replaced.
    package static func compress(_ artifacts: [Artifact], root: String) throws(GzipError) -> [Artifact] {
        let compressed = Parallel.map(artifacts.map { ($0.bytes, PublishedLayout.path(root, PublishedLayout.gzipObject($0.sha256)), $0.gzipStream) }) { bytes, gzPath, stream in
            let existing = try? FileIO.read(gzPath)
            if let existing, (try? Gzip.decompress(existing, maxSize: bytes.count)) == bytes {
                stream?.cancel()
                return Result<(gz: [UInt8], replace: Bool), GzipError>.success((existing, false))
            }
            return Result { () throws(GzipError) in
                if let stream { return (try stream.finish(bytes), existing != nil) }
                return (try Gzip.compress(bytes, level: gzipLevel(bytes.count)), existing != nil)
            }
        }
        var artifacts = artifacts
        for i in artifacts.indices {
            let (gz, replace) = try compressed[i].get()
            artifacts[i].gzip = gz.count < artifacts[i].bytes.count ? gz : nil
            artifacts[i].replaceGzip = replace
            artifacts[i].gzipStream = nil
        }
        return artifacts
    }

    package static func writeObjects(_ ctx: inout BuildContext) throws {
        let session = try PublishSession(root: ctx.config.outputDir)
        try session.writeObjects(ctx.artifacts)
        ctx.session = session
    }

    package static func writeManifest(_ ctx: inout BuildContext) throws {
        guard let session = ctx.session else { return }
        ctx.result = try session.publish(
            ctx.artifacts, createdAt: try ctx.config.creationDate(),
            sourceRevision: ctx.config.resolvedSourceRevision(), notice: ctx.config.notice, reproducible: ctx.config.isReproducible,
            signing: ctx.config.signing, deltaHistory: ctx.config.deltaHistory)
    }
}
