import FolioSupport
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
        return walker.files.sorted { $0.relativePath < $1.relativePath }
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
            for name in try FileIO.list(dir).sorted() where !name.hasPrefix(".") {
                let relative = folder.isEmpty ? name : folder + "/" + name
                if folder.isEmpty && name == ContentTree.projectFile { continue }
                guard !ignore.ignores(relative) else { continue }
                try visit(relative, full: dir + "/" + name, into: &diags)
            }
        }

        mutating func visit(_ relative: String, full: String, into diags: inout Diagnostics) throws {
            var st = stat()
            guard lstat(full, &st) == 0 else { throw FileError("stat", full) }
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
