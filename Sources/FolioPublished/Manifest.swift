import FolioPlist
import FolioSupport
import Foundation

/// The published manifest: the one mutable file, naming every entry's content-addressed object.
package struct Manifest: Sendable, Equatable {
    /// The newest manifest layout this code reads.
    package static let currentSchemaVersion = 2
    /// The layout of an unsigned manifest, which clients from before signing also read.
    package static let unsignedSchemaVersion = 1
    /// The layout of a signed manifest (``SignedManifest``) and of the manifest inside it, which
    /// carries `expiresAt`.
    package static let signedSchemaVersion = 2
    /// The content type of every compiled plist entry.
    package static let plistContentType = "application/x-plist"

    /// Cache lifetimes a server should send and a client may assume for one kind of resource.
    package struct CacheHint: Sendable, Equatable {
        package var maxAge: Int
        package var staleWhileRevalidate: Int
        package var staleIfError: Int
        package var immutable: Bool

        package init(maxAge: Int, staleWhileRevalidate: Int = 0, staleIfError: Int = 0, immutable: Bool = false) {
            self.maxAge = maxAge
            self.staleWhileRevalidate = staleWhileRevalidate
            self.staleIfError = staleIfError
            self.immutable = immutable
        }

        /// The hint as a property list (`maxAge`, `staleWhileRevalidate`, `staleIfError`, `immutable`).
        package var plist: PlistValue {
            var d: [String: PlistValue] = [
                "maxAge": .int(Int64(maxAge)),
                "staleWhileRevalidate": .int(Int64(staleWhileRevalidate)),
                "staleIfError": .int(Int64(staleIfError)),
            ]
            if immutable { d["immutable"] = .bool(true) }
            return .dict(d)
        }

        /// Reads a hint written by ``plist``; `at` names it in errors.
        package init(plist value: PlistValue, at: String) throws(ManifestError) {
            guard case .dict(let d) = value else { throw ManifestError("\(at) is not a dictionary") }
            guard let maxAge = d["maxAge"]?.intValue, maxAge >= 0 else { throw ManifestError("\(at).maxAge is not a whole number of seconds") }
            self.init(
                maxAge: maxAge, staleWhileRevalidate: max(0, d["staleWhileRevalidate"]?.intValue ?? 0),
                staleIfError: max(0, d["staleIfError"]?.intValue ?? 0), immutable: d["immutable"]?.boolValue ?? false)
        }

        /// The `Cache-Control` value for this hint.
        package var cacheControl: String {
            var s = "public, max-age=\(maxAge)"
            if immutable { s += ", immutable" }
            if staleWhileRevalidate > 0 { s += ", stale-while-revalidate=\(staleWhileRevalidate)" }
            if staleIfError > 0 { s += ", stale-if-error=\(staleIfError)" }
            return s
        }
    }

    /// One logical path and the object that holds its bytes.
    package struct Entry: Sendable, Equatable {
        package var path: String
        package var sha256: String
        package var size: Int
        package var gzipSize: Int?
        /// The brotli variant's size, when the builder wrote one (smaller than the gzip one).
        package var brSize: Int?
        package var contentType: String
        package var locale: String?
        /// The content kind that compiled it (`data`, `document`, `asset`, `sonnet`, `catalog`,
        /// `index`); nil in manifests from before content kinds.
        package var kind: String?
        /// The project file's cache policy for this path, when it sets one (the edge's
        /// `/content/` Cache-Control and the client's freshness for it).
        package var cache: CacheHint?
        /// The oldest app version that may read this entry (the project file's
        /// `minimumAppVersion`); older apps get an update-required error for it.
        package var minimumAppVersion: String?

        package init(
            path: String, sha256: String, size: Int, gzipSize: Int?, contentType: String, locale: String? = nil,
            kind: String? = nil, cache: CacheHint? = nil, brSize: Int? = nil
        ) {
            self.path = path
            self.sha256 = sha256
            self.size = size
            self.gzipSize = gzipSize
            self.brSize = brSize
            self.contentType = contentType
            self.locale = locale
            self.kind = kind
            self.cache = cache
        }

        /// The object's file extension: the logical path's (`plist` for compiled entries).
        package var objectExtension: String { PublishedLayout.objectExtension(forPath: path) }
        /// The object's path under the published root.
        package var objectPath: String { PublishedLayout.object(sha256, ext: objectExtension) }
        /// The gzip variant's path under the published root, when there is one.
        package var gzipObjectPath: String? { gzipSize == nil ? nil : PublishedLayout.gzipObject(sha256, ext: objectExtension) }
        /// The brotli variant's path under the published root, when there is one.
        package var brotliObjectPath: String? { brSize == nil ? nil : PublishedLayout.brotliObject(sha256, ext: objectExtension) }
        /// The fewest bytes it can travel in: its smallest variant.
        package var wireSize: Int { min(size, gzipSize ?? size, brSize ?? size) }
        /// Whether the entry holds a property list (structured data, documents, indexes, catalogs).
        package var isPlist: Bool { contentType == Manifest.plistContentType }

        /// Whether `bytes` are this entry's object: its size, then its SHA-256.
        package func check(_ bytes: [UInt8]) -> ObjectCheck {
            guard bytes.count == size else { return .wrongSize(bytes.count) }
            let actual = ContentHash.sha256Hex(bytes)
            return actual == sha256 ? .matches : .wrongHash(actual)
        }

        /// Whether `bytes` are this entry's object.
        package func matches(_ bytes: [UInt8]) -> Bool { check(bytes) == .matches }

        /// The entry as a property list.
        package var plist: PlistValue {
            var d: [String: PlistValue] = [
                "path": .string(path), "sha256": .string(sha256), "size": .int(Int64(size)), "contentType": .string(contentType),
            ]
            if let gzipSize { d["gzipSize"] = .int(Int64(gzipSize)) }
            if let brSize { d["brSize"] = .int(Int64(brSize)) }
            if let locale { d["locale"] = .string(locale) }
            if let kind { d["kind"] = .string(kind) }
            if let cache { d["cache"] = cache.plist }
            if let minimumAppVersion { d["minimumAppVersion"] = .string(minimumAppVersion) }
            return .dict(d)
        }

        /// Reads an entry of a manifest's `entries`, checking every field; `at` names it in errors.
        package init(plist item: PlistValue, at: String) throws(ManifestError) {
            guard case .dict(let d) = item else { throw ManifestError("\(at) is not a dictionary") }
            try self.init(at: at) { d[$0] }
        }

        /// Reads an entry whose value for each key `value` gives, checking every field.
        init(at: String, _ value: (String) -> PlistValue?) throws(ManifestError) {
            func field(_ key: String) throws(ManifestError) -> PlistValue {
                guard let v = value(key) else { throw ManifestError("\(at) has no \"\(key)\"") }
                return v
            }
            func string(_ key: String) throws(ManifestError) -> String {
                let v = try field(key)
                guard let s = v.stringValue else { throw ManifestError("\(at).\(key) is a \(v.typeName), not a string") }
                return s
            }
            let path = try string("path")
            guard Manifest.isValidPath(path) else { throw ManifestError("\(at).path \"\(path)\" is not a clean relative path") }
            let sha = try string("sha256")
            guard ContentHash.isSHA256Hex(sha) else { throw ManifestError("\(at).sha256 \"\(sha)\" is not a lowercase hex SHA-256") }
            let sizeValue = try field("size")
            guard let size = sizeValue.intValue else { throw ManifestError("\(at).size is a \(sizeValue.typeName), not an integer") }
            guard size >= 0 else { throw ManifestError("\(at).size is negative") }
            let gzipSize = value("gzipSize")?.intValue
            if let g = gzipSize, g < 0 { throw ManifestError("\(at).gzipSize is negative") }
            let brSize = value("brSize")?.intValue
            if let b = brSize, b < 0 { throw ManifestError("\(at).brSize is negative") }
            self.init(
                path: path, sha256: sha, size: size, gzipSize: gzipSize, contentType: try string("contentType"),
                locale: value("locale")?.stringValue, kind: value("kind")?.stringValue,
                cache: try value("cache").map { v throws(ManifestError) in try CacheHint(plist: v, at: at + ".cache") }, brSize: brSize)
            minimumAppVersion = try Manifest.appVersion(value("minimumAppVersion"), at: at + ".minimumAppVersion")
        }
    }

    package var schemaVersion: Int
    package var version: Int
    package var createdAt: Date
    package var sourceRevision: String?
    /// The publish history this version belongs to: made at the first publish into a directory
    /// and carried by every later one. Versions are comparable only within one history.
    package var history: String?
    /// A message for the app's users that comes with this version (maintenance, an outage, new
    /// content), shown by `folio status` and `folio read` and offered to apps; nil for none.
    package var notice: String?
    /// The oldest app version this version is for (`folio-build --minimum-app-version`): an
    /// older app keeps the version it has and is told to update.
    package var minimumAppVersion: String?
    /// Until when the publisher says the service is in maintenance (`folio-build
    /// --maintenance-until`): clients take the version and report maintenance until then.
    package var maintenanceUntil: Date?
    /// The channel it was published into (`folio-build --channel`); nil for `production`.
    package var channel: String?
    /// The app should apply this version at once (`folio-build --critical`).
    package var critical = false
    /// Staged and targeted releases over the default entries, in the order clients try them
    /// (``chooseRelease(installID:context:)``).
    package var releases: [Release] = []
    /// When a signed manifest stops being accepted (nil for an unsigned one).
    package var expiresAt: Date?
    /// Cache hints by kind: `manifest` (the mutable manifest and logical paths) and `object`.
    package var cacheHints: [String: CacheHint]
    /// Entries sorted by path.
    package var entries: [Entry]

    /// The defaults: objects cached for a year and immutable; the manifest for a minute,
    /// served stale for five minutes while revalidating and for a day if the origin fails.
    package static let defaultCacheHints: [String: CacheHint] = [
        "manifest": CacheHint(maxAge: 60, staleWhileRevalidate: 300, staleIfError: 86_400),
        "object": CacheHint(maxAge: 31_536_000, immutable: true),
    ]

    package init(
        version: Int, createdAt: Date, sourceRevision: String? = nil, history: String? = nil, notice: String? = nil,
        expiresAt: Date? = nil, cacheHints: [String: CacheHint] = Manifest.defaultCacheHints, entries: [Entry]
    ) {
        self.notice = notice
        self.expiresAt = expiresAt
        self.schemaVersion = expiresAt == nil ? Manifest.unsignedSchemaVersion : Manifest.signedSchemaVersion
        self.version = version
        self.createdAt = createdAt
        self.sourceRevision = sourceRevision
        self.history = history
        self.cacheHints = cacheHints
        self.entries = entries.sorted { $0.path < $1.path }
    }

    /// An optional app version field: absent, or a string `AppVersion` reads.
    static func appVersion(_ value: PlistValue?, at: String) throws(ManifestError) -> String? {
        guard let value else { return nil }
        guard let text = value.stringValue else { throw ManifestError("\(at) is a \(value.typeName), not a string") }
        guard AppVersion(text) != nil else { throw ManifestError("\(at): \(AppVersion.problem(text))") }
        return text
    }

    /// The newest of the minimum app versions the manifest and `entry` set, if any.
    package func minimumAppVersion(for entry: Entry) -> AppVersion? {
        [minimumAppVersion, entry.minimumAppVersion].compactMap { $0.flatMap(AppVersion.init) }.max()
    }

    /// The entry for a logical path.
    package func entry(_ path: String) -> Entry? {
        // Entries are sorted by path: binary search.
        var lo = 0
        var hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].path < path { lo = mid + 1 } else { hi = mid }
        }
        return lo < entries.count && entries[lo].path == path ? entries[lo] : nil
    }

    /// The cache hint for `kind`, or the default.
    package func cacheHint(_ kind: String) -> CacheHint {
        cacheHints[kind] ?? Manifest.defaultCacheHints[kind] ?? CacheHint(maxAge: 0)
    }

    /// How long a client may keep this version without asking the edge: the manifest's
    /// `max-age`, or an entry's own shorter one (the server sets how long each piece is kept).
    package var freshnessLifetime: Int { freshnessLifetime(server: nil) }

    /// The same, starting from the lifetime the edge gave the manifest's response (its
    /// `max-age` minus its `Age`) where it gave one.
    package func freshnessLifetime(server: Int?) -> Int {
        entries.reduce(server ?? cacheHint("manifest").maxAge) { lifetime, e in min(lifetime, e.cache?.maxAge ?? lifetime) }
    }

    /// Whether two manifests publish the same entries (ignoring version and dates).
    package func sameContent(as other: Manifest) -> Bool {
        entries == other.entries && cacheHints == other.cacheHints && notice == other.notice
            && minimumAppVersion == other.minimumAppVersion && maintenanceUntil == other.maintenanceUntil
            && channel == other.channel && critical == other.critical && releases == other.releases
    }

    /// The manifest as a property list.
    package var plist: PlistValue {
        var hints: [String: PlistValue] = [:]
        for (kind, h) in cacheHints { hints[kind] = h.plist }
        var root: [String: PlistValue] = [
            "schemaVersion": .int(Int64(schemaVersion)),
            "version": .int(Int64(version)),
            "createdAt": .date(createdAt),
            "cacheHints": .dict(hints),
            "entries": .array(entries.map(\.plist)),
        ]
        if let sourceRevision { root["sourceRevision"] = .string(sourceRevision) }
        if let history { root["history"] = .string(history) }
        if let notice { root["notice"] = .string(notice) }
        if let minimumAppVersion { root["minimumAppVersion"] = .string(minimumAppVersion) }
        if let maintenanceUntil { root["maintenanceUntil"] = .date(maintenanceUntil) }
        if let expiresAt { root["expiresAt"] = .date(expiresAt) }
        if let channel { root["channel"] = .string(channel) }
        if critical { root["critical"] = .bool(true) }
        if !releases.isEmpty { root["releases"] = .array(releases.map(\.plist)) }
        return .dict(root)
    }

    /// Reads a manifest from a property list, checking every field.
    package init(plist: PlistValue) throws(ManifestError) {
        try self.init(plist: plist, entries: nil)
    }

    /// Reads a manifest from a property list, checking every field; its entries are `given`
    /// when they were read already (``init(patched:from:sourceValue:edit:)``), in the list's order.
    init(plist: PlistValue, entries given: [Entry]?) throws(ManifestError) {
        guard case .dict(let root) = plist else { throw ManifestError("the manifest is a \(plist.typeName), not a dictionary") }
        func int(_ d: [String: PlistValue], _ key: String, _ at: String) throws(ManifestError) -> Int {
            guard let v = d[key] else { throw ManifestError("\(at) has no \"\(key)\"") }
            guard let i = v.intValue else { throw ManifestError("\(at).\(key) is a \(v.typeName), not an integer") }
            return i
        }
        func string(_ d: [String: PlistValue], _ key: String, _ at: String) throws(ManifestError) -> String {
            guard let v = d[key] else { throw ManifestError("\(at) has no \"\(key)\"") }
            guard let s = v.stringValue else { throw ManifestError("\(at).\(key) is a \(v.typeName), not a string") }
            return s
        }
        schemaVersion = try int(root, "schemaVersion", "manifest")
        guard (Manifest.unsignedSchemaVersion...Manifest.currentSchemaVersion).contains(schemaVersion) else {
            throw ManifestError(
                "schemaVersion \(schemaVersion) is not supported (this build reads \(Manifest.unsignedSchemaVersion) to \(Manifest.currentSchemaVersion)); update folio")
        }
        version = try int(root, "version", "manifest")
        guard version >= 1 else { throw ManifestError("manifest.version \(version) must be at least 1") }
        guard let created = root["createdAt"]?.dateValue else { throw ManifestError("manifest has no createdAt date") }
        guard abs(created.timeIntervalSinceReferenceDate) <= PlistDates.maximumMagnitude else {
            throw ManifestError("manifest createdAt is not a usable date (\(created.timeIntervalSinceReferenceDate) seconds from 2001)")
        }
        createdAt = created
        sourceRevision = root["sourceRevision"]?.stringValue
        history = root["history"]?.stringValue
        if let n = root["notice"] {
            guard let text = n.stringValue else { throw ManifestError("manifest.notice is a \(n.typeName), not a string") }
            notice = text
        }
        minimumAppVersion = try Manifest.appVersion(root["minimumAppVersion"], at: "manifest.minimumAppVersion")
        if let m = root["maintenanceUntil"] {
            guard let date = m.dateValue, abs(date.timeIntervalSinceReferenceDate) <= PlistDates.maximumMagnitude else {
                throw ManifestError("manifest.maintenanceUntil is not a usable date")
            }
            maintenanceUntil = date
        }
        if let e = root["expiresAt"] {
            guard let date = e.dateValue, abs(date.timeIntervalSinceReferenceDate) <= PlistDates.maximumMagnitude else {
                throw ManifestError("manifest.expiresAt is not a usable date")
            }
            expiresAt = date
        }
        var hints: [String: CacheHint] = [:]
        if let h = root["cacheHints"] {
            guard case .dict(let kinds) = h else { throw ManifestError("manifest.cacheHints is not a dictionary") }
            for (kind, value) in kinds { hints[kind] = try CacheHint(plist: value, at: "manifest.cacheHints.\(kind)") }
        }
        cacheHints = hints
        guard let list = root["entries"]?.arrayValue else { throw ManifestError("manifest has no entries array") }
        var entries: [Entry] = []
        if let given {
            entries = given
        } else {
            entries.reserveCapacity(list.count)
            for (i, item) in list.enumerated() {
                entries.append(try Entry(plist: item, at: "manifest.entries[\(i)]"))
            }
        }
        self.entries = try Manifest.sortedByPath(entries)
        try readReleases(root)
    }

    /// `entries` in path order (a builder writes them so: checked in one pass, sorted only when
    /// they are not), refused when two share a path.
    static func sortedByPath(_ entries: [Entry]) throws(ManifestError) -> [Entry] {
        var entries = entries
        if !entries.indices.dropFirst().allSatisfy({ entries[$0 - 1].path < entries[$0].path }) {
            entries.sort { $0.path < $1.path }
            for i in entries.indices.dropFirst() where entries[i].path == entries[i - 1].path {
                throw ManifestError("manifest lists \"\(entries[i].path)\" twice")
            }
        }
        return entries
    }

    /// The channel, the critical flag and the releases, checked.
    private mutating func readReleases(_ root: [String: PlistValue]) throws(ManifestError) {
        if let c = root["channel"] {
            guard let name = c.stringValue, Channel.isValidName(name) else { throw ManifestError("manifest.channel is not a channel name") }
            channel = name == Channel.production ? nil : name
        }
        critical = root["critical"]?.boolValue ?? false
        guard let list = root["releases"] else { return }
        guard let items = list.arrayValue else { throw ManifestError("manifest.releases is not an array") }
        var ids = Set<Int>()
        for (i, item) in items.enumerated() {
            let r = try Release(plist: item, at: "manifest.releases[\(i)]")
            guard ids.insert(r.id).inserted else { throw ManifestError("manifest.releases lists release \(r.id) twice") }
            releases.append(r)
        }
    }

    /// Decodes a manifest from bytes in any plist format: a plain manifest, or the one inside a
    /// ``SignedManifest`` (whose signatures this does not check; ``Trust`` does).
    package init(bytes: [UInt8]) throws(ManifestError) {
        let value: PlistValue
        do { value = try PlistValue.decode(bytes) } catch { throw ManifestError("not a property list: \(error)") }
        try self.init(decoded: value)
    }

    /// The manifest of a file already decoded to `value`: a plain manifest, or the one inside a
    /// ``SignedManifest``.
    package init(decoded value: PlistValue) throws(ManifestError) {
        if let signed = try Manifest.unwrapSigned(value) {
            self = signed.manifest
            return
        }
        try self.init(plist: value)
    }

    /// The signed bytes inside a ``SignedManifest``'s plist and the manifest they hold, checked
    /// as every reader checks them (the one path for the edge, the client and ``Trust``); nil
    /// for a plain manifest.
    package static func unwrapSigned(_ value: PlistValue) throws(ManifestError) -> (bytes: [UInt8], manifest: Manifest)? {
        guard let inner = try signedBytes(value) else { return nil }
        let signed: PlistValue
        do { signed = try PlistValue.decode(inner) } catch { throw ManifestError("the signed manifest's manifest is not a property list: \(error)") }
        let manifest = try Manifest(plist: signed)
        guard manifest.schemaVersion == Manifest.signedSchemaVersion, manifest.expiresAt != nil else {
            throw ManifestError("a signed manifest must be schemaVersion \(Manifest.signedSchemaVersion) with an expiresAt date")
        }
        return (inner, manifest)
    }

    /// The signed bytes inside a ``SignedManifest``'s plist, its envelope checked; nil for a
    /// plain manifest.
    package static func signedBytes(_ value: PlistValue) throws(ManifestError) -> [UInt8]? {
        guard value["entries"] == nil, let data = value["manifest"]?.dataValue else { return nil }
        guard value["schemaVersion"]?.intValue == Manifest.signedSchemaVersion else {
            throw ManifestError("the signed manifest's schemaVersion is not \(Manifest.signedSchemaVersion)")
        }
        return Array(data)
    }

    /// Whether `path` is a relative path of plain segments (no `.`, `..`, empty or hidden segments).
    package static func isValidPath(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { bytes in
            guard !bytes.isEmpty, bytes.count <= 1024 else { return false }
            var segmentStart = true
            for b in bytes {
                if b < 0x20 || b == 0x5C || b == 0x7F { return false }
                if segmentStart, b == 0x2F || b == 0x2E { return false }  // an empty or hidden segment
                segmentStart = b == 0x2F
            }
            return !segmentStart
        }
    }
}

/// A manifest that cannot be read, with the field at fault.
package struct ManifestError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Identities of publish histories (``Manifest/history``).
package enum PublishHistory {
    /// A new identity for a first publish: random, or with `reproducible` (`SOURCE_DATE_EPOCH`
    /// set) derived from the first version's time and entries, so that the same content gives
    /// the same bytes on any machine.
    package static func make(createdAt: Date, entries: [Manifest.Entry], reproducible: Bool) -> String {
        guard reproducible else {
            var rng = SystemRandomNumberGenerator()
            return (0..<4).map { _ in String(rng.next() as UInt32, radix: 16).leftPadded(8) }.joined()
        }
        var text = "folio-history 1\n\(Int64(createdAt.timeIntervalSince1970.rounded(.down)))\n"
        for e in entries { text += "\(e.path) \(e.sha256)\n" }
        return String(ContentHash.sha256Hex(Array(text.utf8)).prefix(32))
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
