import ArgumentParser
import FolioBuilder
import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

@main
struct FolioBuild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio-build",
        abstract: "Compile content/ into versioned, content-addressed binary plists in public/, and manage its releases.",
        discussion: "Without a subcommand, folio-build builds: 'folio-build build --help' lists the build's options.",
        version: "folio-build \(folioVersion) (CLDR \(CLDRData.version), plist schema \(Manifest.currentSchemaVersion))",
        subcommands: [Build.self, ReleaseCommand.self, PublishCommand.self, PruneCommand.self], defaultSubcommand: Build.self)
}

/// `folio-build [build]`: one publish of the content folder.
struct Build: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Compile content/ and publish it as the next version of a channel (the default command).")

    @Option(help: "The content directory to compile.") var content = "content"
    @Option(help: "The published directory to write.") var output = "public"
    @Option(help: "The source revision to record (default: FOLIO_SOURCE_REVISION, else the content's last git commit).")
    var sourceRevision: String?
    @Option(help: "The development language of the string catalogs: complete, and the last fallback.")
    var developmentLanguage = "en"
    @Flag(name: .shortAndLong, help: "Print only errors and the summary line.") var quiet = false
    @Flag(help: "Treat every warning as an error and publish nothing when there is one (for CI).")
    var strict = false
    @Option(help: "Also write the published version as a seed archive, for an app to bundle.")
    var seed: String?
    @Option(help: "Only entries whose logical paths match this glob carry their bytes in the seed (e.g. 'sonnets/**'); repeatable.")
    var seedInclude: [String] = []
    @Option(help: "Refuse source files larger than this many bytes; suffixes K, M, G, like 64M.")
    var maxFileSize = "256M"
    @Option(help: "A message for the app's users, carried by this version's manifest (folio status and read show it).")
    var notice: String?
    @Option(help: "The oldest app version this version is for, like 3.2; older apps keep what they have and are told to update.")
    var minimumAppVersion: String?
    @Option(help: "Mark this version as a maintenance window until this time (ISO 8601, like 2026-12-01T06:00:00Z): apps take it and report maintenance until then.")
    var maintenanceUntil: String?
    @Option(help: "After publishing, tell this cache tier (folio-edge --origin, http://HOST:PORT) to revalidate the manifest now; repeatable.")
    var notify: [String] = []
    @OptionGroup(title: "Releases") var release: PublishReleaseOptions
    @OptionGroup(title: "Signing") var signing: SigningOptions
    @Option(help: "Write deltas from each of this many earlier versions to the new one; 0 writes none, and no head.plist.")
    var deltaHistory = DeltaWriter.defaultHistory
    @Option(help: "The brotli quality of every .br variant, 1 (fastest) to 11 (smallest), at most 5 past 1 MiB (default: 11 for a build's first 384 KiB of new objects; after it, 5 from 64 KiB and none below).")
    var brotliQuality: Int32?
    @Flag(help: "Write no .br variants (clients get gzip).") var noBrotli = false

    func validate() throws {
        if deltaHistory < 0 || deltaHistory > 100 { throw ValidationError("--delta-history must be 0 to 100, got \(deltaHistory)") }
        if let q = brotliQuality, !(1...11).contains(q) { throw ValidationError("--brotli-quality must be 1 to 11, got \(q)") }
        if noBrotli && brotliQuality != nil { throw ValidationError("--no-brotli and --brotli-quality do not go together") }
        if let notice, notice.isEmpty || notice.count > 1000 || notice.contains(where: \.isNewline) {
            throw ValidationError("--notice must be one line of 1 to 1000 characters")
        }
        if let text = maintenanceUntil {
            guard let date = PlistDates.parseISO8601(text) else {
                throw ValidationError("--maintenance-until takes an ISO 8601 time like 2026-12-01T06:00:00Z, got '\(text)'")
            }
            if date <= Date() { throw ValidationError("--maintenance-until \(text) is already past: give a time to come") }
        }
        if let v = minimumAppVersion, AppVersion(v) == nil { throw ValidationError("--minimum-app-version: \(AppVersion.problem(v))") }
        if Self.byteCount(maxFileSize) == nil {
            throw ValidationError("--max-file-size takes a number of bytes like 1048576, 64M or 1G, got '\(maxFileSize)'")
        }
        if !seedInclude.isEmpty && seed == nil { throw ValidationError("--seed-include goes with --seed FILE") }
        for pattern in seedInclude {
            do { _ = try Glob(pattern) } catch { throw ValidationError("--seed-include: \(error)") }
        }
        // `--output s3://bucket/app` would write a directory named `s3:/bucket/app` here.
        if output.range(of: "^[A-Za-z][A-Za-z0-9+.-]*://", options: .regularExpression) != nil {
            throw ValidationError(
                "--output is the directory to write, not a URL (\(output)): build into a directory, then upload it with "
                    + "`folio-build publish DIR \(output)`")
        }
        for url in notify where TCPSocket.endpoint(url) == nil {
            throw ValidationError("--notify takes an http://HOST[:PORT] URL, got '\(url)'")
        }
    }

    func run() throws {
        // A build allocates a lot once and exits: see BatchMemory.
        BatchMemory.prepare()
        var config = BuildConfiguration(
            contentDir: content, outputDir: output, sourceRevision: sourceRevision,
            environment: ProcessInfo.processInfo.environment, quiet: quiet,
            developmentLanguage: developmentLanguage, strict: strict, notice: notice)
        config.deltaHistory = deltaHistory
        config.minimumAppVersion = minimumAppVersion
        config.maintenanceUntil = maintenanceUntil.flatMap { PlistDates.parseISO8601($0) }
        config.brotli = noBrotli ? nil : brotliQuality.map { BrotliSetting(quality: $0) } ?? .default
        config.maxFileSize = Self.byteCount(maxFileSize) ?? ContentTree.defaultMaxFileSize
        config.seedPath = seed
        config.seedInclude = seedInclude.compactMap { try? Glob($0) }
        config.notify = notify
        config.channel = release.channel
        config.release = try release.audience()
        config.critical = release.critical
        config.signing = try signing.load(forbidden: [content, output], output: output, strict: strict)
        let ok = Pipeline.make(config).run(config, keepUntilExit: true)
        if !ok { throw ExitCode(1) }
    }

    /// `256M` → 268435456; nil when it is not a positive size.
    static func byteCount(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text)
        var scale = 1
        if let last = text.last?.uppercased().first, let unit = units[last] {
            scale = unit
            digits = digits.dropLast()
        }
        guard let n = Int(digits), n > 0, n <= Int.max / scale else { return nil }
        return n * scale
    }
}
