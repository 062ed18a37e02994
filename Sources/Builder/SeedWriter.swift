import FolioCore

/// Writes the client's bundled seed from the version just published.
enum SeedWriter {
    /// Returns whether the file changed (an unchanged seed is not rewritten, so nothing rebuilds).
    static func write(root: String, to path: String) throws -> Bool {
        let source = Array(try SeedArchive.pack(root: root).swiftSource().utf8)
        if let existing = try? FileIO.read(path), existing == source { return false }
        try FileIO.writeAtomically(source, to: path)
        return true
    }
}
