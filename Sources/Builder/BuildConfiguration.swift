import FolioSupport
import Foundation

/// Everything one build needs to know, fixed before it starts.
struct BuildConfiguration: Sendable {
    var contentDir: String
    var outputDir: String
    /// The revision given on the command line, if any.
    var sourceRevision: String?
    var environment: [String: String]
    var quiet: Bool
    /// The locale whose catalogs are complete and answer when nothing else matches.
    var developmentLanguage: String = "en"
    /// Every warning is an error (`--strict`, for CI).
    var strict = false

    /// The manifest's creation time: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now.
    func creationDate() throws(BuildError) -> Date {
        if let epoch = environment["SOURCE_DATE_EPOCH"], !epoch.isEmpty {
            guard let seconds = Int64(epoch.trimmingCharacters(in: .whitespaces)) else {
                throw BuildError("SOURCE_DATE_EPOCH=\"\(epoch)\" is not a whole number of seconds since 1970")
            }
            return Date(timeIntervalSince1970: Double(seconds))
        }
        return Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    }

    /// Whether output must depend on the input alone (`SOURCE_DATE_EPOCH` set).
    var isReproducible: Bool { !(environment["SOURCE_DATE_EPOCH"] ?? "").isEmpty }

    /// The revision to record: the option, `FOLIO_SOURCE_REVISION`, or the content's last commit.
    func resolvedSourceRevision() -> String? {
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
    static func isInsideGitWorkTree(_ path: String) -> Bool {
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
struct BuildError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
