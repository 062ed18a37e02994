import ArgumentParser
import FolioKitCore
import FolioKitNIO
import FolioPublished
import Foundation

/// Options every subcommand shares: where the edge is and where the cache lives.
struct ClientOptions: ParsableArguments {
    @Option(help: "The edge's base URL (default: FOLIO_EDGE, else http://127.0.0.1:8080).")
    var edge: String?

    @Option(help: "The cache directory (default: FOLIO_CACHE_DIR, else $XDG_CACHE_HOME/folio, else ~/.cache/folio).")
    var cacheDir: String?

    @Option(help: "A root public key (.pub) to trust; then only manifests signed under its key list are accepted (default: FOLIO_TRUST, paths separated by ':').")
    var trust: [String] = []

    @Option(help: "The app version to act as, like 3.2: content for newer apps is not taken (default: FOLIO_APP_VERSION).")
    var appVersion: String?

    @Option(help: "Seconds the edge may stay silent before a request fails and the command counts as offline (default: FOLIO_TIMEOUT, else 15).")
    var timeout: String?

    @OptionGroup(title: "Channels and targeted releases") var release: ReleaseProfileOptions

    /// `--app-version`, else `FOLIO_APP_VERSION`, parsed (validated by `validate`).
    var appVersionValue: AppVersion? { Self.appVersion(appVersion) }

    static func appVersion(_ option: String?) -> AppVersion? {
        (option ?? variable("FOLIO_APP_VERSION")).flatMap(AppVersion.init)
    }

    /// The one baked-in URL: the edge's base; everything else is found through its manifest.
    var edgeURL: String { Self.edgeURL(edge) }

    var cachePath: String { Self.cachePath(cacheDir) }
    /// The cache path, refused when it is a file (or, `creating`, when it cannot be made).
    func checkedCachePath(creating: Bool = false) throws -> String {
        try CacheDirCheck.check(cachePath, option: cacheDir, creating: creating)
        return cachePath
    }
    /// The cache, reading and writing this edge's environment.
    var cache: ContentCache { ContentCache(dir: cachePath, edge: edgeURL, channel: release.profile.channel) }

    /// What every sync of this command starts from: the edge, the trusted roots (and the
    /// bundled seed as a rollback floor), the app version, channel, context and install id.
    func syncSettings() throws -> SyncSettings {
        try Self.syncSettings(
            edge: edgeURL, trust: trustedRoots(), appVersion: appVersionValue, profile: release.profile, timeout: TimeoutSetting.duration(timeout))
    }

    static func syncSettings(edge: String, trust: Trust?, appVersion: AppVersion?, profile: ReleaseProfile, timeout: Duration) -> SyncSettings {
        var http = FolioHTTPConfiguration()
        http.timeout = timeout
        var settings = SyncSettings(edge: edge, transport: NIOTransports.forEdge(edge, configuration: http))
        settings.http = http
        settings.trust = trust
        if trust != nil { settings.seed = BundledSeed.seed?.manifest }
        settings.appVersion = appVersion
        settings.channel = profile.channel
        settings.context = profile.context(appVersion: appVersion)
        settings.installID = profile.installID
        settings.logger = CLILog.logger
        return settings
    }

