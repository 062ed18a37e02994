import ArgumentParser
import Foundation

/// `folio diff A B`
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two versions: exit 0 when equal, 1 when different, 2 on error.",
        discussion: """
            Each side is a published directory, a manifest file (manifest.plist, manifests/N.plist or the manifest.json \
            mirror), an edge URL, or @N (version N from the cache or the edge's history). Add #CHANNEL for another channel \
            than production (a bare #beta is the edge's beta channel) and +N for the content the installs in release N see: \
            public#beta, https://edge.example#beta+12, @7+7. Arrays are aligned (by an id-like field, else by a longest \
            common subsequence), so an insertion or a move is one change.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, markdown, json }

    @OptionGroup var options: ClientOptions
    @Argument(help: "The old side.") var a: String
    @Argument(help: "The new side.") var b: String
    @Option(help: "text, markdown (for a pull request) or json (schema: docs/diff-json.md).") var format: Format = .text

    func run() async throws {
        let diff: ContentDiff
        do {
            try CacheDirCheck.check(options.cachePath, option: options.cacheDir, creating: false)
            diff = try await ContentDiff.compute(try await DiffSide.resolve(a, options: options), try await DiffSide.resolve(b, options: options))
        } catch {
            let message = (error as? CLIError)?.description ?? "\(error)"
            guard format == .json else { throw CLIError(message, exitCode: 2) }
            print(ContentDiff.errorJSON(message, code: 2).encoded(), terminator: "")
            FileHandle.standardError.write(Data(("folio diff: " + message + "\n").utf8))
            throw ExitCode(2)
        }
        switch format {
        case .text: print(diff.text(), terminator: "")
        case .markdown: print(diff.markdown(), terminator: "")
        case .json: print(diff.json().encoded(), terminator: "")
        }
        if !diff.isEmpty { throw ExitCode(1) }
    }
}
