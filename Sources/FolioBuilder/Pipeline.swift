import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// The state the build steps share.
package struct BuildContext {
    package let config: BuildConfiguration
    package var diagnostics = Diagnostics()
    package var project: BuildProject
    /// Every source file found, in path order.
    package var sources: [SourceFile] = []
    /// What each kind of the registry parsed, in registry order.
    package var parsed: [any ParsedContent] = []
    /// Everything to publish, before encoding.
    package var items: [CompiledItem] = []
    package var artifacts: [Artifact] = []
    package var session: PublishSession?
    package var result: PublishResult?
    /// Nothing changed since the last build: the remaining steps are skipped, but for those
    /// that run anyway (the seed, notify).
    package var upToDate = false
    /// When the walk of the content folder started (ns since 1970; see ``BuildCache/scannedAt``).
    package var scannedAt: Int64 = 0
    /// The output's lock, held by a build that stopped early (a publish holds it in `session`).
    package var lock: Int32?
    /// The channel's current manifest, being read for the publish (``ManifestPrefetch``).
    package var prefetch: ManifestPrefetch?

    package init(config: BuildConfiguration) {
        self.config = config
        self.project = BuildProject(config: config)
        diagnostics.strict = config.strict
    }
}

/// One named step of the build.
package struct Step: Sendable {
    package var name: String
    /// Whether it runs when nothing changed (``BuildContext/upToDate``).
    package var always = false
    package var run: @Sendable (inout BuildContext) throws -> Void
}

/// The build as a list of named steps, printed as `[i/n] step` while they run.
package struct Pipeline: Sendable {
    package var steps: [Step]

    /// The build for `config`: the standard steps, then the ones it configures.
    package static func make(_ config: BuildConfiguration) -> Pipeline {
        var steps = [
            Step(name: "load", run: Steps.load),
            Step(name: "parse", run: Steps.parse),
            Step(name: "check + compile", run: Steps.checkAndCompile),
            Step(name: "write objects", run: Steps.writeObjects),
            Step(name: config.signing == nil ? "write manifest" : "sign + write manifest", run: Steps.writeManifest),
        ]
        if config.seedPath != nil { steps.append(Step(name: "write seed", always: true, run: Steps.writeSeed)) }
        if !config.notify.isEmpty { steps.append(Step(name: "notify", always: true, run: Steps.notify)) }
        return Pipeline(steps: steps)
    }

    /// Runs every step; prints diagnostics and the summary. Returns false when the build failed.
    /// The output's lock is released on return. With `keepUntilExit` (a process that exits right
    /// after), the parsed content is not torn down.
    package func run(_ config: BuildConfiguration, keepUntilExit: Bool = false) -> Bool {
        var context = BuildContext(config: config)
        let start = ContinuousClock.now
        for (i, step) in steps.enumerated() {
            if context.upToDate && !step.always {
                if !config.quiet { print("[\(i + 1)/\(steps.count)] \(step.name) (skipped: no source or setting changed)") }
                continue
            }
            let stepStart = ContinuousClock.now
            do {
                try step.run(&context)
            } catch {
                printDiagnostics(context.diagnostics, quiet: config.quiet)
                printErr("folio-build: error: \(error)")
                printErr("folio-build: failed in step '\(step.name)'; \(config.outputDir)/ is unchanged")
                return false
            }
            if !config.quiet {
                print("[\(i + 1)/\(steps.count)] \(step.name) (\(Self.milliseconds(since: stepStart)) ms)")
            }
        }
        printDiagnostics(context.diagnostics, quiet: config.quiet)
        if let r = context.result { print(r.summary(elapsedMilliseconds: Self.milliseconds(since: start))) }
        context.session = nil  // releases the output's lock
        if let fd = context.lock { close(fd) }
        // A process that ends right after a build need not tear down every parsed string and
        // plist (a few ms for a large catalog): the context is kept, as compilers do with
        // -disable-free.
        if keepUntilExit { Self.retained.append(context) }
        return true
    }

    /// Prints every diagnostic; with `quiet`, only errors (warnings are counted in the last line).
    private func printDiagnostics(_ diags: Diagnostics, quiet: Bool) {
        for d in diags.sorted where d.severity == .error || !quiet { printErr(d.description) }
        if diags.errorCount > 0 || diags.warningCount > 0 {
            printErr("\(diags.errorCount) error(s), \(diags.warningCount) warning(s)")
        }
    }

    /// Finished build contexts, kept until the process exits (see `run`); only `run` with
    /// `keepUntilExit` touches it, once per process, from folio-build's one task.
    nonisolated(unsafe) private static var retained: [BuildContext] = []

    package static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let d = ContinuousClock.now - start
        let ms = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        return String(format: "%.1f", ms)
    }
}

package func printErr(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

/// The content failed validation; the diagnostics say where.
package struct ValidationFailed: Error, CustomStringConvertible {
    package var errors: Int
    package var description: String { "\(errors) error(s) in the content; nothing was published" }
}

