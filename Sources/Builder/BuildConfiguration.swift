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

    /// The revision to record: the option, `FOLIO_SOURCE_REVISION`, or the content's last commit.
    func resolvedSourceRevision() -> String? {
        if let sourceRevision { return sourceRevision }
        if let env = environment["FOLIO_SOURCE_REVISION"], !env.isEmpty { return env }
        // Outside a git work tree there is nothing to ask (and starting git costs a few ms).
        guard Self.isInsideGitWorkTree(contentDir) else { return nil }
        // The last commit that touched the content (not HEAD): the same content gives the same
        // manifest whatever else the repository commits.
        guard let (status, out) = Self.run(["git", "-C", contentDir, "log", "-1", "--format=%H", "--", "."]), status == 0 else {
            return nil
        }
        let rev = String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return rev.isEmpty ? nil : rev
    }
}

extension BuildConfiguration {
    /// Runs `argv` (looked up in PATH) with stderr discarded; its exit status and standard output,
    /// or nil when it cannot start. Spawned and reaped directly: Foundation's `Process` on Linux
    /// polls for the child's exit in 50 ms steps, which was most of a small build's time.
    static func run(_ argv: [String]) -> (status: Int32, output: [UInt8])? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let args = argv.map { strdup($0) } + [nil]
        defer { for a in args { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, args, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            return nil
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n > 0 {
                output += buffer[0..<n]
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(fds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return nil }
        }
        // Exited normally: the low 7 bits are 0 and the code is in the next byte.
        return (status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F), output)
    }

    /// Whether `path` or one of its parents has a `.git` entry.
    static func isInsideGitWorkTree(_ path: String) -> Bool {
        var dir = URL(fileURLWithPath: path).standardizedFileURL.path
        while true {
            if FileManager.default.fileExists(atPath: dir + "/.git") { return true }
            let parent = (dir as NSString).deletingLastPathComponent
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
