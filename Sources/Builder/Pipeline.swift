import FolioCore
import Foundation

/// A compiled entry before it is written: its logical path and plist bytes.
struct Artifact: Sendable {
    var path: String
    var bytes: [UInt8]
    var sha256: String
    var gzip: [UInt8]?
    var contentType: String = Manifest.plistContentType
    var locale: String?
}

/// The state the build steps share.
struct BuildContext {
    let config: BuildConfiguration
    var diagnostics = Diagnostics()
    /// Source files by path, in path order.
    var sonnetFiles: [(path: String, number: Int, bytes: [UInt8])] = []
    var sonnets: [Sonnet] = []
    var artifacts: [Artifact] = []
    var session: PublishSession?
    var result: PublishResult?

    init(config: BuildConfiguration) { self.config = config }
}

/// One named step of the build.
struct Step: Sendable {
    var name: String
    var run: @Sendable (inout BuildContext) throws -> Void
}

/// The build as a list of named steps, printed as `[i/n] step` while they run.
struct Pipeline: Sendable {
    var steps: [Step]

    static let standard = Pipeline(steps: [
        Step(name: "load", run: Steps.load),
        Step(name: "validate", run: Steps.validate),
        Step(name: "compile", run: Steps.compile),
        Step(name: "compress", run: Steps.compress),
        Step(name: "write objects", run: Steps.writeObjects),
        Step(name: "write manifest", run: Steps.writeManifest),
    ])

    /// Runs every step; prints diagnostics and the summary. Returns false when the build failed.
    func run(_ config: BuildConfiguration) -> Bool {
        var context = BuildContext(config: config)
        let start = ContinuousClock.now
        for (i, step) in steps.enumerated() {
            let stepStart = ContinuousClock.now
            do {
                try step.run(&context)
            } catch {
                printDiagnostics(context.diagnostics)
                printErr("folio-build: error: \(error)")
                printErr("folio-build: failed in step '\(step.name)'; \(config.outputDir)/ is unchanged")
                return false
            }
            if !config.quiet {
                print("[\(i + 1)/\(steps.count)] \(step.name) (\(Self.milliseconds(since: stepStart)) ms)")
            }
        }
        printDiagnostics(context.diagnostics)
        if let r = context.result { print(r.summary(elapsedMilliseconds: Self.milliseconds(since: start))) }
        return true
    }

    private func printDiagnostics(_ diags: Diagnostics) {
        for d in diags.sorted { printErr(d.description) }
        if diags.errorCount > 0 || diags.warningCount > 0 {
            printErr("\(diags.errorCount) error(s), \(diags.warningCount) warning(s)")
        }
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let d = ContinuousClock.now - start
        let ms = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        return String(format: "%.1f", ms)
    }
}

func printErr(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

/// The content failed validation; the diagnostics say where.
struct ValidationFailed: Error, CustomStringConvertible {
    var errors: Int
    var description: String { "\(errors) error(s) in the content; nothing was published" }
}

/// The steps themselves.
enum Steps {
    static func load(_ ctx: inout BuildContext) throws {
        let dir = ctx.config.contentDir + "/sonnets"
        guard FileIO.exists(ctx.config.contentDir) else {
            throw BuildError("content directory \(ctx.config.contentDir) does not exist; pass --content DIR")
        }
        let names: [String]
        do { names = try FileIO.list(dir).sorted() } catch { throw BuildError("\(error); sonnets live in \(dir)/NNN.txt") }
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

    static func validate(_ ctx: inout BuildContext) throws {
        for file in ctx.sonnetFiles {
            if let s = SonnetSource.parse(path: file.path, fileNumber: file.number, bytes: file.bytes, into: &ctx.diagnostics) {
                ctx.sonnets.append(s)
            }
        }
        SonnetSource.checkSequence(ctx.sonnets, into: &ctx.diagnostics)
        if ctx.sonnetFiles.isEmpty {
            ctx.diagnostics.error(ctx.config.contentDir + "/sonnets", 1, 1, "no sonnet files found; add NNN.txt files")
        }
        if ctx.diagnostics.errorCount > 0 { throw ValidationFailed(errors: ctx.diagnostics.errorCount) }
        ctx.sonnets.sort { $0.number < $1.number }
    }

    static func compile(_ ctx: inout BuildContext) throws {
        func add(_ path: String, _ value: PlistValue) {
            let bytes = BinaryPlist.encode(value)
            ctx.artifacts.append(Artifact(path: path, bytes: bytes, sha256: ContentHash.sha256Hex(bytes)))
        }
        for s in ctx.sonnets { add(SonnetPaths.sonnet(s.number), s.plist) }
        add(SonnetPaths.index, .array(ctx.sonnets.map(\.indexPlist)))
        add(SonnetPaths.all, .array(ctx.sonnets.map(\.plist)))
    }

    static func compress(_ ctx: inout BuildContext) throws {
        for i in ctx.artifacts.indices {
            let gz = try Gzip.compress(ctx.artifacts[i].bytes, level: 9)
            ctx.artifacts[i].gzip = gz.count < ctx.artifacts[i].bytes.count ? gz : nil
        }
    }

    static func writeObjects(_ ctx: inout BuildContext) throws {
        let session = try PublishSession(root: ctx.config.outputDir)
        try session.writeObjects(ctx.artifacts)
        ctx.session = session
    }

    static func writeManifest(_ ctx: inout BuildContext) throws {
        guard let session = ctx.session else { return }
        ctx.result = try session.publish(
            ctx.artifacts, createdAt: try ctx.config.creationDate(),
            sourceRevision: ctx.config.resolvedSourceRevision())
    }
}
