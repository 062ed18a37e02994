import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// Where content was read from.
public enum ContentOrigin: String, Sendable {
    /// Fetched from the edge by this call.
    case network
    /// The verified disk cache.
    case cache
    /// The seed bundled with the app.
    case seed
}

/// One readable version of the content: the cache's or the seed's (see ``SeedChoice``).
package struct ContentView: Sendable {
    package let manifest: Manifest
    package var origin: ContentOrigin
    package let cache: ContentCache?
    package let seed: FolioSeed?
    package let validatedAt: Date?
    /// Whether this command tried to refresh a stale cache from the edge and could not.
    package var refreshFailed = false
    /// Why the refresh was refused, when the edge's content failed a trust check.
    package var refusal: FolioError?
    /// The reading app's version: entries for newer apps are refused with `.updateRequired`.
    package var appVersion: AppVersion?

    package init(
        manifest: Manifest, origin: ContentOrigin, cache: ContentCache?, seed: FolioSeed?, validatedAt: Date?,
        refreshFailed: Bool = false
    ) {
        self.manifest = manifest
        self.origin = origin
        self.cache = cache
        self.seed = seed
        self.validatedAt = validatedAt
        self.refreshFailed = refreshFailed
    }

    /// The bytes of a logical path, verified; throws when missing or corrupt.
    package func bytes(_ path: String) throws(FolioError) -> [UInt8] {
        guard let entry = manifest.entry(path) else {
            throw FolioError(
                .entryNotFound, "no entry \(path) in version \(manifest.version) (\(origin.rawValue)); the manifest lists what exists",
                path: path, hasContent: true)
        }
        if let app = appVersion, let minimum = manifest.minimumAppVersion(for: entry), app < minimum {
            var error = FolioError(
                .updateRequired, "\(path) needs app version \(minimum) or later (this is \(app)); update the app to read it",
                path: path, hasContent: true)
            error.requiredAppVersion = minimum.description
            throw error
        }
        switch origin {
        case .seed:
            guard let bytes = seed?.archive.objects[entry.sha256] else {
                throw FolioError(.corruptObject, "the bundled seed lacks \(path)", path: path, hasContent: true)
            }
            guard entry.matches(bytes) else {
                throw FolioError(.corruptObject, "the bundled seed's object for \(path) does not match its manifest")
            }
            return bytes
        case .cache, .network:
            let found: [UInt8]?
            do { found = try cache?.object(entry) } catch {
                throw FolioError(.corruptObject, "\(error)", path: path, underlying: error, hasContent: true)
            }
            guard let bytes = found else {
                throw FolioError(.corruptObject, "cached object for \(path) is missing; a sync fetches it again", path: path, hasContent: true)
            }
            return bytes
        }
    }

    /// Decodes a logical path's plist.
    package func plist(_ path: String) throws(FolioError) -> PlistValue {
        let bytes = try self.bytes(path)
        do { return try BinaryPlist.decode(bytes) } catch {
            throw FolioError(.invalidContent, "\(path): \(error)", path: path, underlying: error, hasContent: true)
        }
    }

    /// "version 3 from the cache, published 2 h ago, validated 5 min ago".
    package var describe: String {
        var s = "version \(manifest.version) from the \(origin.rawValue), published \(Age.text(since: manifest.createdAt)) ago"
        if let validatedAt { s += ", validated \(Age.text(since: validatedAt)) ago" }
        return s
    }

    /// Resolves what to read: the cache (synced first when stale, if `refresh`), or the seed
    /// when the cache holds nothing verified or the seed is newer in the same history.
    /// A refresh is `base`'s sync, tried once, briefly, and not waiting for another sync's lock.
    package static func resolve(cache: ContentCache, seed: FolioSeed?, settings base: SyncSettings, refresh: Bool) async -> ContentView? {
        var origin = ContentOrigin.cache
        var refreshFailed = false
        var refusal: FolioError?
        // Refresh when the cache is stale, or when there is neither a cache nor a seed.
        let held = cache.current()
        let stale = held.map { Date().timeIntervalSince($0.state.validatedAt) >= Double($0.state.lifetime(of: $0.manifest)) }
        if refresh, stale ?? (seed == nil) {
            var settings = base
            settings.attempts = 1
            settings.timeout = .seconds(2)
            settings.waitForLock = false
            var report: SyncReport?
            do { report = try await Syncer(cache: cache, settings: settings).run() } catch let error as FolioError {
                if error.isTrustFailure || error.code == .downgrade || error.code == .updateRequired { refusal = error }
            } catch {}
            if report?.result == .updated { origin = .network }
            refreshFailed = (report == nil && refusal == nil) || report?.result == .offline
        }
        guard var view = local(cache: cache, seed: seed) else { return nil }
        view.refusal = refusal
        if view.origin == .cache {
            view.origin = origin
            view.refreshFailed = refreshFailed
        }
        return view
    }

    /// What is on disk, without the network: the cache's version or the seed's.
    package static func local(cache: ContentCache, seed: FolioSeed?) -> ContentView? {
        let current = cache.current()
        if let seed, SeedChoice.prefersSeed(seed.manifest, over: current?.manifest) {
            return ContentView(manifest: seed.manifest, origin: .seed, cache: nil, seed: seed, validatedAt: nil)
        }
        guard let current else { return nil }
        return ContentView(manifest: current.manifest, origin: .cache, cache: cache, seed: seed, validatedAt: current.state.validatedAt)
    }
}

/// Human ages: "42 s", "5 min", "3 h", "2 d".
package enum Age {
    package static func text(since date: Date, now: Date = Date()) -> String {
        let s = max(0, Int(now.timeIntervalSince(date)))
        if s < 120 { return "\(s) s" }
        if s < 7200 { return "\(s / 60) min" }
        if s < 172_800 { return "\(s / 3600) h" }
        return "\(s / 86400) d"
    }
}
