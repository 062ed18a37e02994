import Foundation

/// What `stat` says of a file that changes when it is replaced or rewritten: inode, size and
/// modification time. Equal stamps mean the file was not touched in between (files here are
/// replaced by rename, which always gives a new inode).
package struct FileStamp: Equatable, Sendable {
    package var inode: UInt64
    package var size: Int64
    package var mtimeSeconds: Int
    package var mtimeNanos: Int

    package init(inode: UInt64, size: Int64, mtimeSeconds: Int, mtimeNanos: Int) {
        self.inode = inode
        self.size = size
        self.mtimeSeconds = mtimeSeconds
        self.mtimeNanos = mtimeNanos
    }

    /// Its four numbers (inode, size, modification seconds and nanoseconds), as they are written
    /// to files: the build cache's record table and the digest of the last build's sources.
    package var fields: [Int64] { [Int64(bitPattern: inode), size, Int64(mtimeSeconds), Int64(mtimeNanos)] }

    /// The stamp of `path`, or nil when it cannot be stat'ed.
    package static func read(_ path: String) -> FileStamp? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        #if canImport(Darwin)
            let mtime = st.st_mtimespec
        #else
            let mtime = st.st_mtim
        #endif
        return FileStamp(
            inode: UInt64(st.st_ino), size: Int64(st.st_size), mtimeSeconds: mtime.tv_sec, mtimeNanos: mtime.tv_nsec)
    }
}
