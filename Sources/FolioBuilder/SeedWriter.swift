import FolioPublished
import FolioSupport

/// Writes a seed archive (see `SeedArchive`) of the version just published.
package enum SeedWriter {
    /// Returns whether the file changed (an unchanged seed is not rewritten). With `include`,
    /// only the entries whose logical paths match one of the globs carry their objects (a large
    /// asset need not be bundled; the app fetches it when it syncs).
    package static func write(root: String, channel: String = Channel.production, to path: String, include: [Glob] = []) throws -> Bool {
        let bytes = try SeedArchive.pack(root: root, channel: channel) { path in include.isEmpty || include.contains { $0.matches(path) } }.encoded()
        if let existing = try? FileIO.read(path), existing == bytes { return false }
        try FileIO.writeAtomically(bytes, to: path)
        return true
    }
}
