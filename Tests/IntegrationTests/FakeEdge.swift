import FolioKit
import FolioPublished
import FolioSupport
import Foundation
import NIOHTTP1
import Synchronization

/// A transport that answers from a published directory in-process, for testing the sync's
/// phases without a socket: strong ETags and 304s on the manifest and the head, the fields a
/// test sets on them (`Cache-Control`, `Age`), answers a test scripts per path (a 503 with
/// `Retry-After`), and a delay per request, which cancellation interrupts.
final class FakeEdge: Transport {
    struct Script: Sendable {
        /// Requests whose path contains this answer with `status` and `fields`, `times` times.
        var pathContains: String
        var status: Int
        var fields: [(String, String)]
        var times: Int
    }

    let root: String
    let base = "fake://edge"
    private let state = Mutex<(log: [String], scripts: [Script], manifestFields: [(String, String)], delays: [String: Duration])>(
        ([], [], [("Cache-Control", "max-age=60")], [:]))

    init(root: String) { self.root = root }

    /// The paths requested so far, in order.
    var log: [String] { state.withLock { $0.log } }

    /// The fields of manifest and head answers (default `Cache-Control: max-age=60`).
    func setManifestFields(_ fields: [(String, String)]) { state.withLock { $0.manifestFields = fields } }

    func script(_ s: Script) { state.withLock { $0.scripts.append(s) } }

    /// Requests whose path contains `part` wait `delay` before their answer.
    func delay(_ part: String, _ delay: Duration) { state.withLock { $0.delays[part] = delay } }

    func get(_ request: TransportRequest) async throws -> TransportResponse {
        let (delay, scripted, manifestFields) = state.withLock { s -> (Duration?, Script?, [(String, String)]) in
            s.log.append(request.path)
            let delay = s.delays.first { request.path.contains($0.key) }?.value
            var scripted: Script?
            if let i = s.scripts.firstIndex(where: { request.path.contains($0.pathContains) && $0.times > 0 }) {
                s.scripts[i].times -= 1
                scripted = s.scripts[i]
            }
            return (delay, scripted, s.manifestFields)
        }
        if let delay { try await Task.sleep(for: delay) }
        if let scripted { return Self.answer(scripted.status, scripted.fields, []) }
        guard let bytes = try? FileIO.read(root + request.path) else { return Self.answer(404, [], Array("not found".utf8)) }
        let isManifest = request.path.hasSuffix("/" + PublishedLayout.manifest) || request.path.hasSuffix("/" + PublishedLayout.head)
        let etag = "\"\(ContentHash.sha256Hex(bytes).prefix(16))\""
        var fields = [("ETag", etag)] + (isManifest ? manifestFields : [("Cache-Control", "max-age=31536000, immutable")])
        if request.headers.contains(where: { $0.0 == "If-None-Match" && $0.1 == etag }) { return Self.answer(304, fields, []) }
        fields.append(("Content-Length", "\(bytes.count)"))
        return Self.answer(200, fields, bytes)
    }

    static func answer(_ status: Int, _ fields: [(String, String)], _ body: [UInt8]) -> TransportResponse {
        let headers = TransportFields(fields.map { (name: $0.0, value: $0.1) })
        return TransportResponse(status: status, headers: headers, body: body, headBytes: TransportResponse.headSize(reason: "", fields: headers))
    }
}