    /// `--edge`, else `FOLIO_EDGE`, else the default, without trailing slashes.
    static func edgeURL(_ option: String?) -> String {
        var url = option ?? variable("FOLIO_EDGE") ?? "http://127.0.0.1:8080"
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// `--cache-dir`, else `FOLIO_CACHE_DIR`, else `$XDG_CACHE_HOME/folio`, else `~/.cache/folio`.
    static func cachePath(_ option: String?) -> String {
        if let dir = option { return dir }
        if let dir = variable("FOLIO_CACHE_DIR") { return dir }
        if let xdg = variable("XDG_CACHE_HOME") { return xdg + "/folio" }
        return (variable("HOME") ?? NSHomeDirectory()) + "/.cache/folio"
    }

    /// A non-empty environment variable (getenv: no copy of the whole environment, which
    /// ProcessInfo builds on first use).
    static func variable(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// Why `url` is not a usable edge URL, or nil when it is.
    static func problem(withEdge url: String) -> String? {
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), URL(string: url)?.host != nil else {
            return "--edge \(url) is not an http(s) URL, e.g. http://127.0.0.1:8080"
        }
        return nil
    }

    func validate() throws {
        if let problem = Self.problem(withEdge: edgeURL) { throw ValidationError(problem) }
        if let problem = TimeoutSetting.problem(timeout) { throw ValidationError(problem) }
        if let text = appVersion ?? Self.variable("FOLIO_APP_VERSION"), AppVersion(text) == nil {
            throw ValidationError("--app-version (or FOLIO_APP_VERSION): \(AppVersion.problem(text))")
        }
        if let path = FolioHTTP.caFile {
            do { _ = try FolioHTTP.extraCertificateAuthorities(path) } catch let error as FolioError { throw ValidationError(error.message) }
        }
    }

    /// Whether `edge` and `timeout` as given, or the environment, hold what `validate` refuses:
    /// a fast path past the parser (`sync`, `diff`) then steps aside, and the parser says what
    /// is wrong.
    static func refusedByValidation(edge: String?, timeout: String?) -> Bool {
        if problem(withEdge: edgeURL(edge)) != nil { return true }
        if TimeoutSetting.problem(timeout) != nil { return true }
        if let text = variable("FOLIO_APP_VERSION"), AppVersion(text) == nil { return true }
        return ReleaseProfile.fromEnvironment.problem != nil
    }

    /// The trusted roots: `--trust`, else `FOLIO_TRUST`; nil when none.
    func trustedRoots() throws -> Trust? { try Self.trustedRoots(trust) }

    static func trustedRoots(_ option: [String]) throws -> Trust? {
        let files = option.isEmpty ? (variable("FOLIO_TRUST")?.split(separator: ":").map(String.init) ?? []) : option
        guard !files.isEmpty else { return nil }
        do { return try Trust(files: files) } catch {
            throw CLIError("\(option.isEmpty ? "FOLIO_TRUST" : "--trust"): \(error)")
        }
    }
}

/// The channel a client follows and what it says about itself to targeted releases, from
/// the options or else the environment.
struct ReleaseProfile: Sendable {
    var channel = Channel.production
    var platform: String?
    var osVersion: String?
    var locale: String?
    var country: String?
    var installID: String?

    /// The release context, with the app version given.
    func context(appVersion: AppVersion?) -> ReleaseContext {
        ReleaseContext(appVersion: appVersion?.description, platform: platform, osVersion: osVersion, locale: locale, country: country)
    }

    /// Why the profile cannot be used, or nil.
    var problem: String? {
        if !Channel.isValidName(channel) { return "--channel (or FOLIO_CHANNEL): \(Channel.problem(channel))" }
        if let v = osVersion, AppVersion(v) == nil { return "--os-version (or FOLIO_OS_VERSION): '\(v)' is not a version like 18 or 17.4.1" }
        if let id = installID, !(16...128).contains(id.utf8.count) || id.contains(where: { $0.isWhitespace }) {
            return "--install-id (or FOLIO_INSTALL_ID) takes 16 to 128 characters without spaces"
        }
        return nil
    }

    /// From the environment alone (the fast path of `folio sync`).
    static var fromEnvironment: ReleaseProfile { ReleaseProfileOptions.profile(nil, nil, nil, nil, nil, nil) }
}

/// `--channel`, the targeting context and `--install-id`.
struct ReleaseProfileOptions: ParsableArguments {
    @Option(help: "The release channel to follow, like beta (default: FOLIO_CHANNEL, else production).") var channel: String?
    @Option(help: "The platform to act as for targeted releases, like ios (default: FOLIO_PLATFORM).") var platform: String?
    @Option(help: "The OS version to act as, like 18.1 (default: FOLIO_OS_VERSION).") var osVersion: String?
    @Option(help: "The app's locale for targeted releases, like fr-CA (default: FOLIO_APP_LOCALE).") var appLocale: String?
    @Option(help: "The country to act as, like FR (default: FOLIO_COUNTRY).") var country: String?
    @Option(help: "The install id rollout buckets are drawn from (default: FOLIO_INSTALL_ID, else the cache's own random id).")
    var installID: String?

    var profile: ReleaseProfile { Self.profile(channel, platform, osVersion, appLocale, country, installID) }

    static func profile(_ channel: String?, _ platform: String?, _ os: String?, _ locale: String?, _ country: String?, _ id: String?) -> ReleaseProfile {
        let v = ClientOptions.variable
        return ReleaseProfile(
            channel: channel ?? v("FOLIO_CHANNEL") ?? Channel.production, platform: platform ?? v("FOLIO_PLATFORM"),
            osVersion: os ?? v("FOLIO_OS_VERSION"), locale: locale ?? v("FOLIO_APP_LOCALE"), country: country ?? v("FOLIO_COUNTRY"),
            installID: id ?? v("FOLIO_INSTALL_ID"))
    }

    func validate() throws {
        if let problem = profile.problem { throw ValidationError(problem) }
    }
}
