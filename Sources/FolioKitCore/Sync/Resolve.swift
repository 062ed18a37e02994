import FolioHTTPFields
import FolioPublished
import FolioSupport
import Foundation

/// What the edge's current version is, as the first phase learned it.
struct Resolution: Sendable {
    /// 200: a version other than the held one; 304: the held one.
    var status: Int
    var manifestBytes: [UInt8]
    var manifest: Manifest?
    var manifestETag: String?
    var headETag: String?
    var headMissing: Bool
    /// Set when the new version was rebuilt from deltas of the held one.
    var delta: DeltaUse?
    /// Bytes spent on the head and the deltas.
    var deltaBytes = 0
    /// The lifetime the edge gave the answer that decided (max-age minus Age), if any.
    var serverLifetime: Int?
}

enum ResolveOutcome {
    case resolved(Resolution)
    case offline(TransportError)
}

extension Syncer {
    /// Phase 1. A synced client asks for `head.plist` (a few hundred bytes) and, when the
    /// version moved, rebuilds the new one from deltas; otherwise, and whenever a delta is
    /// missing or wrong, it asks for the manifest (conditionally).
    func resolve(_ run: SyncRun) async throws -> ResolveOutcome {
        let held = run.held
        let own = run.heldIsOwn
        var r = Resolution(
            status: 304, manifestBytes: [], manifest: held?.published, manifestETag: own ? held?.state.etag : nil,
            headETag: own ? held?.state.headETag : nil, headMissing: own && (held?.state.headMissing ?? false))
        if settings.deltas, let held, !r.headMissing,
            let heldBytes = try? FileIO.read(cache.manifestPath(held.state.version, sha256: held.state.manifestSHA256))
        {
            let before = run.counters.bytes.value
            do {
                if try await viaHead(&r, held: held, heldBytes: heldBytes, run) { return .resolved(r) }
            } catch let error as TransportError {
                return try offline(error)
            }
            r.deltaBytes = run.counters.bytes.value - before
        }
        do {
            try await viaManifest(&r, run)
        } catch let error as TransportError {
            return try offline(error)
        }
        return .resolved(r)
    }

    /// The edge gave no answer: offline, unless the URL itself is wrong (https spoken to a
    /// plain-http edge), which no retry later will cure.
    private func offline(_ error: TransportError) throws -> ResolveOutcome {
        guard error.kind == .plainHTTP else { return .offline(error) }
        throw FolioError(.invalidResponse, error.description, url: settings.edge, underlying: error)
    }

    /// Asks for the head; true when it settled the version (the same, or rebuilt by deltas).
    private func viaHead(_ r: inout Resolution, held: SyncRun.Held, heldBytes: [UInt8], _ run: SyncRun) async throws -> Bool {
        var headers = [TransportRequest.acceptEncoding]
        if let etag = r.headETag { headers.append(("If-None-Match", etag)) }
        let path = channelPath(PublishedLayout.head)
        let response = try await get(TransportRequest(path: path, headers: headers, maxBody: 1 << 20), counters: run.counters)
        try checkMaintenance(response, String(path.dropFirst()), held: true)
        switch response.status {
        case 304:
            (r.status, r.manifestBytes, r.manifest) = (304, heldBytes, held.published)
        case 200:
            r.headETag = response.headers.first(name: "etag")
            do {
                let head = try DeltaHead(bytes: try decodeBody(response, limit: 1 << 20, what: PublishedLayout.head))
                if head.sha256 == held.state.manifestSHA256 {
                    (r.status, r.manifestBytes, r.manifest) = (304, heldBytes, held.published)
                } else {
                    let use = try await viaDeltas(head, held: held, heldBytes: heldBytes, counters: run.counters)
                    (r.status, r.manifestBytes, r.manifest, r.delta, r.manifestETag) = (200, use.manifestBytes, use.manifest, use, nil)
                }
            } catch let error as TransportError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                run.report.deltaFallback = "\(error)"
                return false
            }
        case 404, 410:
            r.headMissing = true
            r.headETag = nil
            return false
        default:
            run.report.deltaFallback = "GET \(path) answered \(response.status)"
            return false
        }
        r.serverLifetime = Self.serverLifetime(response)
        return true
    }

    /// Asks for the manifest, conditionally when a version is held.
    private func viaManifest(_ r: inout Resolution, _ run: SyncRun) async throws {
        let held = run.held
        var headers = [TransportRequest.acceptEncoding]
        if let etag = r.manifestETag { headers.append(("If-None-Match", etag)) }
        let path = channelPath(PublishedLayout.manifest)
        let response = try await get(TransportRequest(path: path, headers: headers, maxBody: 64 << 20), counters: run.counters)
        try checkMaintenance(response, String(path.dropFirst()), held: held != nil)
        r.status = response.status
        r.serverLifetime = Self.serverLifetime(response)
        switch response.status {
        case 304:
            guard let held else {
                throw FolioError(.invalidResponse, "the edge answered 304 to an unconditional request")
            }
            r.manifest = held.published
            r.manifestBytes = try FileIO.read(cache.manifestPath(held.state.version, sha256: held.state.manifestSHA256))
        case 200:
            r.manifestBytes = try decodeBody(response, limit: 64 << 20, what: PublishedLayout.manifest)
            do { r.manifest = try Manifest(bytes: r.manifestBytes) } catch {
                throw FolioError(.invalidResponse, "the edge's \(path.dropFirst()) is unusable: \(error)")
            }
            r.manifestETag = response.headers.first(name: "etag") ?? r.manifestETag
            // A new version: an edge that had no head.plist may have one now.
            if r.headMissing {
                r.headMissing = false
                r.headETag = nil
            }
        default:
            throw FolioError(.invalidResponse, "GET \(transport.base)\(path) answered \(response.status)" + (response.status == 404 && settings.channel != Channel.production ? ": the edge has no channel \(settings.channel)" : ""))
        }
    }

    /// How long the edge says its answer stays fresh for this client (RFC 9111 §4.2): its
    /// `max-age` (0 with `no-cache` or `no-store`) minus its `Age`; nil without `Cache-Control`.
    static func serverLifetime(_ response: TransportResponse) -> Int? {
        guard let control = CacheControl(lines: response.headers["cache-control"]) else { return nil }
        guard !control.noCache, !control.noStore else { return 0 }
        guard let maxAge = control.maxAge else { return nil }
        return max(0, maxAge - (CacheControl.age(response.headers.first(name: "age")) ?? 0))
    }
}
