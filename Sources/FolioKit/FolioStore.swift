@_exported import FolioKitCore
@_exported import FolioLocalization
@_exported import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import Logging

/// An offline-first store of published Folio content: a verified cache directory kept in step
/// with an edge, and a seed for the first run.
///
/// Reads never wait for the network: they answer from the cache, else from the seed, and fail
/// only when there is no content at all. ``sync(force:allowDowngrade:)`` brings the cache up to
/// the edge's current version with the guarantees of `folio sync`: one conditional GET of the
/// manifest, only the objects the cache lacks, each verified by size and SHA-256, and a switch
/// that a crash cannot leave half done.
public final class FolioStore: Sendable {
    /// The edge's base URL (`http://` or `https://`).
    public let edge: String
    /// The cache directory.
    public let cacheDirectory: String
    /// The seed read when the cache holds nothing verified (or an older version of its history).
    public let seed: FolioSeed?
    /// The root keys whose signatures every synced manifest needs; nil accepts unsigned content.
    public let trust: FolioTrust?
    /// Request fields, timeout, extra certificate authorities and the app's context.
    public let http: FolioHTTPConfiguration
    /// Where the store says what it does; silent unless the app gives one.
    public let logger: Logger
    /// The release channel followed (`production` unless the app picks another, like `beta`).
    public let channel: String
    /// The id rollout buckets are drawn from; nil: a random one kept in the cache directory.
    public let installID: String?

    private let cache: ContentCache
    /// How it reaches the edge: one URLSession for the store's lifetime.
    private let transport: any Transport
    private let listeners = Listeners()
    /// The last view read from disk and the stamp of the cache state it was read under: every
    /// switch replaces `state.plist` by rename, so an equal stamp means the same version and
    /// reads skip re-reading and re-hashing the manifest.
    private let resolved = Locked<(stamp: FileStamp?, view: ContentView?)>((nil, nil))

    /// Syncs running now.
    private let running = Counter()

