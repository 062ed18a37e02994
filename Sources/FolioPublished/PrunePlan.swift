import FolioSupport

/// What a prune of a published directory keeps and removes, decided from a listing of its
/// files (relative path → size) and the bytes of the manifests it must read: the one rule
/// shared by `folio-build prune` on a directory, on a bucket and on an edge.
///
/// Per channel it keeps the current `manifest.plist` and the `keep` newest versioned
/// manifests (`manifests/N.plist`, and the one of the current version), and with them every
/// object any release of those manifests names (each with its `.gz` and `.br` variants), the
/// deltas into any of those versions and the deltas `head.plist` names (into the current
/// version and into its waypoint). Only files under `objects/`, `deltas/` and `manifests/`
/// whose names are Folio's are candidates; anything else (the manifest and its mirrors,
/// heads, key lists, unknown files) is never touched, and unknown names there are counted.
package struct PrunePlan: Sendable {
    /// One file of the published directory, relative to its root, and its size.
    package struct File: Sendable, Equatable, Codable {
        package var path: String
        package var size: Int

        package init(path: String, size: Int) {
            self.path = path
            self.size = size
        }
    }

    /// The candidates to go, in a safe order: versioned manifests, then deltas, then objects
    /// (a prune cut short leaves unreferenced objects, never a manifest without its objects).
    package private(set) var removed: [File] = []
    /// The candidates kept.
    package private(set) var kept: [File] = []
    /// Files under `objects/`, `deltas/` or `manifests/` whose names are not Folio's: left alone.
    package private(set) var unknown: [String] = []
    /// The versioned manifests kept, per channel name.
    package private(set) var versionsKept: [String: [Int]] = [:]

    package var removedBytes: Int { removed.reduce(0) { $0 + $1.size } }
    package var keptBytes: Int { kept.reduce(0) { $0 + $1.size } }

    /// The newest versions kept per channel by default: the delta history, so the next publish
    /// still finds every manifest it writes deltas from.
    package static let defaultKeep = 10

    /// The channel prefixes of a listing (`""` for production, `channels/<name>/` else) and,
    /// per channel, its versioned manifests' numbers.
    static func versions(_ files: [String: Int]) -> [String: [Int]] {
        var out: [String: [Int]] = [:]
        for path in files.keys {
            guard let (prefix, rest) = split(path) else { continue }
            if rest == PublishedLayout.manifest { out[prefix, default: []] += [] }
            guard rest.hasPrefix(PublishedLayout.manifests + "/") else { continue }
            let name = rest.dropFirst(PublishedLayout.manifests.count + 1)
            if let v = PublishedLayout.version(ofManifestFile: String(name)), v > 0 { out[prefix, default: []].append(v) }
        }
        return out.mapValues { $0.sorted() }
    }

    /// `channels/<name>/rest` → (`channels/<name>/`, `rest`); `rest` → (`""`, `rest`); nil for a
    /// path under `channels/` that is not a valid channel's.
    static func split(_ path: String) -> (prefix: String, rest: String)? {
        guard path.hasPrefix(PublishedLayout.channels + "/") else { return ("", path) }
        let parts = path.split(separator: "/", maxSplits: 2)
        guard parts.count == 3, Channel.isValidName(String(parts[1])), parts[1] != Channel.production else { return nil }
        return ("\(parts[0])/\(parts[1])/", String(parts[2]))
    }

    /// The versioned manifests kept in a channel: its `keep` newest.
    static func keptVersions(_ versions: [Int], keep: Int) -> [Int] { Array(versions.suffix(max(1, keep))) }

    /// The files a plan needs the bytes of: each channel's `manifest.plist` and `head.plist`
    /// (when listed) and its kept versioned manifests.
    package static func filesToRead(_ files: [String: Int], keep: Int) -> [String] {
        var out: [String] = []
        for (prefix, versions) in Self.versions(files) {
            for name in [PublishedLayout.manifest, PublishedLayout.head] where files[prefix + name] != nil { out.append(prefix + name) }
            out += keptVersions(versions, keep: keep).map { prefix + PublishedLayout.versionedManifest($0) }
        }
        return out.sorted()
    }
}

/// Why a prune cannot go on (nothing was removed), in words.
package struct PruneError: Error, CustomStringConvertible, Sendable {
    package var description: String
    /// A publish holds the directory's lock.
    package var isLocked = false

    package init(_ description: String, isLocked: Bool = false) {
        self.description = description
        self.isLocked = isLocked
    }
}

extension PrunePlan {
    /// What one channel keeps: versioned manifests by number, and the manifests' SHA-256s that
    /// deltas may lead into.
    struct Kept {
        var versions: Set<Int> = []
        var targets: Set<String> = []
    }

