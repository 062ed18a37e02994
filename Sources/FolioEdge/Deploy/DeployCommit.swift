import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// The commit of a staged deploy: the staged manifests checked as the edge would load them
/// (parse, `--trust`, channel, no rollback unless forced, every object present and whole),
/// then the files moved into the published root by rename, in a local publish's order.
struct DeployCommit {
    let staging: DeployStaging
    let trust: Trust?
    let force: Bool
    /// The channels whose manifest the deploy changes: each must have one staged.
    let changed: [String]
    /// The site served now: its versions, and the objects it has already verified.
    let site: Site

    var root: String { staging.root }

    /// Checks the staged manifests (those `parsed` already, as they are) and their objects;
    /// production's version after the commit.
    func check(parsed: [String: ParsedManifest] = [:]) throws(DeployFailure) -> Int {
        let staged = PublishedLayout.publishedChannels(staging.directory)
        if let lacking = changed.first(where: { !staged.contains($0) }) {
            throw DeployFailure(422, "the deploy sent no manifest.plist for channel \(lacking): nothing to switch it to (send the whole published directory)")
        }
        var version = site.manifest.version
        for channel in try manifests(parsed: parsed) {
            try checkObjects(channel.manifest, channel: channel.name)
            if channel.name == Channel.production { version = channel.manifest.version }
        }
        return version
    }

    /// The staged manifests, each parsed, verified under `--trust` and no rollback unless forced.
    func manifests(parsed: [String: ParsedManifest] = [:]) throws(DeployFailure) -> [ChannelManifest] {
        var out: [ChannelManifest] = []
        for name in PublishedLayout.publishedChannels(staging.directory) {
            let staged: ChannelManifest
            do {
                let dir = staging.directory
                staged = try parsed[name].map { try ChannelManifest.checked($0.bytes, $0.manifest, root: dir, channel: name, trust: trust) }
                    ?? ChannelManifest.read(root: dir, channel: name, trust: trust)
            } catch {
                throw DeployFailure(422, "refused: \(Self.relative(error, staging.directory))")
            }
            try checkRollback(staged)
            out.append(staged)
        }
        return out
    }

    /// Refuses a channel's manifest older than the one served, unless forced.
    private func checkRollback(_ staged: ChannelManifest) throws(DeployFailure) {
        guard !force, let served = site.channels[staged.name]?.manifest.version, served > staged.manifest.version else { return }
        let which = staged.name == Channel.production ? "" : " (channel \(staged.name))"
        throw DeployFailure(
            412, "the edge serves version \(served), the deploy is version \(staged.manifest.version)\(which): "
                + "deploying would roll it back; build a newer version, or pass --force to deploy the older one")
    }

    /// Every object the manifest names, and its variants, staged or in the root; each object
    /// the site served does not already serve as its entry says is read and checked against
    /// its entry, and each of its variants has the entry's size.
    private func checkObjects(_ manifest: Manifest, channel: String) throws(DeployFailure) {
        // What the site serves it loaded whole, variants included.
        for entry in manifest.allEntries where !site.serves(entry) {
            let object = try file(entry.objectPath, size: nil, of: entry, channel)
            let bytes: [UInt8]
            do { bytes = try FileIO.read(object) } catch { throw DeployFailure.file(error, doing: "read \(entry.objectPath)") }
            let problem = entry.check(bytes)
            if problem != .matches {
                throw DeployFailure(422, "\(entry.objectPath) is not \(entry.path) as the manifest describes it (\(problem)): rebuild and deploy again")
            }
            if let gz = entry.gzipObjectPath { _ = try file(gz, size: entry.gzipSize, of: entry, channel) }
            if let br = entry.brotliObjectPath { _ = try file(br, size: entry.brSize, of: entry, channel) }
        }
    }

    /// The file of `path`, one of `entry`'s, staged or in the root, at `size` bytes when given.
    private func file(_ path: String, size: Int?, of entry: Manifest.Entry, _ channel: String) throws(DeployFailure) -> String {
        guard let file = location(path) else {
            throw DeployFailure(422, "\(channel)'s manifest names \(path) (for \(entry.path)), which the edge does not have and the deploy did not send")
        }
        if let size, let found = FileIO.size(file), found != size {
            throw DeployFailure(422, "\(path) is \(found) bytes, \(channel)'s manifest says \(size) (for \(entry.path)): rebuild and deploy again")
        }
        return file
    }

    /// The file for `relative`: staged, else in the root; nil when neither has it.
    private func location(_ relative: String) -> String? {
        [staging.directory + "/" + relative, root + "/" + relative].first(where: FileIO.exists)
    }

    /// Moves every staged file into place, production's manifest last, each durable before any
    /// manifest names it (those in `durable` were made so since the last plan). The files a
    /// manifest names (objects, deltas, versioned manifests) move first, then one round of
    /// syncs makes durable the files not yet durable and the directories those went into:
    /// a file system without a journal orders no renames. Then the heads, mirrors and
    /// manifests move, and their directories are synced. Returns the files moved.
    @discardableResult
    static func moveIntoPlace(_ staging: DeployStaging, durable: [String: UInt64] = [:]) throws(DeployFailure) -> [String] {
        let root = staging.root
        let files = staging.files()
        let pending = Set(staging.notDurable(files, durable: durable))
        let named = files.prefix { DeployPaths.rank($0) < DeployPaths.rank(PublishedLayout.head) }
        try move(named, 0, staging)
        // Nothing names the files moved so far until a manifest moves.
        var syncs = files.enumerated().filter { pending.contains($0.element) }.map { index, relative in
            (index < named.count ? root : staging.directory) + "/" + relative
        }
        syncs += directories(of: named, root)
        try staging.makeDurable(paths: syncs)
        let naming = files.dropFirst(named.count)
        try move(naming, named.count, staging)
        _ = Parallel.map(directories(of: naming, root), threads: 8) { try? FileIO.syncDirectory($0) }
        return files
    }

    /// Renames `files` into the root, each file it replaces kept in the staging (numbered from `first`).
    private static func move(_ files: ArraySlice<String>, _ first: Int, _ staging: DeployStaging) throws(DeployFailure) {
        let root = staging.root
        for (index, relative) in zip(first..., files) {
            do {
                try DeployStaging.makeDirectories(root, FileIO.parent(of: relative))
                staging.keepReplaced(root + "/" + relative, index)
                guard rename(staging.directory + "/" + relative, root + "/" + relative) == 0 else {
                    throw FileError("rename into place", root + "/" + relative)
                }
            } catch { throw DeployFailure.file(error, doing: "move \(relative) into place") }
        }
    }

    /// The directories `files` went into under `root`.
    private static func directories(of files: ArraySlice<String>, _ root: String) -> [String] {
        Array(Set(files.map { FileIO.parent(of: root + "/" + $0) }))
    }

    /// A load error's text with the staging directory's paths shown relative.
    private static func relative(_ error: Error, _ dir: String) -> String {
        "\(error)".replacingOccurrences(of: dir + "/", with: "")
    }
}
