import FolioSupport
import FolioToolSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Every file under the content folder that a build must publish or refuse: hidden files and
/// `.folioignore`'s patterns are skipped, nothing else is dropped.
package enum ContentTree {
    /// The project file, at the top of the content folder.
    package static let projectFile = "folio.toml"
    /// The ignore file, at the top of the content folder.
    package static let ignoreFile = ".folioignore"
    /// The default of `--max-file-size`: 256 MiB.
    package static let defaultMaxFileSize = 256 << 20

    /// Walks `root`, in path order; files it cannot publish become diagnostics.
    package static func walk(
        root: String, ignore: IgnoreRules, maxFileSize: Int, into diags: inout Diagnostics
    ) throws -> [SourceFile] {
        guard let realRoot = FileIO.resolved(root) else {
            throw BuildError("content directory \(root) does not exist; pass --content DIR")
        }
        var walker = Walker(root: root, realRoot: realRoot, ignore: ignore, maxFileSize: maxFileSize)
        walker.visited.insert(realRoot)
        try walker.walk("", into: &diags)
        // Folders are walked in name order, so the files are in path order unless a name sorts
        // between a folder and its files (`a-b` after `a`, before `a/b`): sorted only then.
        let files = walker.files
        let ordered = files.indices.dropFirst().allSatisfy { files[$0 - 1].relativePath < files[$0].relativePath }
        return ordered ? files : files.sorted { $0.relativePath < $1.relativePath }
    }

    private struct Walker {
        let root: String
        let realRoot: String
        let ignore: IgnoreRules
        let maxFileSize: Int
        var visited: Set<String> = []
        var files: [SourceFile] = []

        init(root: String, realRoot: String, ignore: IgnoreRules, maxFileSize: Int) {
            self.root = root
            self.realRoot = realRoot
            self.ignore = ignore
            self.maxFileSize = maxFileSize
        }

        mutating func walk(_ folder: String, into diags: inout Diagnostics) throws {
            let dir = folder.isEmpty ? root : root + "/" + folder
            // Each entry is looked up from the folder held open, not from `/` down.
            let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { if fd >= 0 { close(fd) } }
            var names: [(name: String, relative: String)] = []
            for name in try FileIO.list(dir).sorted() where !name.hasPrefix(".") {
                let relative = folder.isEmpty ? name : folder + "/" + name
                if folder.isEmpty && name == ContentTree.projectFile { continue }
                guard !ignore.ignores(relative) else { continue }
                names.append((name, relative))
            }
            let stats = fd >= 0 ? Self.statAll(names.map(\.name), in: fd) : nil
            for (i, entry) in names.enumerated() {
                try visit(entry.relative, name: entry.name, in: fd, stat: stats?[i], full: dir + "/" + entry.name, into: &diags)
            }
        }

        /// A folder's entries' `lstat`s (by `fstatat` from the folder held open), on all cores
        /// for a large folder: most of a no-op or one-edit rebuild's walk is these calls.
        static func statAll(_ names: [String], in fd: Int32) -> [Stat] {
            @Sendable func one(_ name: String) -> Stat {
                var st = stat()
                let rc = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW)
                return Stat(found: rc == 0, errno: rc == 0 ? 0 : Foundation.errno, st: st)
            }
            guard names.count >= 1024, Parallel.cores > 1 else { return names.map(one) }
            let parts = 16
            let ranges = (0..<parts).map { p in (names.count * p / parts)..<(names.count * (p + 1) / parts) }
            return Parallel.map(ranges) { range in range.map { one(names[$0]) } }.flatMap { $0 }
        }

        /// One entry's `lstat`; `found` is false when it failed, with the thread's `errno` then.
        struct Stat: @unchecked Sendable {
            var found: Bool
            var errno: Int32
            var st: stat
        }

        mutating func visit(_ relative: String, name: String, in dirFD: Int32, stat given: Stat?, full: String, into diags: inout Diagnostics) throws {
            var st = given?.st ?? stat()
            let found = given.map(\.found) ?? (dirFD >= 0 ? fstatat(dirFD, name, &st, AT_SYMLINK_NOFOLLOW) == 0 : lstat(full, &st) == 0)
            guard found else { throw FileError("stat", full, errno: given?.errno ?? Foundation.errno) }
            if st.st_mode & S_IFMT == S_IFLNK {
                guard let target = FileIO.resolved(full), target == realRoot || target.hasPrefix(realRoot + "/") else {
                    let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: full)) ?? "?"
                    diags.error(full, 1, 1, "a symbolic link to \(target), outside the content folder \(root)/; copy the file in or add it to \(ContentTree.ignoreFile)")
                    return
                }
                guard stat(full, &st) == 0 else { throw FileError("stat", full) }
                if st.st_mode & S_IFMT == S_IFDIR {
                    guard visited.insert(target).inserted else { return }  // a loop, or a folder seen already
                }
            }
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                if let real = FileIO.resolved(full) { visited.insert(real) }
                try walk(relative, into: &diags)
            case S_IFREG, S_IFIFO:  // a named pipe is read as a file
                guard Int(st.st_size) <= maxFileSize else {
                    diags.error(full, 1, 1, "the file is \(st.st_size) bytes, over --max-file-size \(maxFileSize); raise the limit or add it to \(ContentTree.ignoreFile)")
                    return
                }
                let stamp = FileStamp(
                    inode: UInt64(st.st_ino), size: Int64(st.st_size), mtimeSeconds: st.st_mtim.tv_sec, mtimeNanos: st.st_mtim.tv_nsec)
                files.append(SourceFile(relativePath: relative, fullPath: full, stamp: stamp))
            default:
                diags.error(full, 1, 1, "not a regular file or folder (a device, socket or pipe); remove it or add it to \(ContentTree.ignoreFile)")
            }
        }
    }
}
