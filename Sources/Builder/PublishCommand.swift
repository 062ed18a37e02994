import ArgumentParser
import FolioObjectStore
import FolioS3Signing
import FolioSupport
import Foundation
import Synchronization

/// `folio-build publish DIR s3://BUCKET/PREFIX`: uploads a built published directory to
/// S3-compatible object storage, manifest.plist last; `folio-build publish DIR https://HOST:PORT`
/// deploys it to an edge's admin listener by digest (`EdgeDeployJob`).
struct PublishCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Upload a published directory to S3-compatible object storage, or deploy it to an edge, manifest.plist last.",
        discussion: """
            Endpoint, region and credentials come from the AWS environment variables (AWS_ENDPOINT_URL, AWS_REGION, \
            AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE) and files (~/.aws/credentials, \
            ~/.aws/config). To an edge (http://127.0.0.1:PORT of its --admin-listen, or https://HOST:PORT of its \
            only listener; the token is refused over http:// but to a loopback address): the token from --token-file or \
            FOLIO_DEPLOY_TOKEN; only the files the edge lacks are uploaded, then it switches. Exit codes: 0 published, 1 failed (the previous version stays current), 2 another publish \
            holds the lock, 3 the bucket or edge holds a newer version.
            """)

    /// Exit codes beside 0 and 1.
    static let lockedExitCode: Int32 = 2
    static let rollbackExitCode: Int32 = 3

    @Argument(help: "The published directory to upload (folio-build's --output).") var directory: String
    @Argument(help: "Where: s3://BUCKET or s3://BUCKET/PREFIX, or an edge: https://HOST:PORT or http://127.0.0.1:PORT.") var destination: String
    @Option(help: "path (https://ENDPOINT/BUCKET/KEY) or virtual (https://BUCKET.ENDPOINT/KEY); default: the AWS config's s3 addressing_style, else path with AWS_ENDPOINT_URL and virtual without.")
    var addressing: S3Addressing?
    @Option(help: "Uploads at once.") var concurrency = 16
    @Option(help: "Upload files this large or larger in parts; suffixes K, M, G.") var multipartThreshold = "8M"
    @Option(help: "The size of each part of a multipart upload, at least 5M.") var partSize = "8M"
    @Option(help: "Seconds after which another publisher's lock counts as stale.") var lockTimeout = 3600
    @Flag(help: "Remove a stale lock (older than --lock-timeout) left by a publisher that is gone.") var breakLock = false
    @Flag(help: "Publish even when the bucket holds a newer version (a rollback).") var force = false
    @Flag(name: .shortAndLong, help: "Print only errors and the summary line.") var quiet = false
    @Option(help: "To an edge: a file whose first line is its deploy token (default: FOLIO_DEPLOY_TOKEN).") var tokenFile: String?
    @Option(help: "To an edge: a PEM file of certificate authorities to trust for its https (a private CA's).") var ca: String?
    @Flag(help: "To an edge: print what would be uploaded, and change nothing.") var dryRun = false

    func validate() throws {
        if !(1...256).contains(concurrency) { throw ValidationError("--concurrency must be 1 to 256, got \(concurrency)") }
        if (Build.byteCount(partSize) ?? 0) < 5 << 20 { throw ValidationError("--part-size must be at least 5M, got '\(partSize)'") }
        if Build.byteCount(multipartThreshold) == nil { throw ValidationError("--multipart-threshold takes a size like 8M, got '\(multipartThreshold)'") }
        if lockTimeout < 0 { throw ValidationError("--lock-timeout must be 0 or more seconds") }
    }

    /// Runs the publish on the concurrency runtime's threads and waits for it here: the root
    /// command stays synchronous, so a build keeps its allocator set up on the main thread
    /// (BatchMemory).
    func run() throws {
        if destination.hasPrefix("https://") || destination.hasPrefix("http://") { return try deploy() }
        if dryRun || tokenFile != nil || ca != nil {
            throw ValidationError("--dry-run, --token-file and --ca are for a deploy to an edge (https://HOST:PORT), not to s3://")
        }
        let job: PublishJob
        do {
            let location = try S3Location(parsing: destination)
            let config = try S3Configuration.load(environment: ProcessInfo.processInfo.environment, addressing: addressing)
            job = PublishJob(configuration: config, options: makeOptions(location), destination: destination, quiet: quiet)
        } catch { throw ExitCode(PublishJob.report(error)) }
        let code = job.runBlocking()
        if code != 0 { throw ExitCode(code) }
    }

    /// A deploy to an edge.
    private func deploy() throws {
        var options = EdgeDeployOptions(root: directory)
        options.concurrency = concurrency
        options.force = force
        options.dryRun = dryRun
        let token: String
        do { token = try EdgeDeployJob.token(file: tokenFile, environment: ProcessInfo.processInfo.environment) } catch {
            throw ExitCode(PublishJob.report(error))
        }
        let job = EdgeDeployJob(options: options, destination: destination, token: token, caFile: ca, quiet: quiet)
        let code = PublishJob.blocking { await job.run() }
        if code != 0 { throw ExitCode(code) }
    }

    private func makeOptions(_ location: S3Location) -> PublishOptions {
        var options = PublishOptions(root: directory, location: location)
        options.concurrency = concurrency
        options.multipartThreshold = Build.byteCount(multipartThreshold) ?? options.multipartThreshold
        options.partSize = Build.byteCount(partSize) ?? options.partSize
        options.lockTimeout = lockTimeout
        options.breakLock = breakLock
        options.force = force
        return options
    }
}

