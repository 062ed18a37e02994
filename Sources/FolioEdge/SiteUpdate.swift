import FolioPublished
import FolioSupport
import Foundation
import NIOCore

/// What changed between two lists of entries, as multisets: entries written the same at the
/// start and the end are skipped in one pass (an edit changes few), and the rest are matched by
/// path (a path listed again, as by a release over the defaults, by its count so far).
struct EntryDiff: Sendable {
    /// Entries of the old list the new one does not have (changed ones: their old form).
    var removed: [Manifest.Entry] = []
    /// Entries of the new list the old one does not have (changed ones: their new form).
    var added: [Manifest.Entry] = []

    /// No change.
    static let none = EntryDiff(from: [], to: [])

    init(from old: [Manifest.Entry], to new: [Manifest.Entry]) {
        let shorter = min(old.count, new.count)
        var start = 0
        while start < shorter, old[start] == new[start] { start += 1 }
        var end = 0
        while end < shorter - start, old[old.count - 1 - end] == new[new.count - 1 - end] { end += 1 }
        var before: [Key: Manifest.Entry] = [:]
        var seen: [String: Int] = [:]
        for entry in old[start..<old.count - end] { before[Key(entry, &seen)] = entry }
        seen = [:]
        for entry in new[start..<new.count - end] {
            let was = before.removeValue(forKey: Key(entry, &seen))
            if was == entry { continue }
            if let was { removed.append(was) }
            added.append(entry)
        }
        removed += before.values
    }

    /// An entry's path and how many entries before it in its list have that path.
    private struct Key: Hashable {
        let path: String
        let occurrence: Int

        init(_ entry: Manifest.Entry, _ seen: inout [String: Int]) {
            path = entry.path
            occurrence = seen[entry.path, default: 0]
            seen[entry.path] = occurrence + 1
        }
    }
}

/// How many entries of the manifests a site keeps objects for (each channel's, and those of
/// the version it replaced) name each object file and each object, so a new version can tell
/// which objects it adds and which it lets go from what changed alone.
struct ObjectRefs: Sendable {
    /// An object file: its object's SHA-256 (the entry's own string, so counting makes none) and
    /// its extension.
    struct File: Hashable, Sendable {
        let sha256: String
        let ext: String

        init(_ entry: Manifest.Entry) {
            sha256 = entry.sha256
            ext = entry.objectExtension
        }
    }

    /// By object file (`objects/<sha256>.<ext>`).
    private var files: [File: Int] = [:]
    /// By SHA-256.
    private var hashes: [String: Int] = [:]

    /// The counts of every entry of `manifests`.
    init(_ manifests: [Manifest]) {
        for manifest in manifests {
            for entry in manifest.allEntries { add(entry) }
        }
    }

    /// Whether some entry counted names `file`.
    func names(_ file: File) -> Bool { files[file] != nil }
    /// Whether some entry counted names the object `sha256`.
    func names(sha256: String) -> Bool { hashes[sha256] != nil }

    mutating func add(_ entry: Manifest.Entry) {
        files[File(entry), default: 0] += 1
        hashes[entry.sha256, default: 0] += 1
    }

    mutating func remove(_ entry: Manifest.Entry) {
        let file = File(entry)
        files[file, default: 0] -= 1
        hashes[entry.sha256, default: 0] -= 1
        if files[file] == 0 { files[file] = nil }
        if hashes[entry.sha256] == 0 { hashes[entry.sha256] = nil }
    }
}

/// A new version loaded from the version served by what changed: the channels whose manifest
/// changed get their routes anew (``ChannelRoutes``), their new objects are read and verified,
/// the objects no kept manifest names any more are let go, and the route table is a copy of
/// the served one with those routes changed. It answers as a whole load would (the edge's
/// tests load every step both ways and compare); where it could not be sure of that (a
/// channel added, removed or refused; production's Cache-Control changed; a catalog changed;
/// an object given other variants; anything that fails), it gives nil and the version is
/// loaded whole, which also says why it is refused.
struct SiteUpdate {
    let loader: SiteLoader
    let previous: Site
    let refs: ObjectRefs
    /// The manifests read, by channel.
    let manifests: [String: ChannelManifest]
    /// The channels whose manifest is not the one served, by name.
    let changed: [String]

    /// The update of `previous` to what `loader`'s root holds; nil when it must be loaded whole.
    static func load(_ loader: SiteLoader, previous: Site, parsed: [String: ParsedManifest]) -> Site? {
        guard let refs = previous.refs, previous.channelFailures.isEmpty, !previous.isAwaitingDeploy else { return nil }
        let names = PublishedLayout.publishedChannels(loader.root)
        guard Set(names) == Set(previous.channels.keys) else { return nil }
        var manifests: [String: ChannelManifest] = [:]
        var changed: [String] = []
        for name in names.sorted() {
            guard let (read, same) = try? read(name, loader, served: previous.channels[name]!, parsed: parsed[name]) else { return nil }
            manifests[name] = read
            if !same { changed.append(name) }
        }
        return try? SiteUpdate(loader: loader, previous: previous, refs: refs, manifests: manifests, changed: changed).run()
    }

