import ArgumentParser
import FolioBuilder
import FolioLocalization
import FolioPublished
import FolioSupport
import Foundation

@main
struct FolioBuild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio-build",
        abstract: "Compile content/ into versioned, content-addressed binary plists in public/.",
        version: "folio-build \(folioVersion) (CLDR \(CLDRData.version), plist schema \(Manifest.currentSchemaVersion))")

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
    @Option(help: "A message for the app's users, carried by this version's manifest (folio status and read show it).")
    var notice: String?
    @Option(help: "After publishing, tell this cache tier (folio-edge --origin, http://HOST:PORT) to revalidate the manifest now; repeatable.")
    var notify: [String] = []

    func validate() throws {
        if let notice, notice.isEmpty || notice.count > 1000 || notice.contains(where: \.isNewline) {
            throw ValidationError("--notice must be one line of 1 to 1000 characters")
        }
        for url in notify where TCPSocket.endpoint(url) == nil {
            throw ValidationError("--notify takes an http://HOST[:PORT] URL, got '\(url)'")
        }
    }

    func run() throws {
        // A build allocates a lot once and exits: see BatchMemory.
        BatchMemory.prepare()
        let config = BuildConfiguration(
            contentDir: content, outputDir: output, sourceRevision: sourceRevision,
            environment: ProcessInfo.processInfo.environment, quiet: quiet,
            developmentLanguage: developmentLanguage, strict: strict, notice: notice)
        let ok = Pipeline.standard.run(config, keepUntilExit: true)
        if !ok { throw ExitCode(1) }
        if let seed {
            do {
                let changed = try SeedWriter.write(root: output, to: seed)
                if !quiet { print(changed ? "seed: wrote \(seed)" : "seed: \(seed) is up to date") }
            } catch {
                printErr("folio-build: error: cannot write the seed \(seed): \(error)")
                throw ExitCode(1)
            }
        }
        // A tier that cannot be told still finds the new version when its copy goes stale.
        for url in notify {
            if let problem = EdgeNotifier.notify(url) {
                printErr("folio-build: warning: could not notify \(url): \(problem); it serves the new version once its manifest goes stale")
            } else if !quiet {
                print("notified \(url)")
            }
        }
    }
}
