import AsyncHTTPClient
import FolioPublished
import FolioSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Requests to the origins, through the pool: every origin-facing path of the cache (misses,
/// revalidations, background refreshes, a manifest's objects, notify, purges) goes here.
extension HTTPCache {
    /// Sends the request to the origins in the pool's order until one answers (hop-by-hop fields
    /// removed, redirects not followed, nothing decompressed), as nginx's `proxy_next_upstream
    /// error timeout invalid_header http_502 http_503 http_504`: a GET or HEAD whose origin
    /// fails (connection refused or reset, TLS, timeout, an answer that is not HTTP, an
    /// untrusted manifest) or answers 502, 503 or 504 goes to the next origin; another method
    /// only when the request was never sent (the connection could not be made). A failure marks
    /// the origin down; a 5xx answer does not (the origin is up and answering: for one URL, or
    /// for a while, which its health checks tell). An answer `accepting` refuses (an older
    /// manifest) also moves on. When every origin failed, the first 5xx answer, or else the
    /// last error, is the result. The answer carries the index of the origin that gave it.
    /// The request keeps the pool it started with to its end (a reload that replaces the pool
    /// meanwhile changes where the next request goes, not this one's failover).
    func forward(
        _ request: ProxyRequest, on loop: any EventLoop, preferring: OriginRef? = nil,
        accepting: (@Sendable (ProxyResponse) -> Bool)? = nil
    ) -> EventLoopFuture<ProxyResponse> {
        let pool = self.pool
        let preferred = preferring.flatMap { $0.pool === pool ? $0.index : nil }
        return attempt(request, pool, pool.candidates(preferring: preferred)[...], on: loop, accepting: accepting, refused: nil)
    }

    /// Tries `order`'s first origin, then the rest as `forward` says.
    private func attempt(
        _ request: ProxyRequest, _ pool: OriginPool, _ order: ArraySlice<Int>, on loop: any EventLoop,
        accepting: (@Sendable (ProxyResponse) -> Bool)?, refused: ProxyResponse?
    ) -> EventLoopFuture<ProxyResponse> {
        guard let index = order.first else {
            return refused.map { loop.makeSucceededFuture($0) } ?? loop.makeFailedFuture(HTTPClientError.connectTimeout)
        }
        let idempotent = request.method == .GET || request.method == .HEAD
        let rest = order.dropFirst()
        return forward(request, to: OriginRef(pool: pool, index: index), on: loop).flatMap { response in
            pool.answered(index)
            if idempotent, Self.nextUpstreamStatuses.contains(response.status.code) {
                guard !rest.isEmpty else { return loop.makeSucceededFuture(refused ?? response) }
                return self.attempt(request, pool, rest, on: loop, accepting: accepting, refused: refused ?? response)
            }
            if let accepting, !accepting(response), !rest.isEmpty {
                return self.attempt(request, pool, rest, on: loop, accepting: accepting, refused: refused ?? response)
            }
            return loop.makeSucceededFuture(response)
        }.flatMapError { error in
            pool.failed(index, why: Self.failureText(error), refused: error is S3OriginRefused)
            guard !rest.isEmpty, idempotent || Self.isNotSent(error) else {
                return refused.map { loop.makeSucceededFuture($0) } ?? loop.makeFailedFuture(error)
            }
            return self.attempt(request, pool, rest, on: loop, accepting: accepting, refused: refused)
        }
    }

    /// Answers that send a GET or HEAD on to the next origin (they do not mark it down).
    static let nextUpstreamStatuses: Set<UInt> = [502, 503, 504]

    /// Sends the request to one origin. A kept-alive origin connection can fail under a
    /// request: the origin closed it as the request went out, or an earlier response left
    /// bytes on it that this response's parse trips over. A GET or HEAD that fails so is sent
    /// once more (on another connection) before the origin counts as failed.
    func forward(_ request: ProxyRequest, to origin: OriginRef, on loop: any EventLoop) -> EventLoopFuture<ProxyResponse> {
        let first = forwardOnce(request, to: origin, on: loop)
        guard request.method == .GET || request.method == .HEAD else { return first }
        return first.flatMapError { error in
            guard Self.isConnectionFailure(error) else { return loop.makeFailedFuture(error) }
            return self.forwardOnce(request, to: origin, on: loop)
        }
    }

    /// Whether the request never left: the connection to the origin could not be made.
    static func isNotSent(_ error: any Error) -> Bool {
        switch error {
        case is NIOConnectionError: true
        case let e as IOError: e.errnoCode == ECONNREFUSED
        case let e as HTTPClientError: e == .connectTimeout
        case let e as ChannelError:
            if case .connectTimeout = e { true } else { false }
        default: false
        }
    }

    static func isConnectionFailure(_ error: any Error) -> Bool {
        if let e = error as? HTTPClientError, e == .remoteConnectionClosed { return true }
        return error is HTTPParserError
    }

    private func forwardOnce(_ request: ProxyRequest, to origin: OriginRef, on loop: any EventLoop) -> EventLoopFuture<ProxyResponse> {
        let target = origin.pool.origins[origin.index]
        let outgoing: HTTPClient.Request
        do {
            if let bucket = target.s3 {
                let read = request.method == .GET || request.method == .HEAD
                guard read, let signed = try bucket.request(request.method, target: request.target, headers: request.headers, date: Date()) else {
                    return loop.makeSucceededFuture(S3Origin.notSent(request))
                }
                outgoing = signed
            } else {
                outgoing = try Self.plainRequest(request, base: target.base)
            }
        } catch {
            return loop.makeFailedFuture(error)
        }
        origin.pool.sent(origin.index)
        return client.execute(request: outgoing, eventLoop: .delegate(on: loop), deadline: .now() + timeout).flatMapThrowing { r in
            if let refused = target.s3?.refusal(status: r.status.code, body: r.body) { throw refused }
            var response = ProxyResponse(status: r.status, headers: CacheFields.endToEnd(r.headers), body: r.body)
            response.origin = origin
            try self.checkTrust(response, request)
            try Self.checkObject(response, request)
            return response
        }
    }

    /// The request to an http or https origin: the client's, its end-to-end fields kept.
    private static func plainRequest(_ request: ProxyRequest, base: String) throws -> HTTPClient.Request {
        var headers = CacheFields.endToEnd(request.headers)
        headers.remove(name: "host")
        headers.remove(name: "content-length")
        // NIOHTTP1 writes its .MSEARCH case as "MSEARCH" (swift-nio 2.8x): send the real name.
        let method = request.method == .MSEARCH ? .RAW(value: "M-SEARCH") : request.method
        return try HTTPClient.Request(url: base + request.target, method: method, headers: headers, body: request.body.map { .byteBuffer($0) })
    }

    /// Why a request to an origin failed, in a few words, for its health (`/.folio/status`, the log).
    static func failureText(_ error: any Error) -> String {
        switch error {
        case let refused as S3OriginRefused: refused.reason
        case let untrusted as UntrustedOriginManifest: "its manifest does not verify: \(untrusted.description)"
        case let corrupt as CorruptOriginObject: corrupt.description
        case _ where isTimeout(error): "no answer in time"
        case _ where isNotSent(error): "cannot connect"
        default: "the request failed: \(error)"
        }
    }

    /// An authorized purge, sent to every origin (each may be a tier holding its own copy, and
    /// a backup that kept one would hand it back after a failover): each origin's status, or
    /// nil for one that could not be reached, in the order of `--origin`.
    func purgeOrigins(_ request: ProxyRequest, on loop: any EventLoop) -> EventLoopFuture<[UInt?]> {
        let pool = self.pool
        let answers = pool.origins.indices.map { index in
            forward(request, to: OriginRef(pool: pool, index: index), on: loop).map { Optional($0.status.code) }.recover { _ in nil }
        }
        return EventLoopFuture.whenAllSucceed(answers, on: loop)
    }

    /// With `--trust`, an origin's manifest (a 200 for `…/manifest.plist`) must verify before it
    /// is stored or forwarded; one that does not fails like an origin error (a stale verified
    /// copy may stand in, else 502).
    func checkTrust(_ response: ProxyResponse, _ request: ProxyRequest) throws {
        guard let trust, request.method == .GET, response.status == .ok else { return }
        guard Self.isManifest(request.target) else { return }
        let coding = response.headers.first(name: "content-encoding")
        guard let bytes = Self.decoded(response.body.map { Array($0.readableBytesView) } ?? [], coding) else {
            throw UntrustedOriginManifest(description: "a body in content coding \(coding ?? "identity") that does not decode")
        }
        do { _ = try trust.verify(bytes, now: Date(timeIntervalSince1970: clock())) } catch {
            throw UntrustedOriginManifest(description: error.description)
        }
    }

    /// Whether a request target names a Folio manifest (`…/manifest.plist`, any query).
    static func isManifest(_ target: String) -> Bool {
        let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target
        return path.hasSuffix("/" + PublishedLayout.manifest)
    }
}

// MARK: - Objects that are not what their name says

/// An origin's object (`…/objects/<sha256>.<ext>`) whose bytes do not have the hash it is named by.
struct CorruptOriginObject: Error, CustomStringConvertible {
    var description: String
}

extension HTTPCache {
    /// A published object is named by the sha256 of its bytes: a 200 for one whose bytes (its
    /// content coding decoded) hash otherwise fails like an origin error, so the next origin is
    /// asked and nothing corrupt is stored or served.
    static func checkObject(_ response: ProxyResponse, _ request: ProxyRequest) throws {
        guard request.method == .GET, response.status == .ok, let expected = objectHash(request.target) else { return }
        let coding = response.headers.first(name: "content-encoding")
        let bytes = decoded(response.body.map { Array($0.readableBytesView) } ?? [], coding)
        guard let bytes, ContentHash.sha256Hex(bytes) == expected else {
            throw CorruptOriginObject(description: "\(request.target): the origin's bytes do not have the sha256 the name says")
        }
    }

    /// The hash in a target `…/objects/<64 hex>.<ext>` (no `.gz`/`.br` file, any query); nil otherwise.
    static func objectHash(_ target: String) -> String? {
        let path = target.split(separator: "?", maxSplits: 1).first ?? Substring(target)
        let parts = path.split(separator: "/")
        guard parts.count >= 2, parts[parts.count - 2] == "objects" else { return nil }
        let name = parts[parts.count - 1].split(separator: ".")
        guard name.count == 2, name[0].utf8.count == 64, name[0].utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        return String(name[0])
    }
}

// MARK: - Origins at different versions

extension HTTPCache {
    /// The newest manifest version stored for `target` (any variant); nil when it is not a
    /// manifest's URL or none is stored. After a failover, a backup that is behind must not
    /// replace it with an older one.
    func storedManifestVersion(_ target: String) -> Int? {
        guard Self.isManifest(target) else { return nil }
        return store.variants(target).compactMap { Self.manifestVersion(status: $0.status, headers: $0.headers, body: $0.body) }.max()
    }

    /// The version of the manifest a 200 carries; nil for anything else.
    static func manifestVersion(status: Int, headers: HTTPHeaders, body: ByteBuffer?) -> Int? {
        guard status == 200, let body else { return nil }
        let bytes = decoded(Array(body.readableBytesView), headers.first(name: "content-encoding"))
        return bytes.flatMap { try? Manifest(bytes: $0) }?.version
    }

    /// Whether `response` is a manifest older than version `floor`.
    static func isOlder(_ response: ProxyResponse, than floor: Int?) -> Bool {
        guard let floor, let version = manifestVersion(status: Int(response.status.code), headers: response.headers, body: response.body)
        else { return false }
        return version < floor
    }

    /// For `forward`: refuse a manifest older than the one stored (nil when none is).
    func notOlder(than floor: Int?) -> (@Sendable (ProxyResponse) -> Bool)? {
        guard let floor else { return nil }
        return { !Self.isOlder($0, than: floor) }
    }
}
