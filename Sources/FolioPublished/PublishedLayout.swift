import FolioSupport

/// The names in a published directory, which are also the edge's URL paths: the one place they
/// are written.
///
/// ```
/// manifest.plist                     the current manifest (the only file that changes)
/// manifest.plist.gz, .br, .json     its gzip and brotli variants and JSON mirror
/// keylist.plist                      the root-signed key list (signed publishes)
/// head.plist                         the current version in brief, and the deltas into it
/// deltas/<from>-<to>.plist[.gz|.br]  from one manifest.plist (by SHA-256) to another
/// manifests/<version>.plist          every manifest ever published
/// objects/<sha256>.<ext>[.gz|.br]    content-addressed objects (plists, assets), gzip and brotli variants
/// channels/<name>/                   another channel's manifest.plist (and mirrors), keylist.plist,
///                                    head.plist, deltas/ and manifests/, over the shared objects/
/// ```
/// The `production` channel is the root itself.
package enum PublishedLayout {
    /// The current manifest.
    package static let manifest = "manifest.plist"
    /// The current manifest, gzipped.
    package static let manifestGzip = "manifest.plist.gz"
    /// The current manifest, brotli-compressed.
    package static let manifestBrotli = "manifest.plist.br"
    /// The current manifest as JSON, for people and CI.
    package static let manifestJSON = "manifest.json"
    /// The key list a signed publish is signed under (also carried inside its manifest).
    package static let keyList = "keylist.plist"
    /// The current version in brief and the deltas that lead to it (``DeltaHead``).
    package static let head = "head.plist"
    /// The directory of deltas.
    package static let deltas = "deltas"
    /// The directory of objects.
    package static let objects = "objects"
    /// The directory of versioned manifests.
    package static let manifests = "manifests"
    /// The lock a folio-build publish (or prune) into the directory holds while it writes.
    package static let builderLock = ".folio-build.lock"

    /// `objects/<sha256>.<ext>` (`plist` for compiled entries, the asset's own extension else).
    package static func object(_ sha256: String, ext: String = "plist") -> String { "objects/\(sha256).\(ext)" }
    /// `objects/<sha256>.<ext>.gz`.
    package static func gzipObject(_ sha256: String, ext: String = "plist") -> String { "objects/\(sha256).\(ext).gz" }
    /// `objects/<sha256>.<ext>.br`.
    package static func brotliObject(_ sha256: String, ext: String = "plist") -> String { "objects/\(sha256).\(ext).br" }
    /// The object file extension for a logical path: its own, lowercased, when it is 1 to 10
    /// letters and digits; `bin` otherwise.
    package static func objectExtension(forPath path: String) -> String {
        if path.utf8.count > 6, path.utf8.reversed().starts(with: ".plist".utf8.reversed()) { return "plist" }  // most entries
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "bin" }
        let ext = name[name.index(after: dot)...].lowercased()
        let ok = (1...10).contains(ext.utf8.count) && ext.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) }
        return ok ? ext : "bin"
    }
    /// `deltas/<from>-<to>.plist`: the delta between two `manifest.plist` files, by SHA-256.
    package static func delta(from: String, to: String) -> String { "deltas/\(from)-\(to).plist" }
    /// The pair of manifest SHA-256s a file name under `deltas/` stands for.
    package static func deltaPair(ofFile name: String) -> (from: String, to: String)? {
        guard name.hasSuffix(".plist"), name.utf8.count == 64 * 2 + 1 + 6 else { return nil }
        let stem = name.dropLast(6)
        let from = stem.prefix(64)
        let to = stem.suffix(64)
        guard stem.dropFirst(64).first == "-", ContentHash.isSHA256Hex(from), ContentHash.isSHA256Hex(to) else { return nil }
        return (String(from), String(to))
    }
    /// `manifests/<version>.plist`.
    package static func versionedManifest(_ version: Int) -> String { "manifests/\(version).plist" }
    /// The version a file name under `manifests/` stands for (`12.plist` → 12).
    package static func version(ofManifestFile name: String) -> Int? {
        name.hasSuffix(".plist") ? Int(name.dropLast(6)) : nil
    }

    /// The directory of channels other than `production`.
    package static let channels = "channels"

    /// Where a channel's manifest, head, deltas and versioned manifests are, relative to the
    /// published root: `""` for `production`, `channels/<name>/` for another.
    package static func channelPrefix(_ channel: String) -> String {
        channel == Channel.production ? "" : "\(channels)/\(channel)/"
    }

    /// A published root's directory for `channel` (the root for `production`).
    package static func channelRoot(_ root: String, _ channel: String) -> String {
        channel == Channel.production ? root : "\(root)/\(channels)/\(channel)"
    }

    /// A channel's current `manifest.plist` under a published root.
    package static func channelManifest(_ root: String, _ channel: String) -> String {
        path(channelRoot(root, channel), manifest)
    }

    /// The channels a published root holds: `production` when it has a manifest, then the
    /// directories of `channels/` that have one, by name.
    package static func publishedChannels(_ root: String) -> [String] {
        let others = ((try? FileIO.list(path(root, channels))) ?? []).sorted().filter {
            Channel.isValidName($0) && $0 != Channel.production && FileIO.exists(channelManifest(root, $0))
        }
        return (FileIO.exists(path(root, manifest)) ? [Channel.production] : []) + others
    }

    /// `root/relative`.
    package static func path(_ root: String, _ relative: String) -> String { root + "/" + relative }
}

/// How bytes compare with a manifest entry.
package enum ObjectCheck: Equatable, Sendable {
    /// Size and SHA-256 match.
    case matches
    /// The size differs (the actual size).
    case wrongSize(Int)
    /// The size matches and the hash does not (the actual hex SHA-256).
    case wrongHash(String)
}
