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
        try await DiffRun(a: a, b: b, format: format, places: options.diffPlaces).run()
    }
}

/// One `folio diff`: its sides, its format and where it looks; exit 0 same, 1 different, 2 error.
struct DiffRun {
    var a: String
    var b: String
    var format: DiffCommand.Format
    var places: DiffPlaces

    func run() async throws {
        let diff: ContentDiff
        do {
            try CacheDirCheck.check(places.cachePath, option: places.cacheDir, creating: false)
            diff = try await ContentDiff.compute(try await DiffSide.resolve(a, places: places), try await DiffSide.resolve(b, places: places))
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

    /// Whether the command line is a `diff` with `--format json` (before any `--`).
    static func asksForJSON(_ arguments: [String]) -> Bool {
        let args = Array(arguments.dropFirst().prefix { $0 != "--" })
        guard args.contains("diff") else { return false }
        return args.contains("--format=json") || zip(args, args.dropFirst()).contains { $0 == "--format" && $1 == "json" }
    }

    /// CI's usual line, `folio diff A B [--format F]` with nothing else, read without the
    /// argument parser, whose set-up is a fifth of a diff's time; anything else (other options,
    /// `--help`, a bad format, a bad environment) is nil and goes to the parser.
    init?(fastArguments arguments: [String]) {
        var args = arguments.dropFirst()
        guard args.popFirst() == "diff" else { return nil }
        var sides: [String] = []
        var format: DiffCommand.Format?
        while let arg = args.popFirst() {
            if arg == "--format", format == nil, let value = args.popFirst(), let f = DiffCommand.Format(rawValue: value) {
                format = f
            } else if !arg.hasPrefix("-"), sides.count < 2 {
                sides.append(arg)
            } else {
                return nil
            }
        }
        guard sides.count == 2, !DiffPlaces.environmentHasProblem else { return nil }
        self.init(a: sides[0], b: sides[1], format: format ?? .text, places: .fromEnvironment)
    }

    init(a: String, b: String, format: DiffCommand.Format, places: DiffPlaces) {
        (self.a, self.b, self.format, self.places) = (a, b, format, places)
    }
}