    /// Opens a store; nothing is read or fetched until asked. With `trust`, a sync accepts only
    /// manifests signed under a key list that one of its roots signed, unexpired, and not older
    /// than what the store already holds or `seed` bundles. `http` adds request fields (an auth
    /// token), the app's context and certificate authorities; `logger` receives what the store
    /// has to say (it never prints). `channel` picks the release channel; staged and targeted
    /// releases are chosen with `http.context` and `installID` (by default a random id kept in
    /// the cache directory).
    public init(
        edge: String, cacheDirectory: String, seed: FolioSeed? = nil, trust: FolioTrust? = nil,
        http: FolioHTTPConfiguration = FolioHTTPConfiguration(), channel: String = "production", installID: String? = nil,
        logger: Logger = Logger(label: "folio", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(FolioError) {
        try http.validate()
        guard Channel.isValidName(channel) else { throw FolioError(.invalidContent, "the channel: \(Channel.problem(channel))") }
        self.channel = channel
        self.installID = installID
        if let text = http.context?.appVersion, AppVersion(text) == nil {
            throw FolioError(.invalidContent, "the app context's version: \(AppVersion.problem(text))")
        }
        self.trust = trust
        self.http = http
        self.logger = logger
        let trimmed = edge.hasSuffix("/") ? String(edge.dropLast()) : edge
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw FolioError(.invalidContent, "the edge \(edge) is not an http:// or https:// URL", url: edge)
        }
        self.edge = trimmed
        self.cacheDirectory = cacheDirectory
        self.seed = seed
        self.cache = ContentCache(dir: cacheDirectory, edge: trimmed, channel: channel)
        self.transport = Transports.forEdge(trimmed, configuration: http)
    }

    // MARK: Syncing

    /// Brings the cache up to the edge's current version.
    ///
    /// Returns how it went; `.offline` when the edge cannot be reached (the cache is unchanged and
    /// still readable). Throws when the edge answers with something unusable, with `hasContent`
    /// saying whether reads still have data to show.
    @discardableResult
    public func sync(force: Bool = false, allowDowngrade: Bool = false) async throws(FolioError) -> SyncOutcome {
        let listeners = self.listeners
        var settings = SyncSettings(edge: edge, transport: transport)
        settings.force = force
        settings.allowDowngrade = allowDowngrade
        settings.trust = trust?.trust
        settings.seed = trust == nil ? nil : seed?.manifest
        settings.http = http
        settings.appVersion = appVersion
        settings.channel = channel
        settings.context = http.context?.releaseContext ?? ReleaseContext()
        settings.installID = installID
        settings.logger = logger
        settings.progress = { listeners.progress($0) }
        settings.willCommit = { old, new in listeners.willChange(ContentChange(from: old, to: new)) }
        settings.didCommit = { old, new in listeners.change(ContentChange(from: old, to: new)) }
        if running.add(1) == 1 { listeners.activity(true) }
        defer { if running.add(-1) == 0 { listeners.activity(false) } }
        let report: SyncReport
        do {
            report = try await Syncer(cache: cache, settings: settings).run()
        } catch let error as FolioError {
            var error = error
            error.hasContent = hasContent
            throw error
        } catch {
            throw FolioError(
                .io, "syncing into \(cacheDirectory) failed: \(error)", path: cacheDirectory, underlying: error,
                hasContent: hasContent)
        }
        return SyncOutcome(report)
    }

    /// Whether a sync of this store is running now.
    public var isSyncing: Bool { running.value > 0 }

    /// `true` when a sync starts while none was running, `false` when the last one ends, from
    /// now on: for an activity indicator.
    public func activity() -> AsyncStream<Bool> { listeners.activityStream() }

    /// A change for every sync from now on that is about to switch the store to a new version,
    /// announced before the switch (reads answer the old version until ``changes()`` has it).
    public func willChange() -> AsyncStream<ContentChange> { listeners.willChangeStream() }

    /// Progress of the object downloads of every sync from now on, for a progress bar.
    public func progress() -> AsyncStream<SyncProgress> { listeners.progressStream() }

    /// A change for every sync from now on that switches the store to a new version.
    public func changes() -> AsyncStream<ContentChange> { listeners.changeStream() }

    // MARK: Reading

    /// What reads answer from now: the version, where it comes from, when it was published.
    public var current: ContentSnapshot? {
        view().map(ContentSnapshot.init)
    }

    /// Whether reads have anything to answer from.
    public var hasContent: Bool { view() != nil }

    /// The logical paths of the current version, sorted (`sonnets/018.plist`, …).
    public func paths() throws(FolioError) -> [String] {
        try requireView().manifest.entries.map(\.path)
    }

    /// The entries of the current version under `prefix`, sorted by path.
    ///
    /// The prefix matches whole path segments: `articles` and `articles/` both list
    /// `articles/intro.plist` (but not `articles-old/…`); a full path lists just that entry, and
    /// the empty prefix lists everything.
    public func entries(prefix: String = "") throws(FolioError) -> [ContentEntry] {
        try requireView().manifest.entries.filter { ContentEntry.path($0.path, isUnder: prefix) }.map(ContentEntry.init)
    }

    /// The entry at a logical path; throws `entryNotFound` when the current version has none.
    public func entry(at path: String) throws(FolioError) -> ContentEntry {
        ContentEntry(try requireView().entry(path))
    }

    /// The bytes of a logical path of any kind (an asset's file, a structured entry's binary
    /// plist), verified against the manifest.
    public func data(at path: String) throws(FolioError) -> Data {
        Data(try requireView().bytes(path))
    }

    /// The property list at a logical path; throws `invalidContent` for an asset.
    public func plist(at path: String) throws(FolioError) -> PlistValue {
        let view = try requireView()
        _ = try view.plistEntry(path)
        return try view.plist(path)
    }

    /// The property list at a logical path (data, a document, a catalog, an index), decoded
    /// into `type`; throws `invalidContent` for an asset or a value that does not fit `type`.
    public func decode<T: Decodable>(_ type: T.Type, at path: String, decoder: PlistDecoder = PlistDecoder()) throws(FolioError) -> T {
        let view = try requireView()
        _ = try view.plistEntry(path)
        let bytes = try view.bytes(path)
        do { return try decoder.decode(type, from: bytes) } catch {
            throw FolioError(
                .invalidContent, "\(path) does not decode as \(T.self): \(error)", path: path, underlying: error, hasContent: true)
        }
    }

    /// The strings of a catalog table for a locale (BCP 47 or POSIX; nil for the development
    /// language), falling back along the locale's parents to the development language.
    public func strings(table: String = "Localizable", locale: String? = nil) throws(FolioError) -> LocalizedStrings {
        let view = try requireView()
        var requested: LocaleTag?
        if let locale {
            guard let tag = LocaleTag(locale) else {
                throw FolioError(.invalidContent, "'\(locale)' is not a locale: give a BCP 47 tag or POSIX name like fr, pt-BR or es_MX")
            }
            requested = tag
        }
        let loaded: LocalizedTable?
        do { loaded = try LocalizedTable.load(view, table: table, requested: requested) } catch let error as FolioError {
            throw error
        } catch {
            throw FolioError(.invalidContent, "\(error)", underlying: error, hasContent: true)
        }
        guard let loaded else {
            throw FolioError(.entryNotFound, "version \(view.manifest.version) has no string catalogs", hasContent: true)
        }
        return LocalizedStrings(loaded)
    }

    /// The app's version, from its context: content for newer apps is not taken or read.
    private var appVersion: AppVersion? { http.context?.appVersion.flatMap(AppVersion.init) }

    private func view() -> ContentView? {
        let stamp = FileStamp.read(cache.statePath)
        return resolved.withLock { r in
            if let view = r.view, r.stamp == stamp { return view }
            var view = ContentView.local(cache: cache, seed: seed)
            view?.appVersion = appVersion
            r = (stamp, view)
            return r.view
        }
    }

    private func requireView() throws(FolioError) -> ContentView {
        guard let view = view() else {
            throw FolioError(
                .noContent, "no content: the cache at \(cacheDirectory) holds no verified version and there is no seed; sync first",
                path: cacheDirectory)
        }
        return view
    }
}

/// How a sync went.
public struct SyncOutcome: Sendable, Hashable {
    /// What the sync did.
    public enum Result: String, Sendable, Hashable {
        /// A new version was fetched and made current.
        case updated
        /// The edge has the version the cache holds.
        case notModified
        /// The cache hints say the manifest is still fresh: no request made.
        case fresh
        /// Missing or damaged objects of the current version were fetched again.
        case repaired
        /// The edge could not be reached; the cache is unchanged.
        case offline
    }

