import FolioSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The cache tier's controls, as the seed design asks: an emergency purge that makes the edge
/// drop content, and a maintenance mode. Both need the bearer token read from
/// `--purge-token-file`; without one they are disabled.
///
/// - `PURGE /path` drops every variant of one URL; `Folio-Purge: soft` marks them stale instead.
/// - `POST /.folio/purge?url=/path`, `?prefix=/objects/` or `?all`, with `&soft` for a soft purge.
/// - `POST /.folio/maintenance?on` or `?off`; a `--maintenance-file` that exists also turns it on.
///
/// Under maintenance the edge answers from its cache only, stale responses included, and a
/// miss with 503 and `Retry-After`.
final class CacheAdmin: Sendable {
    /// The token, nil when none is configured (purge and the switch disabled); and the
    /// maintenance file. A reload (SIGHUP) replaces both.
    private let settings: Mutex<(token: BearerToken?, maintenanceFile: String?)>
    private let switchedOn = Atomic(false)
    /// The flag file's state and when it was last looked at (at most once a second).
    private let fileState = Mutex<(on: Bool, checked: Double)>((false, -1))

    init(token: String?, maintenanceFile: String?) {
        settings = Mutex((token.map(BearerToken.init), maintenanceFile))
    }

    /// Takes a new token and maintenance file (a reload); the file is looked at again now.
    func update(token: String?, maintenanceFile: String?) {
        settings.withLock { $0 = (token.map(BearerToken.init), maintenanceFile) }
        fileState.withLock { $0 = (false, -1) }
    }

    var isMaintenance: Bool {
        if switchedOn.load(ordering: .relaxed) { return true }
        guard let maintenanceFile = settings.withLock({ $0.maintenanceFile }) else { return false }
        let now = Date().timeIntervalSince1970
        return fileState.withLock { s in
            if now - s.checked >= 1 {
                s = (FileIO.exists(maintenanceFile), now)
            }
            return s.on
        }
    }

    /// Whether the request is for the admin interface.
    static func isAdmin(_ request: ProxyRequest) -> Bool {
        request.method == .RAW(value: "PURGE") || request.target.hasPrefix("/.folio/")
    }

    /// Whether the request is a purge (`PURGE`, or `POST /.folio/purge`).
    static func isPurge(_ request: ProxyRequest) -> Bool {
        request.method == .RAW(value: "PURGE")
            || (request.method == .POST && (request.target == "/.folio/purge" || request.target.hasPrefix("/.folio/purge?")))
    }

    /// Whether the request carries the configured token.
    func isAuthorized(_ request: ProxyRequest) -> Bool { authorize(request) == nil }

    /// Answers an admin request; `origins` (each one's name, whether it is up, and why not) go
    /// in `/.folio/status`.
    func handle(_ request: ProxyRequest, store: CacheStore, origins: [(name: String, up: Bool, why: String?)] = []) -> ProxyResponse {
        if let refused = authorize(request) { return refused }
        let (path, query) = Self.split(request.target)
        let soft = request.headers.first(name: "folio-purge")?.lowercased() == "soft" || query["soft"] != nil
        if request.method == .RAW(value: "PURGE") {
            return Self.json(.ok, ["purged": store.purge(request.target, soft: soft), "soft": soft])
        }
        switch (request.method, path) {
        case (.POST, "/.folio/purge"):
            let keys: [String]
            if let url = query["url"], url.hasPrefix("/") {
                keys = [url]
            } else if let prefix = query["prefix"], prefix.hasPrefix("/") {
                keys = store.keys(prefix: prefix)
            } else if query["all"] != nil {
                keys = store.keys(prefix: "")
            } else {
                return Self.text(.badRequest, "say what to purge: ?url=/path, ?prefix=/path/ or ?all (add &soft to mark stale instead)\n")
            }
            let purged = keys.reduce(0) { $0 + store.purge($1, soft: soft) }
            return Self.json(.ok, ["purged": purged, "soft": soft])
        case (.POST, "/.folio/maintenance"):
            if query["on"] != nil {
                switchedOn.store(true, ordering: .relaxed)
            } else if query["off"] != nil {
                switchedOn.store(false, ordering: .relaxed)
            } else {
                return Self.text(.badRequest, "say ?on or ?off\n")
            }
            return Self.json(.ok, ["maintenance": isMaintenance])
        case (.GET, "/.folio/status"):
            let usage = store.usage
            var status: [String: any Sendable] = ["entries": usage.entries, "bytes": usage.bytes, "maintenance": isMaintenance]
            if !origins.isEmpty { status["origins"] = Self.originsJSON(origins) }
            if let disk = store.diskUsage {
                status["diskEntries"] = disk.entries
                status["diskBytes"] = disk.bytes
                status["diskReads"] = store.diskReads.load(ordering: .relaxed)
                status["diskOpenFiles"] = store.openFileCount
            }
            return Self.json(.ok, status)
        default:
            return Self.text(.notFound, "unknown admin request \(request.method) \(path); see folio-edge --help\n")
        }
    }

    /// nil when the request carries the configured bearer token; else 403 (disabled, or a wrong
    /// token) or 401 (none). The comparison takes the same time whatever the token.
    private func authorize(_ request: ProxyRequest) -> ProxyResponse? {
        guard let token = settings.withLock({ $0.token }) else {
            return Self.text(.forbidden, "purge and maintenance are disabled: start folio-edge with --purge-token-file FILE\n")
        }
        switch token.check(authorization: request.headers.first(name: "authorization")) {
        case .accepted:
            return nil
        case .missing:
            var r = Self.text(.unauthorized, "send the purge token: Authorization: Bearer TOKEN\n")
            r.headers.add(name: "WWW-Authenticate", value: "Bearer realm=\"folio-edge\"")
            return r
        case .wrong:
            return Self.text(.forbidden, "wrong purge token\n")
        }
    }

    private static func split(_ target: String) -> (String, [String: String]) {
        guard let q = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for pair in target[target.index(after: q)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            query[name] = value
        }
        return (String(target[..<q]), query)
    }

    /// `[{"origin":"s3://b/p","up":false,"why":"403 AccessDenied: …"}, …]` (no `why` when up).
    static func originsJSON(_ origins: [(name: String, up: Bool, why: String?)]) -> JSONText {
        let objects: [[String: Any]] = origins.map { o in
            var object: [String: Any] = ["origin": o.name, "up": o.up]
            if let why = o.why { object["why"] = why }
            return object
        }
        let data = (try? JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("[]".utf8)
        return JSONText(description: String(decoding: data, as: UTF8.self))
    }

    /// JSON text that goes into `json`'s object as it is.
    struct JSONText: CustomStringConvertible, Sendable {
        var description: String
    }

    static func text(_ status: HTTPResponseStatus, _ text: String) -> ProxyResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        return ProxyResponse(status: status, headers: headers, body: ByteBuffer(string: text))
    }

    static func json(_ status: HTTPResponseStatus, _ fields: [String: any Sendable]) -> ProxyResponse {
        // Numbers, booleans and JSONText only: their descriptions are JSON.
        let body = fields.keys.sorted().map { "\"\($0)\":\(fields[$0]!)" }.joined(separator: ",")
        var r = text(status, "{\(body)}\n")
        r.headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        return r
    }
}
