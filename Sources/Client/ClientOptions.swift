import ArgumentParser
import FolioKit
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

    /// `--app-version`, else `FOLIO_APP_VERSION`, parsed (validated by `validate`).
    var appVersionValue: AppVersion? { Self.appVersion(appVersion) }

    static func appVersion(_ option: String?) -> AppVersion? {
        (option ?? variable("FOLIO_APP_VERSION")).flatMap(AppVersion.init)
    }

    /// The one baked-in URL: the edge's base; everything else is found through its manifest.
    var edgeURL: String { Self.edgeURL(edge) }

    var cachePath: String { Self.cachePath(cacheDir) }
    /// The cache, reading and writing this edge's environment.
    var cache: ContentCache { ContentCache(dir: cachePath, edge: edgeURL) }

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
        if let text = appVersion ?? Self.variable("FOLIO_APP_VERSION"), AppVersion(text) == nil {
            throw ValidationError("--app-version (or FOLIO_APP_VERSION): \(AppVersion.problem(text))")
        }
        if let path = FolioHTTP.caFile {
            do { _ = try FolioHTTP.extraCertificateAuthorities(path) } catch let error as FolioError { throw ValidationError(error.message) }
        }
    }

    /// The trusted roots: `--trust`, else `FOLIO_TRUST`; nil when none.
    func trustedRoots() throws -> Trust? { try Self.trustedRoots(trust) }

    static func trustedRoots(_ option: [String]) throws -> Trust? {
        let files = option.isEmpty ? (variable("FOLIO_TRUST")?.split(separator: ":").map(String.init) ?? []) : option
        guard !files.isEmpty else { return nil }
        do { return try Trust(files: files) } catch {
            throw CLIError("\(option.isEmpty ? "FOLIO_TRUST" : "--trust"): \(error)", exitCode: 2)
        }
    }
}