    /// How one listed file is treated.
    enum Verdict {
        case keep, unknown, other
        /// Removed, in this order: versioned manifests (0), deltas (1), objects (2).
        case remove(Int)
    }

    /// The plan for `files` at `location` (for messages), given `contents`, the bytes of
    /// ``filesToRead(_:keep:)``; `alsoKeep` are object hashes kept whatever the manifests say
    /// (what an edge has loaded). Throws when a kept manifest is missing or unreadable: nothing
    /// is safe to remove then.
    package init(files: [String: Int], contents: [String: [UInt8]], keep: Int, alsoKeep: Set<String> = [], location: String) throws(PruneError) {
        var objects = alsoKeep
        var channels: [String: Kept] = [:]
        for (prefix, versions) in Self.versions(files) {
            let kept = try Self.kept(prefix: prefix, versions: versions, contents: contents, keep: keep, objects: &objects, location: location)
            channels[prefix] = kept
            versionsKept[prefix.isEmpty ? Channel.production : String(prefix.dropFirst(PublishedLayout.channels.count + 1).dropLast())] =
                kept.versions.sorted()
        }
        guard files[PublishedLayout.manifest] != nil || channels.keys.contains(where: { files[$0 + PublishedLayout.manifest] != nil }) else {
            throw PruneError("\(location) holds no manifest.plist: it is not a published directory (give folio-build's --output, or where it was published)")
        }
        var ranked: [(rank: Int, file: File)] = []
        for (path, size) in files.sorted(by: { $0.key < $1.key }) {
            switch Self.verdict(path, channels: channels, objects: objects) {
            case .keep: kept.append(File(path: path, size: size))
            case .remove(let rank): ranked.append((rank, File(path: path, size: size)))
            case .unknown: unknown.append(path)
            case .other: continue
            }
        }
        removed = ranked.sorted { ($0.rank, $0.file.path) < ($1.rank, $1.file.path) }.map(\.file)
    }

    /// A channel's kept manifests read: their versions, their SHA-256s and the head's targets;
    /// every object hash they name added to `objects`.
    static func kept(
        prefix: String, versions: [Int], contents: [String: [UInt8]], keep: Int, objects: inout Set<String>, location: String
    ) throws(PruneError) -> Kept {
        var kept = Kept()
        kept.versions = Set(keptVersions(versions, keep: keep))
        var paths = kept.versions.map { prefix + PublishedLayout.versionedManifest($0) }
        if versions.isEmpty || contents[prefix + PublishedLayout.manifest] != nil { paths.append(prefix + PublishedLayout.manifest) }
        for path in paths {
            guard let bytes = contents[path] else {
                throw PruneError("\(location)/\(path) could not be read: run the prune again (nothing was removed)")
            }
            let manifest: Manifest
            do { manifest = try Manifest(bytes: bytes) } catch {
                throw PruneError("\(location)/\(path) is not a manifest folio-build can read (\(error)): nothing was removed; restore or remove that file first")
            }
            kept.versions.insert(manifest.version)
            kept.targets.insert(ContentHash.sha256Hex(bytes))
            for entry in manifest.allEntries { objects.insert(entry.sha256) }
        }
        if let bytes = contents[prefix + PublishedLayout.head], let head = try? DeltaHead(bytes: bytes) {
            kept.targets.insert(head.sha256)
            if let waypoint = head.waypoint { kept.targets.insert(waypoint.sha256) }
        }
        return kept
    }

    /// Whether `path` is kept, removed, an unknown name where Folio's files are, or none of those.
    static func verdict(_ path: String, channels: [String: Kept], objects: Set<String>) -> Verdict {
        guard let (prefix, rest) = split(path) else { return .other }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[1].hasPrefix(".") else { return .other }
        let name = String(parts[1])
        // Objects are the root's, shared by every channel.
        if prefix.isEmpty, parts[0] == PublishedLayout.objects {
            let sha = name.prefix(64)
            guard name.dropFirst(64).first == ".", ContentHash.isSHA256Hex(sha) else { return .unknown }
            return objects.contains(String(sha)) ? .keep : .remove(2)
        }
        guard let channel = channels[prefix] else { return .other }
        switch parts[0] {
        case Substring(PublishedLayout.manifests):
            guard let v = PublishedLayout.version(ofManifestFile: name) else { return .unknown }
            return channel.versions.contains(v) ? .keep : .remove(0)
        case Substring(PublishedLayout.deltas):
            let stem = name.hasSuffix(".gz") || name.hasSuffix(".br") ? String(name.dropLast(3)) : name
            guard let pair = PublishedLayout.deltaPair(ofFile: stem) else { return .unknown }
            return channel.targets.contains(pair.to) ? .keep : .remove(1)
        default:
            return .other
        }
    }
}