/// One publish, with everything it needs decided (Sendable, so it can run in a task).
struct PublishJob: Sendable {
    let configuration: S3Configuration
    let options: PublishOptions
    let destination: String
    let quiet: Bool

    /// The exit code, after the publish has run in a task and ended.
    func runBlocking() -> Int32 { Self.blocking { await run() } }

    /// The exit code `work` returns, after it has run in a task and ended.
    static func blocking(_ work: @escaping @Sendable () async -> Int32) -> Int32 {
        final class Outcome: Sendable { let code = Atomic<Int32>(1) }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            outcome.code.store(await work(), ordering: .releasing)
            done.signal()
        }
        done.wait()
        return outcome.code.load(ordering: .acquiring)
    }

    /// Publishes, prints the summary line or the error; the exit code.
    func run() async -> Int32 {
        let started = Date()
        let client = S3Client(configuration: configuration, bucket: options.location.bucket)
        let quiet = self.quiet
        let publisher = ObjectStorePublisher(client: client, options: options) { line in if !quiet { print(line) } }
        do {
            let summary = try await publisher.run()
            await client.shutdown()
            print(Self.summaryLine(summary, destination: destination, seconds: Date().timeIntervalSince(started)))
            return 0
        } catch {
            await client.shutdown()
            return Self.report(error)
        }
    }

    /// `published version 3 to s3://b/p: 12 files uploaded (40 KB), 300 already there, in 1.2 s`.
    static func summaryLine(_ s: PublishSummary, destination: String, seconds: Double) -> String {
        let kb = (s.uploadedBytes + 1023) / 1024
        return "published version \(s.version) to \(destination): \(s.uploaded) files uploaded (\(kb) KB), \(s.skipped) already there, in "
            + String(format: "%.2f s", seconds)
    }

    /// Prints `folio-build: error: MESSAGE`; the error's exit code.
    static func report(_ error: Error) -> Int32 {
        let message = (error as? ObjectStoreError)?.message ?? "\(error)"
        FileHandle.standardError.write(Data("folio-build: error: \(message)\n".utf8))
        switch (error as? ObjectStoreError)?.kind {
        case .locked: return PublishCommand.lockedExitCode
        case .rollback: return PublishCommand.rollbackExitCode
        default: return 1
        }
    }
}

extension S3Addressing: ExpressibleByArgument {}
