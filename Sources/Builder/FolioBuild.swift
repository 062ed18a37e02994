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
    @Option(
        parsing: .upToNextOption,
        help: "Sign the manifest with these secret keys (folio keys generate); as many as the key list's threshold.")
    var signingKey: [String] = []
    @Option(help: "The root-signed key list that authorizes the signing keys (folio keys authorize); published as keylist.plist.")
    var keyList: String?
    @Option(help: "How long a signed manifest is accepted from signing, like 12h or 7d; a build renews it after half of this.")
    var validFor = "7d"
    @Option(help: "Write deltas from each of this many earlier versions to the new one (0: none, and no head.plist).")
    var deltaHistory = DeltaWriter.defaultHistory

    func validate() throws {
        if signingKey.isEmpty != (keyList == nil) {
            throw ValidationError("--signing-key and --key-list go together: sign with keys that the key list authorizes")
        }
        if deltaHistory < 0 || deltaHistory > 100 { throw ValidationError("--delta-history must be 0 to 100, got \(deltaHistory)") }
        if DurationText.seconds(validFor) == nil { throw ValidationError(DurationText.problem("--valid-for", validFor)) }
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
        var config = BuildConfiguration(
            contentDir: content, outputDir: output, sourceRevision: sourceRevision,
            environment: ProcessInfo.processInfo.environment, quiet: quiet,
            developmentLanguage: developmentLanguage, strict: strict, notice: notice)
        config.deltaHistory = deltaHistory
        if let keyList {
            do {
                // Signing time is the clock's, whole seconds: SOURCE_DATE_EPOCH dates the content.
                let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
                let signing = try ReleaseSigning.load(
                    keyFiles: signingKey, keyListFile: keyList, validFor: DurationText.seconds(validFor) ?? ReleaseSigning.defaultValidFor,
                    now: now, forbidden: [content, output])
                if let warning = signing.warning { printErr("folio-build: warning: \(warning)") }
                config.signing = signing
            } catch {
                printErr("folio-build: error: \(error)")
                printErr("folio-build: nothing was published; \(output)/ is unchanged")
                throw ExitCode(1)
            }
        }
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
