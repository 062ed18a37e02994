import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// The steps of the build, in the order ``Pipeline/make(_:)`` lists them.
package enum Steps {
    /// Reads the project file and `.folioignore`, finds every source file, and loads the build cache.
    package static func load(_ ctx: inout BuildContext) throws {
        let dir = ctx.config.contentDir
        guard FileIO.exists(dir) else { throw BuildError("content directory \(dir) does not exist; pass --content DIR") }
        let project = try ProjectFile.load(contentDir: dir, into: &ctx.diagnostics)
        var ignore = IgnoreRules()
        let ignorePath = dir + "/" + ContentTree.ignoreFile
        if FileIO.exists(ignorePath) {
            ignore = IgnoreRules(text: String(decoding: try FileIO.read(ignorePath), as: UTF8.self), path: ignorePath, into: &ctx.diagnostics)
        }
        // A change of brotli quality compiles every source again, so each object gets its variant.
        let (root, key) = (ctx.config.outputDir, project.fingerprint + " " + (ctx.config.brotli?.cacheKey ?? "no-br"))
        // The cache is read and indexed on another thread while the folder is walked.
        let cache = Pending { BuildCache.load(root: root, key: key) }
        ctx.scannedAt = BuildCache.now()
        let files = try ContentTree.walk(root: dir, ignore: ignore, maxFileSize: ctx.config.maxFileSize, into: &ctx.diagnostics)
        ctx.sources = files.filter { !project.schemaFiles.contains($0.relativePath) }
        ctx.project = BuildProject(config: ctx.config, file: project, cache: cache.value)
        try stopIfUpToDate(&ctx)
        // The current manifest is read while the sources are parsed and compiled. (Read during
        // the walk instead, speculatively, a one-edit rebuild was 22 ms faster in one batch of
        // runs and 27 ms slower in another, and a no-op one took 33 to 57 ms more CPU.)
        if !ctx.upToDate { ctx.prefetch = ManifestPrefetch(channelDir: ctx.config.channelDir, history: ctx.config.deltaHistory) }
    }

    /// Ends the build here when nothing changed since the last one (``LastPublish``): its
    /// diagnostics are shown again, and with an error among them (`--strict`) the build runs
    /// in full to report them.
    static func stopIfUpToDate(_ ctx: inout BuildContext) throws {
        let cache = ctx.project.cache
        guard ctx.diagnostics.errorCount == 0, let last = cache.last,
            last.isCurrent(ctx.sources, ctx.config, root: ctx.config.outputDir, cache: cache)
        else { return }
        var replayed = ctx.diagnostics
        for d in last.diagnostics { replayed.add(d) }
        guard replayed.errorCount == 0 else { return }
        ctx.lock = try PublishSession.lock(root: ctx.config.outputDir)
        ctx.diagnostics = replayed
        ctx.result = last.result
        ctx.upToDate = true
    }

    /// Each kind parses the files it claims and compiles what it will publish, with the project
    /// file's indexes; when anything is wrong, every kind's checks run too (one run reports
    /// every problem) and the build stops.
    package static func parse(_ ctx: inout BuildContext) throws {
        let registry = KindRegistry.standard
        for (kind, files) in zip(registry.kinds, registry.assign(ctx.sources)) {
            ctx.parsed.append(try kind.parse(files, ctx.project, into: &ctx.diagnostics))
        }
        // Compiled even after an error, so that colliding paths are reported in the same run.
        // Where one kind has all the items (10,000 posts), its array is taken as it is: joined,
        // each item was copied.
        let compiled = ctx.parsed.map { $0.compile() }.filter { !$0.isEmpty }
        ctx.items = compiled.count == 1 ? compiled[0] : Array(compiled.joined())
        let indexes = IndexBuilder.build(
            ctx.project.file.indexes, items: ctx.items, contentDir: ctx.config.contentDir, root: ctx.config.outputDir,
            into: &ctx.diagnostics)
        // (Appending nothing to a shared array would still copy it.)
        if !indexes.isEmpty { ctx.items += indexes }
        LogicalPaths.check(ctx.items, into: &ctx.diagnostics)
        if ctx.diagnostics.errorCount > 0 {
            for parsed in ctx.parsed { ctx.diagnostics.append(parsed.check()) }
            throw ValidationFailed(errors: ctx.diagnostics.errorCount)
        }
    }

    /// Runs the kinds' checks (catalog formats and plurals) and, at the same time, encodes and
    /// compresses every object: the bytes do not depend on the checks, which only decide
    /// whether to publish.
    package static func checkAndCompile(_ ctx: inout BuildContext) throws {
        let (parsed, items, project, root) = (ctx.parsed, ctx.items, ctx.project, ctx.config.outputDir)
        let brotli = ctx.config.brotli
        let (found, artifacts) = Parallel.both(
            {
                var all = Diagnostics()
                for p in parsed { all.append(p.check()) }
                return all
            },
            { Result { () throws(GzipError) in try compress(encode(items, project), root: root, brotli: brotli) } })
        ctx.diagnostics.append(found)
        if ctx.diagnostics.errorCount > 0 { throw ValidationFailed(errors: ctx.diagnostics.errorCount) }
        ctx.artifacts = try artifacts.get()
    }

    package static func writeObjects(_ ctx: inout BuildContext) throws {
        let session = try PublishSession(
            root: ctx.config.outputDir, channel: ctx.config.channel, prefetched: ctx.prefetch, objectsAsLeft: ctx.project.cache.last?.objects)
        session.brotliQuality = ctx.config.brotli?.quality
        try session.writeObjects(ctx.artifacts)
        ctx.session = session
    }

    /// Signs (when configured) and publishes the manifest, then records the build cache.
    package static func writeManifest(_ ctx: inout BuildContext) throws {
        guard let session = ctx.session else { return }
        let config = ctx.config
        var options = PublishOptions(createdAt: try config.creationDate(), sourceRevision: config.resolvedSourceRevision(), reproducible: config.isReproducible)
        (options.notice, options.minimumAppVersion, options.maintenanceUntil) = (config.notice, config.minimumAppVersion, config.maintenanceUntil)
        (options.signing, options.deltaHistory, options.release, options.critical) = (config.signing, config.deltaHistory, config.release, config.critical)
        // The build cache's records and the sources' digest depend on the sources and artifacts
        // alone: made on another thread while the publish runs, instead of after it (10 and 3
        // ms of a one-edit rebuild).
        let (cache, sources, artifacts) = (ctx.project.cache, ctx.sources, ctx.artifacts)
        let records = Pending { (table: cache.recordTable(sources: sources, artifacts: artifacts).bytes, digest: LastPublish.digest(sources)) }
        ctx.result = try session.publish(ctx.artifacts, options)
        try recordBuild(&ctx, records: records)
    }

    /// Records what this build saw and published, for the next build (``BuildCache``), with
    /// the record table and the sources' digest `records` makes.
    static func recordBuild(_ ctx: inout BuildContext, records: Pending<(table: [UInt8], digest: String)>) throws {
        let root = ctx.config.outputDir
        guard let result = ctx.result, let manifest = FileStamp.read(PublishedLayout.path(ctx.config.channelDir, PublishedLayout.manifest)),
            let objects = FileStamp.read(PublishedLayout.path(root, PublishedLayout.objects))
        else { return }
        let last = LastPublish(
            sourceCount: ctx.sources.count, sourceDigest: records.value.digest, manifest: manifest, objects: objects, settings: LastPublish.settings(ctx.config),
            version: result.version, rawBytes: result.rawBytes, gzipBytes: result.gzipBytes, diagnostics: ctx.diagnostics.all)
        try ctx.project.cache.save(records: records.value.table, last: last, scannedAt: ctx.scannedAt)
    }

    /// Writes the seed archive an app bundles (`--seed`, with `--seed-include`).
    package static func writeSeed(_ ctx: inout BuildContext) throws {
        guard let path = ctx.config.seedPath else { return }
        let changed: Bool
        do { changed = try SeedWriter.write(root: ctx.config.outputDir, to: path, include: ctx.config.seedInclude) } catch {
            throw BuildError("cannot write the seed \(path): \(error)")
        }
        if !ctx.config.quiet { print(changed ? "seed: wrote \(path)" : "seed: \(path) is up to date") }
    }

    /// Tells each cache tier of `--notify` that a new version exists; a tier that cannot be told
    /// still finds it once its manifest goes stale, so a failure is a warning.
    package static func notify(_ ctx: inout BuildContext) throws {
        for url in ctx.config.notify {
            if let problem = EdgeNotifier.notify(url) {
                printErr("folio-build: warning: could not notify \(url): \(problem); it serves the new version once its manifest goes stale")
            } else if !ctx.config.quiet {
                print("notified \(url)")
            }
        }
    }
}
