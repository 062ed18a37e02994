import ArgumentParser
import FolioObjectStore
import FolioPublished
import FolioS3Signing
import FolioSupport
import Foundation

/// `folio-build prune DEST`: removes what no kept version needs from a published directory, a
/// bucket prefix or an edge's root. Publishing never removes anything; this does, on request.
struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Remove the objects, deltas and versioned manifests no kept version needs, from a published directory, a bucket or an edge.",
        discussion: """
            Every channel keeps its current manifest and its --keep newest versions: their versioned manifests \
            (manifests/N.plist), every object any of their releases names (with its .gz and .br variants), the deltas into \
            them and those head.plist names. Only files under objects/, deltas/ and manifests/ are removed; the manifest, its \
            mirrors, heads, key lists and files whose names are not Folio's stay. The versions kept are the grace of a client \
            in the middle of a sync: one that read a manifest a moment ago still finds its objects while that version is \
            kept, so keep at least 2. A version pruned can no longer be rolled back to (folio-build release rollback). \
            The prune takes the lock a publish takes (a directory's .folio-build.lock, a bucket's .folio-publish-lock, an \
            edge's deploy lock) and refuses while a publish holds it. A bucket is reached as by folio-build publish (the AWS \
            variables and files), an edge by its admin URL and deploy token. Exit codes: 0 pruned, 1 failed (what was removed \
            was unreferenced; prune again to finish), 2 a publish or deploy holds the lock.
            """)

    @Argument(help: "What to prune: a published directory, s3://BUCKET or s3://BUCKET/PREFIX, or an edge: https://HOST:PORT or http://127.0.0.1:PORT.")
    var destination: String
    @Option(help: ArgumentHelp("Keep the newest N versions of each channel, the current one included.", valueName: "N")) var keep = PrunePlan.defaultKeep
    @Flag(help: "List what would be removed and its bytes, and change nothing.") var dryRun = false
    @Option(help: "To s3://: path or virtual addressing, as folio-build publish takes it.") var addressing: S3Addressing?
    @Option(help: "To s3://: deletes at once.") var concurrency = 16
    @Option(help: "To s3://: seconds after which another publisher's lock counts as stale.") var lockTimeout = 3600
    @Flag(help: "To s3://: remove a stale lock (older than --lock-timeout) left by a publisher that is gone.") var breakLock = false
    @Option(help: "To an edge: a file whose first line is its deploy token (default: FOLIO_DEPLOY_TOKEN).") var tokenFile: String?
    @Option(help: "To an edge: a PEM file of certificate authorities to trust for its https (a private CA's).") var ca: String?

    enum Kind { case directory, bucket, edge }

    var kind: Kind {
        if destination.hasPrefix("https://") || destination.hasPrefix("http://") { return .edge }
        return destination.hasPrefix("s3://") ? .bucket : .directory
    }

    func validate() throws {
        if !(1...1000).contains(keep) { throw ValidationError("--keep must be 1 to 1000 versions, got \(keep)") }
        if !(1...256).contains(concurrency) { throw ValidationError("--concurrency must be 1 to 256, got \(concurrency)") }
        if lockTimeout < 0 { throw ValidationError("--lock-timeout must be 0 or more seconds") }
        if kind != .edge, tokenFile != nil || ca != nil {
            throw ValidationError("--token-file and --ca are for an edge (https://HOST:PORT), not for \(destination)")
        }
        if kind != .bucket, addressing != nil || breakLock {
            throw ValidationError("--addressing and --break-lock are for s3://, not for \(destination)")
        }
    }

    func run() throws {
        let code: Int32
        switch kind {
        case .directory: code = pruneDirectory()
        case .bucket: code = pruneBucket()
        case .edge: code = pruneEdge()
        }
        if code != 0 { throw ExitCode(code) }
    }

    private func pruneDirectory() -> Int32 {
        var prune = DirectoryPrune(root: destination)
        (prune.keep, prune.dryRun) = (keep, dryRun)
        do { return PruneOutput.print(PruneReport(try prune.run(), dryRun: dryRun), destination: destination) } catch {
            return PublishJob.report(ObjectStoreError(error.isLocked ? .locked : .usage, error.description))
        }
    }

    private func pruneBucket() -> Int32 {
        let client: S3Client
        var options: PruneOptions
        do {
            options = PruneOptions(location: try S3Location(parsing: destination))
            let config = try S3Configuration.load(environment: ProcessInfo.processInfo.environment, addressing: addressing)
            client = S3Client(configuration: config, bucket: options.location.bucket)
        } catch { return PublishJob.report(error) }
        (options.keep, options.dryRun, options.concurrency) = (keep, dryRun, concurrency)
        (options.lockTimeout, options.breakLock) = (lockTimeout, breakLock)
        let pruner = ObjectStorePruner(client: client, options: options)
        let destination = self.destination
        return PublishJob.blocking {
            let code: Int32
            do { code = PruneOutput.print(try await pruner.run(), destination: destination) } catch { code = PublishJob.report(error) }
            await client.shutdown()
            return code
        }
    }

    private func pruneEdge() -> Int32 {
        let token: String
        do { token = try EdgeDeployJob.token(file: tokenFile, environment: ProcessInfo.processInfo.environment) } catch {
            return PublishJob.report(error)
        }
        let job = EdgePruneJob(destination: destination, token: token, caFile: ca, keep: keep, dryRun: dryRun)
        return PublishJob.blocking { await job.run() }
    }
}

/// What every prune prints: the dry run's files, then the summary line.
enum PruneOutput {
    /// Prints the report; the exit code (0).
    static func print(_ report: PruneReport, destination: String) -> Int32 {
        if report.dryRun { for line in report.dryRunLines { Swift.print(line) } }
        Swift.print(report.summary(destination: destination))
        return 0
    }
}
