import FolioHTTPCore

/// The origin's answer to one request, before it is written: as HTTP/1.1 bytes by
/// `EdgeHandler`, as HTTP/2 frames by `EdgeHTTP2Handler`.
enum EdgeAnswer {
    /// A 200 with the representation's bytes.
    case full(Representation)
    /// A 304 with the representation's validators.
    case notModified(Representation)
    /// A 206 of one range of the representation's bytes.
    case partial(Representation, ClosedRange<Int>)
    /// A small generated response (errors, `/healthz`, `/metrics`).
    case simple(SimpleAnswer)

    /// The status, for the access log and metrics.
    var status: Int {
        switch self {
        case .full: 200
        case .notModified: 304
        case .partial: 206
        case .simple(let s): s.status
        }
    }
}

/// A small generated response, `Cache-Control: no-store`.
struct SimpleAnswer {
    var status: Int
    var reason: String
    var body: String
    var contentType = "text/plain; charset=utf-8"
    /// More header fields (HTTP/1.1 names; HTTP/2 writes them in lower case).
    var extra: [(String, String)] = []
    /// HEAD: the head only.
    var omitBody = false
}

/// Header lines ("Name: value\r\n"…) as (lower-case name, value) pairs: the listener's own
/// lines (`Strict-Transport-Security`), for HTTP/2.
enum HeaderLines {
    static func fields(_ lines: String) -> [(String, String)] {
        lines.split(separator: "\r\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            return (line[..<colon].lowercased(), String(value))
        }
    }
}

/// Routes one request of a published site to its answer: the route table, catalogs negotiated
/// by `Accept-Language`, `Accept-Encoding`, preconditions in RFC 9110 §13.2.2 order and ranges.
/// One per connection (it keeps the connection's reference to the version being served); the
/// same for HTTP/1.1 and HTTP/2, and callable without a channel.
struct EdgeResponder {
    let store: SiteStore
    let role: ListenerRole
    let metrics: EdgeMetrics
    /// The version being served, and the store's generation it was read at: renewed when the
    /// store was replaced since.
    private var site: Site
    private var siteGeneration: Int

    init(store: SiteStore, role: ListenerRole, metrics: EdgeMetrics) {
        self.store = store
        self.role = role
        self.metrics = metrics
        site = store.site
        siteGeneration = store.generation
    }

    /// The answer, and whether the connection must end after it (a method other than GET and
    /// HEAD, whose body is not read).
    mutating func answer(_ request: ParsedRequest) -> (answer: EdgeAnswer, close: Bool) {
        let isGet = request.method == .get
        guard isGet || request.method == .head else {
            let s = SimpleAnswer(status: 405, reason: "Method Not Allowed", body: "only GET and HEAD are allowed\n", extra: [("Allow", "GET, HEAD")])
            return (.simple(s), true)
        }
        let generation = store.generation
        if generation != siteGeneration {
            siteGeneration = generation
            site = store.site
        }
        let answer: EdgeAnswer
        switch lookup(request) {
        case .found(let resource): answer = self.answer(request, resource, isGet: isGet)
        case .answered(let simple): answer = .simple(simple)
        }
        if answer.status < 400, role != .adminOnly { countManifestFetch(request) }
        return (answer, false)
    }

    /// Counts an answered fetch of a channel's manifest or head, by the path routed (the
    /// target's bytes as they are, decoded only when they are not a plain path).
    private func countManifestFetch(_ request: ParsedRequest) {
        if request.targetIsPlainPath { return metrics.manifestFetches.record(target: request.target.bytes, plainPath: true) }
        guard var path = EdgeHandler.path(of: request.target.string) else { return }
        path.withUTF8 { metrics.manifestFetches.record(target: UnsafeRawBufferPointer($0), plainPath: true) }
    }

    private enum Lookup {
        case found(Resource)
        case answered(SimpleAnswer)
    }

    /// The resource at the request's path, or the answer for a path that has none.
    private func lookup(_ request: ParsedRequest) -> Lookup {
        let omit = request.method != .get
        if role != .adminOnly, request.targetIsPlainPath, let hit = site.routes[request.target.bytes] { return .found(hit) }
        guard let path = EdgeHandler.path(of: request.target.string) else {
            return .answered(SimpleAnswer(status: 400, reason: "Bad Request", body: "malformed request target\n"))
        }
        // The admin listener serves no content.
        if role != .adminOnly, let hit = site.routes[path] ?? site.catalogs.resource(path, acceptLanguage: request.acceptLanguage) {
            return .found(hit)
        }
        switch path {
        case "/healthz" where site.isAwaitingDeploy:
            return .answered(AwaitingDeploy.answer(health: true, omitBody: omit))
        case "/healthz":
            return .answered(SimpleAnswer(status: 200, reason: "OK", body: "ok version \(site.manifest.version)\n", omitBody: omit))
        case "/metrics" where role != .publicOnly:
            let body = String(decoding: metrics.render(), as: UTF8.self)
            return .answered(SimpleAnswer(status: 200, reason: "OK", body: body, contentType: "text/plain; version=0.0.4", omitBody: omit))
        case _ where site.isAwaitingDeploy && role != .adminOnly:
            return .answered(AwaitingDeploy.answer(health: false, omitBody: omit))
        default:
            return .answered(SimpleAnswer(status: 404, reason: "Not Found", body: "no such resource: \(path)\n", omitBody: omit))
        }
    }

    /// Negotiation, preconditions and range of one resource.
    private func answer(_ request: ParsedRequest, _ resource: Resource, isGet: Bool) -> EdgeAnswer {
        guard let coding = AcceptEncoding.choose(request.acceptEncoding, hasGzip: resource.gzip != nil, hasBrotli: resource.brotli != nil) else {
            return .simple(
                SimpleAnswer(
                    status: 406, reason: "Not Acceptable", body: "no acceptable content coding (identity, gzip or br)\n",
                    extra: [("Vary", resource.vary)], omitBody: !isGet))
        }
        let rep = resource.representation(coding)
        let conditions = request.conditions
        switch Preconditions.evaluate(conditions, isGetOrHead: true, etag: rep.etag, lastModified: resource.lastModified) {
        case .failed:
            return .simple(
                SimpleAnswer(status: 412, reason: "Precondition Failed", body: "precondition failed\n", extra: [("ETag", rep.etag)], omitBody: !isGet))
        case .notModified:
            return .notModified(rep)
        case .proceed:
            break
        }
        guard isGet, let r = conditions.range, Preconditions.rangeApplies(conditions, etag: rep.etag, lastModified: resource.lastModified) else {
            return .full(rep)
        }
        switch ByteRange.parse(r, length: rep.length) {
        case .whole: return .full(rep)
        case .partial(let range): return .partial(rep, range)
        case .unsatisfiable:
            return .simple(
                SimpleAnswer(
                    status: 416, reason: "Range Not Satisfiable", body: "range not satisfiable\n",
                    extra: [("Content-Range", "bytes */\(rep.length)"), ("ETag", rep.etag), ("Vary", resource.vary)]))
        }
    }
}
