import FolioPublished
import FolioSupport

/// What an edge lacks of a deploy's files other than objects, decided at its begin. Not sent:
/// a file the edge has at the same size (a mutable one: with the same SHA-256), one of a
/// channel whose manifest did not change, and one the edge makes itself (``DeployDerived``).
/// A changed channel's `manifest.plist` comes as the delta from the manifest served when the
/// client has that delta, else whole, in its smallest variant.
struct DeployNeeds {
    let root: String
    let begin: DeployBegin
    /// Each served channel's `manifest.plist` SHA-256, by name.
    let served: [String: String]
    /// The client's files' sizes, by path.
    let sizes: [String: Int]
    /// The client's files' paths.
    let listed: Set<String>

    init(root: String, begin: DeployBegin, served: [String: String]) {
        self.root = root
        self.begin = begin
        self.served = served
        sizes = Dictionary(begin.files.map { ($0.path, $0.size) }, uniquingKeysWith: { a, _ in a })
        listed = Set(sizes.keys)
    }

    /// The channels whose deployed manifest is not the one served, by name.
    var changed: [String] { begin.channels.filter { served[$0.key] != $0.value.sha256 }.keys.sorted() }

    /// The files the client is to send now.
    func missing() -> [String] {
        let changed = Set(self.changed)
        let sizes = self.sizes
        var out: [String] = []
        for file in begin.files where DeployPaths.problem(file.path) == nil {
            let channel = DeployPaths.channel(of: file.path)
            let name = DeployPaths.inChannel(file.path)
            guard !DeployDerived.isDerived(name, channel: begin.channels[channel]) else { continue }
            switch PublishedHeaders.kind(of: file.path) {
            case .object?, nil: continue
            case .mutable?:
                if changed.contains(channel), name != PublishedLayout.manifest, differs(file) { out.append(file.path) }
            case .immutable?:
                if DeployDerived.isDelta(file.path), DeployDerived.deltaSource(of: file.path, sizes: sizes) != file.path { continue }
                if FileIO.size(root + "/" + file.path) != file.size { out.append(file.path) }
            }
        }
        for channel in changed where !hasDelta(channel) {
            // Its smallest variant may be the brotli mirror, already named above.
            if let whole = manifestWhole(channel), !out.contains(whole) { out.append(whole) }
        }
        return out
    }

    /// Whether the client has the delta from the manifest served to its own.
    func hasDelta(_ channel: String) -> Bool {
        guard let from = served[channel], let to = begin.channels[channel]?.sha256 else { return false }
        return listed.contains(PublishedLayout.channelPrefix(channel) + PublishedLayout.delta(from: from, to: to))
    }

    /// The smallest variant of the channel's `manifest.plist` the client has.
    func manifestWhole(_ channel: String) -> String? {
        let path = PublishedLayout.channelPrefix(channel) + PublishedLayout.manifest
        let sizes = self.sizes
        return [path + ".br", path + ".gz", path].filter { sizes[$0] != nil }.min { sizes[$0]! < sizes[$1]! }
    }

    /// Whether the edge's copy of a mutable file is missing or not the client's.
    private func differs(_ file: DeployBegin.File) -> Bool {
        let path = root + "/" + file.path
        return FileIO.size(path) != file.size || (try? ContentHash.sha256Hex(file: path).hex) != file.sha256
    }
}