    /// What the sync did.
    public var result: Result
    /// The version held before.
    public var versionBefore: Int?
    /// The version held after.
    public var versionAfter: Int?
    /// Objects fetched whole.
    public var objectsFetched: Int
    /// Objects rebuilt from deltas of objects the cache held (verified like fetched ones).
    public var objectsPatched: Int
    /// For an update, the bytes deltas saved against fetching the manifest and objects whole;
    /// nil when no delta was used.
    public var bytesSaved: Int?
    /// Bytes received, response heads included.
    public var bytesReceived: Int
    /// HTTP requests made.
    public var requests: Int
    /// One line for people.
    public var message: String
    /// The staged or targeted release this install took (its id), nil for the channel's defaults.
    public var release: Int?
    /// The publisher marks the version (or release) taken as critical: apply it at once.
    public var isCritical: Bool

    init(_ r: SyncReport) {
        release = r.release
        isCritical = r.critical
        result = Result(rawValue: r.result.rawValue) ?? .notModified
        versionBefore = r.versionBefore
        versionAfter = r.versionAfter
        objectsFetched = r.objectsFetched
        objectsPatched = r.objectsPatched
        bytesSaved = r.bytesSaved
        bytesReceived = r.bytes
        requests = r.requests
        message = r.message
    }
}

/// The version reads answer from.
public struct ContentSnapshot: Sendable, Hashable {
    /// The published version.
    public var version: Int
    /// Where it is read from: the cache or the seed.
    public var origin: ContentOrigin
    /// When it was published.
    public var publishedAt: Date
    /// When the edge last confirmed it (nil for the seed).
    public var validatedAt: Date?
    /// The publish history it belongs to.
    public var history: String?
    /// The publisher's message for users that came with this version (`folio-build --notice`).
    public var notice: String?
    /// The oldest app version this version is for (`folio-build --minimum-app-version`).
    public var minimumAppVersion: String?
    /// Until when the publisher marks this version as a maintenance window, if it does.
    public var maintenanceUntil: Date?
    /// The publisher marks this version (or the release read) as critical.
    public var isCritical: Bool

