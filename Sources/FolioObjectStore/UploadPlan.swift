import FolioPublished
import FolioSupport
import Foundation

/// One file of a published directory to store, with the headers the edge would serve it with.
package struct UploadItem: Sendable, Equatable {
    /// The path relative to the published root (and the key relative to the prefix).
    package var relative: String
    package var size: Int
    /// Objects, deltas and versioned manifests: skipped when the bucket has them at this size.
    package var immutable: Bool
    package var contentType: String
    package var cacheControl: String
    package var contentEncoding: String?

    /// The headers stored with the object.
    package var headers: [(String, String)] {
        [("Content-Type", contentType), ("Cache-Control", cacheControl)] + (contentEncoding.map { [("Content-Encoding", $0)] } ?? [])
    }
}

/// A published directory's files in the order that keeps every published version whole:
/// objects and deltas, versioned manifests, heads, mirrors, each channel's `manifest.plist`,
/// and production's `manifest.plist` last (the commit point).
package struct UploadPlan: Sendable {
    /// The phases, each uploaded completely before the next starts.
    package var phases: [(name: String, items: [UploadItem])]
    /// Production's manifest version in the directory.
    package var version: Int
    /// Each channel's manifest version, by name (production included).
    package var channelVersions: [String: Int]

    /// Reads `root`'s manifests and lists its files; the error says why it is not a published directory.
    package init(root: String) throws(ObjectStoreError) {
        guard FileIO.exists(PublishedLayout.path(root, PublishedLayout.manifest)) else {
            throw ObjectStoreError(.usage, "\(root) is not a published directory (it has no manifest.plist): build it first with folio-build --output \(root)")
        }
        let channels = try Self.readChannels(root)
        let types = Self.objectTypes(root, channels: channels)
        var phases: [[UploadItem]] = Array(repeating: [], count: 6)
        for relative in Self.files(root) {
            guard let kind = PublishedHeaders.kind(of: relative) else { continue }
            let item = Self.item(root, relative, kind: kind, channels: channels, types: types)
            phases[Self.phase(relative, kind: kind)].append(item)
        }
        let names = ["objects and deltas", "versioned manifests", "heads", "mirrors", "channel manifests", "manifest"]
        self.phases = zip(names, phases).map { ($0, $1.sorted { $0.relative < $1.relative }) }
        self.version = channels[Channel.production]?.version ?? 0
        self.channelVersions = channels.mapValues(\.version)
    }

    /// The phase a file belongs to (an index into `phases`).
    private static func phase(_ relative: String, kind: PublishedHeaders.Kind) -> Int {
        switch kind {
        case .object: return 0
        case .immutable: return relative.contains(PublishedLayout.deltas + "/") ? 0 : 1
        case .mutable:
            let name = FileIO.lastComponent(of: relative)
            if name == PublishedLayout.head { return 2 }
            if name != PublishedLayout.manifest { return 3 }
            return relative == PublishedLayout.manifest ? 5 : 4
        }
    }

    private static func item(
        _ root: String, _ relative: String, kind: PublishedHeaders.Kind, channels: [String: Manifest], types: [String: String]
    ) -> UploadItem {
        let (base, encoding) = PublishedHeaders.stripEncoding(relative)
        let manifest = channels[channelName(relative)] ?? channels[Channel.production]!
        let type = kind == .object ? types[base] ?? PublishedHeaders.unknownType : PublishedHeaders.contentType(ofFile: base)
        let size = (try? FileManager.default.attributesOfItem(atPath: PublishedLayout.path(root, relative))[.size] as? Int) ?? 0
        return UploadItem(
            relative: relative, size: size, immutable: kind != .mutable, contentType: type,
            cacheControl: PublishedHeaders.cacheControl(kind, manifest: manifest), contentEncoding: encoding)
    }

    /// The channel a path belongs to (objects: production, whose hints the edge uses for them).
    private static func channelName(_ relative: String) -> String {
        guard relative.hasPrefix(PublishedLayout.channels + "/") else { return Channel.production }
        return String(relative.split(separator: "/")[1])
    }

    /// Every channel's current manifest.
    private static func readChannels(_ root: String) throws(ObjectStoreError) -> [String: Manifest] {
        var out: [String: Manifest] = [:]
        for name in PublishedLayout.publishedChannels(root) {
            let path = PublishedLayout.channelManifest(root, name)
            do { out[name] = try Manifest(bytes: try FileIO.read(path)) } catch {
                throw ObjectStoreError(.usage, "\(path) is not a readable manifest: \(error)")
            }
        }
        guard out[Channel.production] != nil else {
            throw ObjectStoreError(.usage, "\(root) is not a published directory (it has no manifest.plist)")
        }
        return out
    }

    /// Each object path's content type: from the current manifests first (production, then the
    /// channels by name), then the versioned ones, newest first, as the edge decides it.
    private static func objectTypes(_ root: String, channels: [String: Manifest]) -> [String: String] {
        var manifests = [channels[Channel.production]!] + channels.filter { $0.key != Channel.production }.sorted { $0.key < $1.key }.map(\.value)
        for channel in [Channel.production] + channels.keys.filter({ $0 != Channel.production }).sorted() {
            let dir = PublishedLayout.path(PublishedLayout.channelRoot(root, channel), PublishedLayout.manifests)
            let versions = ((try? FileIO.list(dir)) ?? []).compactMap(PublishedLayout.version(ofManifestFile:)).sorted(by: >)
            manifests += versions.compactMap { try? Manifest(bytes: FileIO.read(dir + "/\($0).plist")) }
        }
        var types: [String: String] = [:]
        for entry in manifests.lazy.flatMap(\.allEntries) where types[entry.objectPath] == nil {
            types[entry.objectPath] = entry.contentType
        }
        return types
    }

    /// Every regular file under `root`, relative, without dot files.
    private static func files(_ root: String) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: root) else { return [] }
        var out: [String] = []
        while let rel = e.nextObject() as? String {
            if FileIO.lastComponent(of: rel).hasPrefix(".") { continue }
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + rel, isDirectory: &isDir), !isDir.boolValue { out.append(rel) }
        }
        return out
    }
}
