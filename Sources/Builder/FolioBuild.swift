import ArgumentParser
import Foundation

@main
struct FolioBuild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio-build",
        abstract: "Compile content/ into versioned, content-addressed binary plists in public/.")

    @Option(help: "The content directory to compile.") var content = "content"
    @Option(help: "The published directory to write.") var output = "public"
    @Option(help: "The source revision to record (default: FOLIO_SOURCE_REVISION, else git HEAD of the content).")
    var sourceRevision: String?
    @Flag(name: .shortAndLong, help: "Print only errors and the summary line.") var quiet = false

    func run() async throws {
        let config = BuildConfiguration(
            contentDir: content, outputDir: output, sourceRevision: sourceRevision,
            environment: ProcessInfo.processInfo.environment, quiet: quiet)
        let ok = Pipeline.standard.run(config)
        if !ok { throw ExitCode(1) }
    }
}
