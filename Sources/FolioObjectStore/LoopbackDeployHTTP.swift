import FolioHTTPCore
import FolioKitCore
import FolioKitNIO
import Synchronization

/// A deploy's requests to an edge's admin listener on loopback over plain http: blocking
/// sockets on the calling thread (``QuickHTTP``), kept alive, one connection per request in
/// flight. An edit's deploy is two or three requests; through AsyncHTTPClient each paid two
/// thread hand-offs, and the first its set-up, most of a millisecond each on a VM's idle cores.
/// (Plain http goes only to loopback: ``EdgeDeployClient/checkTransport(_:)``.)
package final class LoopbackDeployHTTP: Sendable {
    private let endpoint: PlainEndpoint
    private let idle = Mutex<[Pooled]>([])

    /// One kept-alive connection, used by one request at a time; its flag is set when the task
    /// of its request is cancelled (its waits end, and it is not used again).
    private final class Pooled: @unchecked Sendable {
        let cancel = CancelFlag()
        let connection: QuickHTTP.Connection
        init(_ endpoint: PlainEndpoint, timeoutMs: Int32) {
            connection = QuickHTTP.Connection(endpoint, timeoutMs: timeoutMs, fields: "", cancel: cancel)
        }
    }

    /// Nil for anything but `http://HOST:PORT[/prefix]`.
    package init?(base: String) {
        guard let endpoint = PlainEndpoint(base) else { return nil }
        self.endpoint = endpoint
    }

    /// Sends one request; the status and body of the answer.
    package func send(_ method: String, _ path: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int32) async throws -> (status: Int, body: [UInt8]) {
        let pooled = idle.withLock { $0.popLast() } ?? Pooled(endpoint, timeoutMs: timeoutMs)
        return try await withTaskCancellationHandler {
            let response = try pooled.connection.request(method, path, headers: headers, body: body, maxBody: 64 << 20)
            if !pooled.cancel.isCancelled { idle.withLock { $0.append(pooled) } }
            return (response.status, response.body)
        } onCancel: {
            pooled.cancel.cancel()
        }
    }
}
