import FolioHTTPCore
import FolioKitCore
import FolioKitNIO
import Synchronization

/// A deploy's requests to an edge's admin listener on loopback over plain http: blocking
/// sockets on the calling thread (``QuickHTTP``), kept alive, one connection per request in
/// flight. An edit's deploy is two or three requests; through AsyncHTTPClient each paid two
/// thread hand-offs, and the first its set-up, most of a millisecond each on a VM's idle cores.
/// (Plain http goes only to loopback: ``EdgeDeployClient/checkTransport(_:)``.)
final class LoopbackDeployHTTP: Sendable {
    private let endpoint: PlainEndpoint
    private let idle = Mutex<[Pooled]>([])
    /// Set when the task of a request in flight is cancelled: its waits end.
    private let cancel = CancelFlag()

    /// One kept-alive connection, used by one request at a time.
    private final class Pooled: @unchecked Sendable {
        let connection: QuickHTTP.Connection
        init(_ connection: QuickHTTP.Connection) { self.connection = connection }
    }

    /// Nil for anything but `http://HOST:PORT[/prefix]`.
    init?(base: String) {
        guard let endpoint = PlainEndpoint(base) else { return nil }
        self.endpoint = endpoint
    }

    /// Sends one request; the status and body of the answer.
    func send(_ method: String, _ path: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int32) async throws -> (status: Int, body: [UInt8]) {
        try await withTaskCancellationHandler {
            let pooled = idle.withLock { $0.popLast() } ?? Pooled(QuickHTTP.Connection(endpoint, timeoutMs: timeoutMs, fields: "", cancel: cancel))
            let response = try pooled.connection.request(method, path, headers: headers, body: body, maxBody: 64 << 20)
            idle.withLock { $0.append(pooled) }
            return (response.status, response.body)
        } onCancel: {
            cancel.cancel()
        }
    }
}
