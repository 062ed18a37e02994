import ArgumentParser
import Foundation

/// Options every subcommand shares: where the edge is and where the cache lives.
struct ClientOptions: ParsableArguments {
    @Option(help: "The edge's base URL (default: FOLIO_EDGE, else http://127.0.0.1:8080).")
    var edge: String?

    @Option(help: "The cache directory (default: FOLIO_CACHE_DIR, else $XDG_CACHE_HOME/folio, else ~/.cache/folio).")
    var cacheDir: String?

    /// The one baked-in URL: the edge's base; everything else is found through its manifest.
    var edgeURL: String {
        let env = ProcessInfo.processInfo.environment
        var url = edge ?? env["FOLIO_EDGE"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8080"
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    var cachePath: String {
        let env = ProcessInfo.processInfo.environment
        if let dir = cacheDir { return dir }
        if let dir = env["FOLIO_CACHE_DIR"], !dir.isEmpty { return dir }
        if let xdg = env["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/folio" }
        return (env["HOME"] ?? NSHomeDirectory()) + "/.cache/folio"
    }

    func validate() throws {
        let url = edgeURL
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), URL(string: url)?.host != nil else {
            throw ValidationError("--edge \(url) is not an http(s) URL, e.g. http://127.0.0.1:8080")
        }
    }
}
