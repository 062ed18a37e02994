import FolioPublished
import FolioSupport

/// Writes a seed archive (see `SeedArchive`) of the version just published.
package enum SeedWriter {
    /// Returns whether the file changed (an unchanged seed is not rewritten).
    package static func write(root: String, to path: String) throws -> Bool {
        let bytes = try SeedArchive.pack(root: root).encoded()
        if let existing = try? FileIO.read(path), existing == bytes { return false }
        try FileIO.writeAtomically(bytes, to: path)
        return true
    }
}
