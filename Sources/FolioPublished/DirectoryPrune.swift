import FolioSupport
import Foundation

/// A prune of a published directory on this machine (`folio-build prune DIR`, and an edge's
/// `POST /.folio/deploy/prune` on its root): the files listed, the kept manifests read, a
/// ``PrunePlan`` made and, unless a dry run, carried out, all under the builder's lock.
package struct DirectoryPrune: Sendable {
    package var root: String
    package var keep = PrunePlan.defaultKeep
    package var dryRun = false
    /// Object hashes kept whatever the manifests say (what an edge has loaded).
    package var alsoKeep: Set<String> = []

    package init(root: String) {
        self.root = root
    }

    /// Takes the lock, plans and (unless a dry run) removes; the plan. The lock is let go on return.
    package func run() throws(PruneError) -> PrunePlan {
        guard FileIO.exists(root) else { throw PruneError("\(root) does not exist: give a published directory (folio-build's --output)") }
        guard !PublishedLayout.publishedChannels(root).isEmpty else {
            throw PruneError("\(root) holds no manifest.plist: it is not a published directory (give folio-build's --output)")
        }
        let lock: Int32?
        do { lock = try FileIO.tryLock(PublishedLayout.path(root, PublishedLayout.builderLock)) } catch { throw PruneError("\(error)") }
        guard let lock else {
            throw PruneError("another folio-build is publishing to \(root)/ right now (it holds \(PublishedLayout.builderLock)); wait for it and prune again", isLocked: true)
        }
        defer { close(lock) }
        let files = Self.listing(root)
        var contents: [String: [UInt8]] = [:]
        for path in PrunePlan.filesToRead(files, keep: keep) { contents[path] = try? FileIO.read(PublishedLayout.path(root, path)) }
        let plan = try PrunePlan(files: files, contents: contents, keep: keep, alsoKeep: alsoKeep, location: root)
        if !dryRun { try remove(plan.removed) }
        return plan
    }

    /// Unlinks `files` in order; a file already gone is no error.
    private func remove(_ files: [PrunePlan.File]) throws(PruneError) {
        for file in files where unlink(PublishedLayout.path(root, file.path)) != 0 && errno != ENOENT {
            let error = FileError("remove", PublishedLayout.path(root, file.path))
            throw PruneError("\(error): the prune stopped there; what it removed before was unreferenced, and running it again finishes it")
        }
    }

    /// Every file a plan looks at, by path relative to `root`, and its size: `objects/`, and
    /// in each channel's directory `manifest.plist`, `head.plist`, `manifests/` and `deltas/`.
    package static func listing(_ root: String) -> [String: Int] {
        var files: [String: Int] = [:]
        func add(_ relative: String) {
            var st = stat()
            if stat(PublishedLayout.path(root, relative), &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { files[relative] = Int(st.st_size) }
        }
        func addDirectory(_ relative: String) {
            for name in (try? FileIO.list(PublishedLayout.path(root, relative))) ?? [] { add(relative + "/" + name) }
        }
        addDirectory(PublishedLayout.objects)
        let others = ((try? FileIO.list(PublishedLayout.path(root, PublishedLayout.channels))) ?? []).filter {
            Channel.isValidName($0) && $0 != Channel.production
        }
        for prefix in [""] + others.map({ PublishedLayout.channelPrefix($0) }) {
            add(prefix + PublishedLayout.manifest)
            add(prefix + PublishedLayout.head)
            addDirectory(prefix + PublishedLayout.manifests)
            addDirectory(prefix + PublishedLayout.deltas)
        }
        return files
    }
}
