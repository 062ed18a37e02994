import FolioBuilder
import FolioSupport
import Foundation

extension FuzzTargets {
    /// The project file: `folio.toml` from the input (in a scratch content folder), its rules
    /// and globs, and the same text as `.folioignore` patterns matched against a few paths.
    package static func projectFile(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let dir = NSTemporaryDirectory() + "folio-fuzz-project-\(getpid())"
        try? FileIO.makeDirectory(dir)
        guard (try? FileIO.writeAtomically(bytes, to: dir + "/" + ContentTree.projectFile, sync: false)) != nil else { return }
        var diags = Diagnostics()
        if let project = try? ProjectFile.load(contentDir: dir, into: &diags) {
            for path in ["a.json", "articles/x.md", "images/a/b.png", ""] {
                _ = project.schemas(for: path)
                _ = project.cache(for: path)
                _ = project.html(for: path)
            }
        }
        let rules = IgnoreRules(text: String(decoding: bytes, as: UTF8.self), path: ".folioignore", into: &diags)
        for path in ["a", "a/b.txt", "README.md", "x/y/z"] { _ = rules.ignores(path) }
    }
}