    /// A channel's manifest, not parsed again when it has the bytes of the one served; and
    /// whether it has them.
    private static func read(_ name: String, _ loader: SiteLoader, served: LoadedChannel, parsed: ParsedManifest?) throws -> (ChannelManifest, Bool) {
        let path = PublishedLayout.channelManifest(loader.root, name)
        let bytes = try FileIO.read(path)
        if let old = served.versioned[served.manifest.version], Self.same(old, bytes) {
            return (try ChannelManifest.checked(bytes, served.manifest, root: loader.root, channel: name, trust: loader.trust), true)
        }
        return (try ChannelManifest.read(root: loader.root, channel: name, trust: loader.trust, parsed: parsed, keepValue: loader.keepValues), false)
    }

    private static func same(_ buffer: ByteBuffer, _ bytes: [UInt8]) -> Bool {
        buffer.readableBytes == bytes.count
            && buffer.withUnsafeReadableBytes { a in bytes.withUnsafeBytes { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    private func run() throws -> Site? {
        guard !changed.isEmpty, sameHeaders() else { return nil }
        let production = manifests[Channel.production]!
        let content = diff(Channel.production, defaultsOnly: true)
        guard !(content.added + content.removed).contains(where: { $0.path.hasPrefix("catalogs/") }) else { return nil }
        // Without releases, production's entries are its default entries: that diff serves both.
        let releases = !(previous.manifest.releases.isEmpty && production.manifest.releases.isEmpty)
        guard let step = try objectChanges(production: releases ? nil : content) else { return nil }
        var channels = previous.channels
        var routes: [String: Resource?] = [:]
        for name in changed {
            let channel = try loader.channelRoutes(manifests[name]!, previous: previous.channels[name])
            for path in previous.channels[name]!.routes.keys where channel.routes[path] == nil { routes[path] = .some(nil) }
            for (path, resource) in channel.routes { routes[path] = resource }
            channels[name] = channel
        }
        step.route(into: &routes, dates: LastModifiedText(created: production.created), cacheControl: objectCacheControl(production.manifest))
        contentRoutes(content, step.objects, production, into: &routes)
        let deltaBytes = channels.values.reduce(0) { $0 + $1.deltaBytes } - previous.channels.values.reduce(0) { $0 + $1.deltaBytes }
        return Site(
            manifest: production.manifest, routes: previous.routes.updating(routes), objects: step.objects, channels: channels,
            bytesInMemory: previous.bytesInMemory + step.bytesInMemory + deltaBytes, catalogs: previous.catalogs,
            retired: previous.channels.mapValues(\.manifest), refs: step.refs, changes: step.changes)
    }

    /// Whether production's manifest gives every route the Cache-Control the served one gave.
    private func sameHeaders() -> Bool {
        let new = manifests[Channel.production]!.manifest
        return objectCacheControl(new) == objectCacheControl(previous.manifest) && manifestCacheControl(new) == manifestCacheControl(previous.manifest)
    }

    private func objectCacheControl(_ manifest: Manifest) -> String { PublishedHeaders.cacheControl(.object, manifest: manifest) }
    private func manifestCacheControl(_ manifest: Manifest) -> String {
        loader.manifestHintOverride.applied(to: manifest.cacheHint("manifest")).cacheControl
    }

    /// `channel`'s entries changed from the served manifest to the new one (its default entries
    /// alone with `defaultsOnly`); none when the manifest is the one served.
    private func diff(_ channel: String, defaultsOnly: Bool = false) -> EntryDiff {
        guard changed.contains(channel), let served = previous.channels[channel]?.manifest, let new = manifests[channel]?.manifest else { return .none }
        return defaultsOnly ? EntryDiff(from: served.entries, to: new.entries) : EntryDiff(from: served.allEntries, to: new.allEntries)
    }

    /// The objects' counts moved from the served site's manifests (and those it replaced) to the
    /// new ones (and the served ones), the new objects loaded; nil when an object kept changes
    /// its variants. `production` is production's diff when already made.
    private func objectChanges(production: EntryDiff?) throws -> ObjectStep? {
        var step = ObjectStep(objects: previous.objects, refs: refs)
        // Production first, then by name: a new object's Last-Modified is the first channel's that names it.
        let others = previous.channels.keys.filter { $0 != Channel.production }.sorted()
        for name in [Channel.production] + others {
            let served = previous.channels[name]!.manifest.allEntries
            // What the served site's update changed, when it was one; else made again.
            let gone = previous.changes[name] ?? EntryDiff(from: previous.retired[name]?.allEntries ?? [], to: served)
            let next = name == Channel.production ? production ?? diff(name) : diff(name)
            step.changes[name] = next
            step.count(gone, new: false)
            step.count(next, new: true)
            guard try step.load(next.added, loader: loader, previous: previous, created: manifests[name]!.created) else { return nil }
        }
        let kept = manifests.values.map(\.manifest) + previous.channels.values.map(\.manifest)
        guard step.keepsTypes(previous.routes, kept: kept) else { return nil }
        step.letGo()
        return step
    }

    /// `/content/…` of production's default entries that changed (none of them a catalog's).
    private func contentRoutes(_ diff: EntryDiff, _ objects: [String: LoadedObject], _ production: ChannelManifest, into routes: inout [String: Resource?]) {
        let manifestCC = manifestCacheControl(production.manifest)
        let dates = LastModifiedText(created: production.created)
        for entry in diff.removed { routes["/content/" + entry.path] = .some(nil) }
        for entry in diff.added {
            guard let obj = objects[entry.sha256] else { continue }
            routes["/content/" + entry.path] = SiteLoader.objectResource(
                obj, cacheControl: entry.cache?.cacheControl ?? manifestCC, lastModified: dates.text(obj.lastModified),
                contentType: entry.contentType)
        }
    }
}

/// The objects of an update: counts moved entry by entry, the new objects loaded, and the
/// object files that come and go with them.
struct ObjectStep {
    var objects: [String: LoadedObject]
    var refs: ObjectRefs
    /// Bytes the new objects hold in memory, less those let go.
    var bytesInMemory = 0
    /// Object files an added entry names that no kept manifest named, with that entry (its content type).
    private var arriving: [ObjectRefs.File: Manifest.Entry] = [:]
    /// Added entries naming a file some kept manifest named already.
    private var naming: [Manifest.Entry] = []
    /// Removed entries.
    private var departing: [Manifest.Entry] = []
    /// Whether a file named anew is named by entries of two content types.
    private var mixedTypes = false
    /// Each channel's entries changed from the served site's manifest to the new one.
    var changes: [String: EntryDiff] = [:]

    init(objects: [String: LoadedObject], refs: ObjectRefs) {
        self.objects = objects
        self.refs = refs
    }

    /// Moves the counts by `diff`; with `new`, its added entries were not in any kept manifest
    /// (else they were the served manifests', which the new site keeps as the replaced version's).
    mutating func count(_ diff: EntryDiff, new: Bool) {
        for entry in diff.added {
            let file = ObjectRefs.File(entry)
            if let first = arriving[file] {
                if first.contentType != entry.contentType { mixedTypes = true }
            } else if !refs.names(file) {
                arriving[file] = entry
            } else if new {
                naming.append(entry)
            }
            refs.add(entry)
        }
        for entry in diff.removed { refs.remove(entry) }
        departing += diff.removed
    }

    /// Whether each `/objects/…` route keeps the Content-Type a whole load would give it (that of
    /// the first entry naming the file, production's first): no file named anew by entries of
    /// two types, none served with one type named by an added entry of another, and none that
    /// stays named after an entry of its route's type went while an entry of `kept` (the
    /// manifests the new site keeps objects for) of another type names it.
    func keepsTypes(_ routes: RouteTable, kept: [Manifest]) -> Bool {
        guard !mixedTypes else { return false }
        for entry in naming where routes["/" + entry.objectPath].map({ $0.identity.contentType != entry.contentType }) ?? false { return false }
        let staying = departing.filter { entry in
            refs.names(ObjectRefs.File(entry)) && routes["/" + entry.objectPath]?.identity.contentType == entry.contentType
        }
        guard !staying.isEmpty else { return true }
        // Most edits leave one such entry (the old one, kept a version more): compared one by one.
        for manifest in kept {
            for entry in manifest.allEntries {
                for other in staying where other.sha256 == entry.sha256 && other.contentType != entry.contentType { return false }
            }
        }
        return true
    }

    /// Loads and verifies the objects `added` name that the site does not hold; false when one
    /// it holds has other variants than an entry gives.
    mutating func load(_ added: [Manifest.Entry], loader: SiteLoader, previous: Site, created: Int64) throws -> Bool {
        for entry in added where objects[entry.sha256].map({ !$0.fits(entry) }) ?? false { return false }
        let budget = max(0, loader.memoryBudget - previous.bytesInMemory - bytesInMemory)
        var set = ObjectSet(root: loader.root, budget: budget, previous: [:], checked: loader.checked)
        try set.load(added.filter { objects[$0.sha256] == nil }, lastModified: created)
        for (sha, obj) in set.objects { objects[sha] = obj }
        bytesInMemory += set.bytesInMemory
        return true
    }

    /// Drops the objects no kept manifest names any more.
    mutating func letGo() {
        for entry in departing where !refs.names(sha256: entry.sha256) {
            guard let obj = objects.removeValue(forKey: entry.sha256) else { continue }
            bytesInMemory -= obj.bytesInMemory
        }
    }

    /// The `/objects/…` routes that come and go.
    func route(into routes: inout [String: Resource?], dates: LastModifiedText, cacheControl: String) {
        for entry in departing where !refs.names(ObjectRefs.File(entry)) { routes["/" + entry.objectPath] = .some(nil) }
        for (file, entry) in arriving where refs.names(file) {
            guard let obj = objects[entry.sha256] else { continue }
            routes["/" + entry.objectPath] = SiteLoader.objectResource(
                obj, cacheControl: cacheControl, lastModified: dates.text(obj.lastModified), contentType: entry.contentType)
        }
    }
}