    init(_ view: ContentView) {
        isCritical = view.manifest.critical
        notice = view.manifest.notice
        minimumAppVersion = view.manifest.minimumAppVersion
        maintenanceUntil = view.manifest.maintenanceUntil
        version = view.manifest.version
        origin = view.origin
        publishedAt = view.manifest.createdAt
        validatedAt = view.validatedAt
        history = view.manifest.history
    }
}

/// A switch to a new version, and which logical paths it changed.
public struct ContentChange: Sendable, Hashable {
    /// The version before (nil on the first sync).
    public var previousVersion: Int?
    /// The version now current.
    public var version: Int
    /// Paths new in this version.
    public var added: [String]
    /// Paths whose content changed.
    public var modified: [String]
    /// Paths no longer published.
    public var removed: [String]

    /// Every path that differs, sorted.
    public var changedPaths: [String] { (added + modified + removed).sorted() }

    init(from old: Manifest?, to new: Manifest) {
        previousVersion = old?.version
        version = new.version
        let before = Dictionary(uniqueKeysWithValues: (old?.entries ?? []).map { ($0.path, $0.sha256) })
        var added: [String] = []
        var modified: [String] = []
        for e in new.entries {
            switch before[e.path] {
            case nil: added.append(e.path)
            case let sha? where sha != e.sha256: modified.append(e.path)
            default: break
            }
        }
        let now = Set(new.entries.map(\.path))
        self.added = added
        self.modified = modified
        self.removed = before.keys.filter { !now.contains($0) }.sorted()
    }
}

/// One catalog table resolved for a locale.
public struct LocalizedStrings: Sendable {
    private let table: LocalizedTable

    init(_ table: LocalizedTable) { self.table = table }

    /// The locale that answers (the best match among those that publish the table).
    public var locale: String { table.locale }
    /// Every locale that publishes the table.
    public var availableLocales: [String] { table.available }

    /// The string for `key` with `arguments` filled in; the first integer argument picks the
    /// plural form. Nil when no catalog of the chain has the key.
    public func string(_ key: String, _ arguments: FormatArgument...) -> String? {
        table.lookup.string(for: key, arguments: arguments)?.text
    }

    /// The same, with the arguments as an array.
    public func string(_ key: String, arguments: [FormatArgument]) -> String? {
        table.lookup.string(for: key, arguments: arguments)?.text
    }
}

/// The continuations of the store's streams.
private final class Listeners: Sendable {
    private let progressListeners = Subscribers<SyncProgress>(buffer: 64)
    private let changeListeners = Subscribers<ContentChange>(buffer: 16)
    private let willChangeListeners = Subscribers<ContentChange>(buffer: 16)
    private let activityListeners = Subscribers<Bool>(buffer: 16)

    func progressStream() -> AsyncStream<SyncProgress> { progressListeners.stream() }
    func changeStream() -> AsyncStream<ContentChange> { changeListeners.stream() }
    func willChangeStream() -> AsyncStream<ContentChange> { willChangeListeners.stream() }
    func activityStream() -> AsyncStream<Bool> { activityListeners.stream() }
    func progress(_ p: SyncProgress) { progressListeners.yield(p) }
    func change(_ c: ContentChange) { changeListeners.yield(c) }
    func willChange(_ c: ContentChange) { willChangeListeners.yield(c) }
    func activity(_ on: Bool) { activityListeners.yield(on) }
}

/// Streams of one element type, each keeping the newest `buffer` elements not yet read.
private final class Subscribers<Element: Sendable>: Sendable {
    private let buffer: Int
    private let state = Locked<(continuations: [UInt64: AsyncStream<Element>.Continuation], next: UInt64)>(([:], 0))

    init(buffer: Int) { self.buffer = buffer }

    func stream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        let id = state.withLock { s in
            s.next += 1
            s.continuations[s.next] = continuation
            return s.next
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }

    func yield(_ element: Element) {
        for c in state.withLock({ Array($0.continuations.values) }) { c.yield(element) }
    }

    deinit {
        state.withLock { s in for c in s.continuations.values { c.finish() } }
    }
}
