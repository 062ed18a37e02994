import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// Everything one build needs to know, fixed before it starts.
package struct BuildConfiguration: Sendable {
    package var contentDir: String
    package var outputDir: String
    /// The revision given on the command line, if any.
    package var sourceRevision: String?
    package var environment: [String: String]
    package var quiet: Bool
    /// The locale whose catalogs are complete and answer when nothing else matches.
    package var developmentLanguage: String = "en"
    /// Every warning is an error (`--strict`, for CI).
    package var strict = false
    /// The notice the manifest carries (`--notice`), if any.
    package var notice: String?
    /// The oldest app version the published version is for (`--minimum-app-version`), if any.
    package var minimumAppVersion: String?
    /// Until when the published version says the service is in maintenance (`--maintenance-until`).
    package var maintenanceUntil: Date?
    /// The channel published into (`--channel`).
    package var channel = Channel.production
    /// Publish as a staged or targeted release over the channel's current version (`--rollout`,
    /// `--target`); nil publishes the new default entries.
    package var release: ReleaseOptions?
    /// Mark the version or release critical (`--critical`).
    package var critical = false
    /// How to sign the manifest (`--signing-key`, `--key-list`); nil publishes it unsigned.
    package var signing: ReleaseSigning?
    /// How many earlier versions deltas are written from (`--delta-history`).
    package var deltaHistory = DeltaWriter.defaultHistory
    /// Files larger than this are refused (`--max-file-size`).
    package var maxFileSize = ContentTree.defaultMaxFileSize
    /// Where to write the seed archive an app bundles (`--seed`), if anywhere.
    package var seedPath: String?
    /// The logical paths the seed holds (`--seed-include`); empty for every entry.
    package var seedInclude: [Glob] = []
    /// Cache tiers to tell about a new version (`--notify`).
    package var notify: [String] = []
    /// How new objects' `.br` variants are compressed (`--brotli-quality`); nil writes none
    /// (`--no-brotli`).
    package var brotli: BrotliSetting? = .default

    package init(
        contentDir: String, outputDir: String, sourceRevision: String? = nil, environment: [String: String], quiet: Bool,
        developmentLanguage: String = "en", strict: Bool = false, notice: String? = nil
    ) {
        self.notice = notice
        self.contentDir = contentDir
        self.outputDir = outputDir
        self.sourceRevision = sourceRevision
        self.environment = environment
        self.quiet = quiet
        self.developmentLanguage = developmentLanguage
        self.strict = strict
    }

    /// The manifest's creation time: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now.
    package func creationDate() throws(BuildError) -> Date {
        if let epoch = environment["SOURCE_DATE_EPOCH"], !epoch.isEmpty {
            guard let seconds = Int64(epoch.trimmingCharacters(in: .whitespaces)) else {
                throw BuildError("SOURCE_DATE_EPOCH=\"\(epoch)\" is not a whole number of seconds since 1970")
            }
            return Date(timeIntervalSince1970: Double(seconds))
        }
        return Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    }

    /// The channel's directory: where its manifest is.
    package var channelDir: String { PublishedLayout.channelRoot(outputDir, channel) }

    /// Whether output must depend on the input alone (`SOURCE_DATE_EPOCH` set).
    package var isReproducible: Bool { !(environment["SOURCE_DATE_EPOCH"] ?? "").isEmpty }

    /// The revision to record: the option, `FOLIO_SOURCE_REVISION`, or the content's last commit.
    package func resolvedSourceRevision() -> String? {
        if let sourceRevision { return sourceRevision }
        if let env = environment["FOLIO_SOURCE_REVISION"], !env.isEmpty { return env }
        // Outside a git work tree there is nothing to ask (and starting git costs a few ms).
        guard Self.isInsideGitWorkTree(contentDir) else { return nil }
        // The last commit that touched the content (not HEAD): the same content gives the same
        // manifest whatever else the repository commits.
        guard let (status, out) = Subprocess.run(["git", "-C", contentDir, "log", "-1", "--format=%H", "--", "."]), status == 0 else {
            return nil
        }
        let rev = String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return rev.isEmpty ? nil : rev
    }
}

extension BuildConfiguration {
    /// Whether `path` or one of its parents has a `.git` entry.
    package static func isInsideGitWorkTree(_ path: String) -> Bool {
        var dir = URL(fileURLWithPath: path).standardizedFileURL.path
        while true {
            if FileManager.default.fileExists(atPath: dir + "/.git") { return true }
            let parent = FileIO.parent(of: dir)
            if parent == dir || parent.isEmpty { return false }
            dir = parent
        }
    }
}

/// A build failure that is not about one source position (I/O, configuration).
package struct BuildError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
