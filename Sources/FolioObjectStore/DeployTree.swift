import FolioPublished
import FolioSupport
import Foundation

/// A published directory as a deploy to an edge describes it: each channel's `manifest.plist`
/// by version and digest, and every file but the objects (the manifests name those), by size,
/// a mutable one with its SHA-256 too. Nothing under `objects/` is listed or read here.
package struct DeployTree: Sendable {
    package var root: String
    package var channels: [String: EdgeDeployClient.Channel]
    package var files: [EdgeDeployClient.Begin.File]
    /// Production's version.
    package var version: Int

    package init(root: String) throws(ObjectStoreError) {
        guard FileIO.exists(PublishedLayout.path(root, PublishedLayout.manifest)) else {
            throw ObjectStoreError(.usage, "\(root) is not a published directory (it has no manifest.plist): build it first with folio-build --output \(root)")
        }
        self.root = root
        channels = [:]
        for name in PublishedLayout.publishedChannels(root) {
            let path = PublishedLayout.channelManifest(root, name)
            let bytes: [UInt8]
            do { bytes = try FileIO.read(path) } catch { throw ObjectStoreError(.usage, "\(path) is not a readable manifest: \(error)") }
            let sha256 = ContentHash.sha256Hex(bytes)
            channels[name] = .init(version: try Self.version(root, name, bytes, sha256: sha256), sha256: sha256, size: bytes.count)
        }
        version = channels[Channel.production]?.version ?? 0
        files = try Self.files(root, channels: channels)
    }

    /// The version of `channel`'s manifest `bytes`: its head's when the head describes them (a
    /// build writes it just before the manifest), else the manifest's, parsed.
    private static func version(_ root: String, _ channel: String, _ bytes: [UInt8], sha256: String) throws(ObjectStoreError) -> Int {
        let dir = PublishedLayout.channelRoot(root, channel)
        if let head = try? DeltaHead(bytes: FileIO.read(PublishedLayout.path(dir, PublishedLayout.head))), head.sha256 == sha256 {
            return head.version
        }
        do { return try Manifest(bytes: bytes).version } catch {
            throw ObjectStoreError(.usage, "\(PublishedLayout.channelManifest(root, channel)) is not a readable manifest: \(error)")
        }
    }

    /// The files the manifests name under `objects/` (variants included); nil when one cannot
    /// be read. It parses every manifest: a deploy takes the edge's count instead, and a dry run
    /// counts them while the edge works.
    package func objectFiles() -> Int? {
        var manifests: [Manifest] = []
        for name in channels.keys {
            guard let manifest = try? Manifest(bytes: FileIO.read(PublishedLayout.channelManifest(root, name))) else { return nil }
            manifests.append(manifest)
        }
        return Manifest.objectFiles(manifests)
    }

    /// Whether `relative` names a file of a published directory, the only files an edge may ask
    /// for: plain names (no `..`, no dot files), under a published directory's layout.
    package static func isPublishedPath(_ relative: String) -> Bool {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        return !parts.contains { $0.isEmpty || $0.hasPrefix(".") } && PublishedHeaders.kind(of: relative) != nil
    }

    /// Every file but the objects and dot files, relative; mutable ones with their SHA-256 (a
    /// manifest's taken from `channels`; none for the mirrors an edge makes from the manifest).
    private static func files(_ root: String, channels: [String: EdgeDeployClient.Channel]) throws(ObjectStoreError) -> [EdgeDeployClient.Begin.File] {
        let manifests = Dictionary(uniqueKeysWithValues: channels.map { (PublishedLayout.channelPrefix($0.key) + PublishedLayout.manifest, $0.value.sha256) })
        var out: [EdgeDeployClient.Begin.File] = []
        var pending = [""]
        while let dir = pending.popLast() {
            let names: [String]
            do { names = try FileIO.list(dir.isEmpty ? root : root + "/" + dir) } catch { throw ObjectStoreError(.usage, "cannot list \(root)/\(dir): \(error)") }
            for name in names.sorted() where !name.hasPrefix(".") && !(dir.isEmpty && name == PublishedLayout.objects) {
                let relative = dir.isEmpty ? name : dir + "/" + name
                var st = stat()
                guard stat(root + "/" + relative, &st) == 0 else { continue }
                if (st.st_mode & S_IFMT) == S_IFDIR { pending.append(relative) }
                guard (st.st_mode & S_IFMT) == S_IFREG, let kind = PublishedHeaders.kind(of: relative) else { continue }
                if let sha256 = manifests[relative] {
                    out.append(.init(path: relative, size: Int(st.st_size), sha256: sha256))
                } else {
                    out.append(try file(root, relative, size: Int(st.st_size), mutable: kind == .mutable && !Self.edgeMakes(relative)))
                }
            }
        }
        return out
    }

    /// Whether an edge makes `relative` from its channel's manifest whatever the client has (its
    /// gzip and JSON mirrors and key list): its digest would go unread.
    private static func edgeMakes(_ relative: String) -> Bool {
        let name = relative.split(separator: "/").last.map(String.init) ?? relative
        return [PublishedLayout.manifestGzip, PublishedLayout.manifestJSON, PublishedLayout.keyList].contains(name)
    }

    private static func file(_ root: String, _ relative: String, size: Int, mutable: Bool) throws(ObjectStoreError) -> EdgeDeployClient.Begin.File {
        guard mutable else { return .init(path: relative, size: size) }
        do { return .init(path: relative, size: size, sha256: try ContentHash.sha256Hex(file: root + "/" + relative).hex) } catch {
            throw ObjectStoreError(.usage, "cannot read \(root)/\(relative): \(error)")
        }
    }
}
