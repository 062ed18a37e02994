import FolioCore
import Foundation

/// Where content was read from, for `--verbose` and `status`.
enum Origin: String, Sendable {
    case network, cache, seed
}

/// One readable version of the content: the cache's or the bundled seed's, whichever is newer.
struct ContentView {
    let manifest: Manifest
    let origin: Origin
    let cache: ContentCache?
    let validatedAt: Date?
    /// Whether this command tried to refresh a stale cache from the edge and could not.
    var refreshFailed = false

    /// The bytes of a logical path, verified; throws when missing or corrupt.
    func bytes(_ path: String) throws -> [UInt8] {
        guard let entry = manifest.entry(path) else {
            throw CLIError("no entry \(path) in version \(manifest.version) (\(origin.rawValue)); `folio list sonnets` shows what exists")
        }
        switch origin {
        case .seed:
            guard let bytes = Seed.archive?.objects[entry.sha256] else { throw CLIError("the bundled seed lacks \(path)") }
            guard bytes.count == entry.size, ContentHash.sha256Hex(bytes) == entry.sha256 else {
                throw CLIError("the bundled seed's object for \(path) does not match its manifest")
            }
            return bytes
        case .cache, .network:
            let found: [UInt8]?
            do { found = try cache?.object(entry) } catch { throw CLIError("\(error)") }
            guard let bytes = found else { throw CLIError("cached object for \(path) is missing; run `folio sync`") }
            return bytes
        }
    }

    /// Decodes a logical path's plist.
    func plist(_ path: String) throws -> PlistValue {
        let bytes = try self.bytes(path)
        do { return try BinaryPlist.decode(bytes) } catch { throw CLIError("\(path): \(error)") }
    }

    /// "version 3 from the cache, published 2 h ago, validated 5 min ago".
    var describe: String {
        var s = "version \(manifest.version) from the \(origin.rawValue), published \(Age.text(since: manifest.createdAt)) ago"
        if let validatedAt { s += ", validated \(Age.text(since: validatedAt)) ago" }
        return s
    }

    /// Resolves what to read: the cache (synced first when stale, if `refresh`), or the seed
    /// when there is no cache or the seed is newer.
    static func resolve(_ options: ClientOptions, refresh: Bool) async -> ContentView? {
        let cache = ContentCache(dir: options.cachePath)
        var origin = Origin.cache
        var refreshFailed = false
        // Refresh when the cache is stale, or when there is neither a cache nor a seed.
        let held = cache.current()
        let stale = held.map { Date().timeIntervalSince($0.state.validatedAt) >= Double($0.manifest.cacheHint("manifest").maxAge) }
        if refresh, stale ?? (Seed.manifest == nil) {
            var settings = SyncSettings(edge: options.edgeURL)
            settings.attempts = 1
            settings.timeout = .seconds(2)
            settings.waitForLock = false
            let report = try? await Syncer(cache: cache, settings: settings).run()
            if report?.result == .updated { origin = .network }
            refreshFailed = report == nil || report?.result == .offline
        }
        let current = cache.current()
        if let seed = Seed.manifest, current.map({ seed.version > $0.state.version }) ?? true {
            return ContentView(manifest: seed, origin: .seed, cache: nil, validatedAt: nil)
        }
        guard let current else { return nil }
        return ContentView(
            manifest: current.manifest, origin: origin, cache: cache, validatedAt: current.state.validatedAt,
            refreshFailed: refreshFailed)
    }
}

/// Human ages: "42 s", "5 min", "3 h", "2 d".
enum Age {
    static func text(since date: Date, now: Date = Date()) -> String {
        let s = max(0, Int(now.timeIntervalSince(date)))
        if s < 120 { return "\(s) s" }
        if s < 7200 { return "\(s / 60) min" }
        if s < 172_800 { return "\(s / 3600) h" }
        return "\(s / 86400) d"
    }
}
