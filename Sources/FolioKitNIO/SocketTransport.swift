import FolioHTTPCore
import FolioSupport
import FolioKitCore
import FolioToolSupport
import Foundation
import Synchronization

/// The transport of plain-http edges: each GET, and each batch of GETs, on threads of its own
/// with blocking sockets (``QuickHTTP/Connection``), keep-alive within a batch.
package struct SocketTransport: Transport {
    package let endpoint: PlainEndpoint
    package let timeout: Duration
    /// The header lines every request carries (User-Agent, the app's fields and context).
    private let fields: String

    package init(endpoint: PlainEndpoint, configuration: FolioHTTPConfiguration) {
        self.endpoint = endpoint
        self.timeout = configuration.timeout
        fields = configuration.requestFields.map { "\($0.0): \($0.1)\r\n" }.joined()
    }

    package var base: String { "http://\(endpoint.hostField)\(endpoint.prefix)" }

    private var timeoutMs: Int32 { Int32(clamping: timeout.wholeMilliseconds) }

    package func get(_ request: TransportRequest) async throws -> TransportResponse {
        let (endpoint, timeoutMs, fields, timeout) = (endpoint, timeoutMs, fields, timeout)
        return try await Blocking.run { cancel in
            let connection = QuickHTTP.Connection(endpoint, timeoutMs: timeoutMs, fields: fields, cancel: cancel)
            return try Self.get(connection, request, keepAlive: false, timeout: timeout)
        }
    }

    /// `concurrency` threads, each with one keep-alive connection, take the requests in turn;
    /// the first failure stops them all.
    package func getAll(
        _ requests: [TransportRequest], concurrency: Int, policy: RetryPolicy,
        handle: @escaping @Sendable (Int, TransportResponse) throws -> Void
    ) async throws {
        guard !requests.isEmpty else { return }
        let (endpoint, timeoutMs, fields, timeout) = (endpoint, timeoutMs, fields, timeout)
        try await Blocking.run { cancel in
            let next = Atomic<Int>(0)
            let failure = Mutex<(any Error)?>(nil)
            let workers = max(1, min(concurrency, requests.count))
            _ = Parallel.map(Array(0..<workers), threads: workers) { _ in
                let connection = QuickHTTP.Connection(endpoint, timeoutMs: timeoutMs, fields: fields, cancel: cancel)
                while failure.withLock({ $0 == nil }), !cancel.isCancelled {
                    let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard i < requests.count else { return }
                    do {
                        try handle(i, try policy.runBlocking(requests[i], isCancelled: { cancel.isCancelled }) { () throws(TransportError) in
                            try Self.get(connection, requests[i], keepAlive: true, timeout: timeout)
                        })
                    } catch {
                        failure.withLock { if $0 == nil { $0 = error } }
                    }
                }
            }
            if let error = failure.withLock({ $0 }) { throw error }
            // Workers stop taking requests once cancelled: some were never made.
            if cancel.isCancelled { throw CancellationError() }
        }
    }

    private static func get(
        _ connection: QuickHTTP.Connection, _ request: TransportRequest, keepAlive: Bool, timeout: Duration
    ) throws(TransportError) -> TransportResponse {
        do {
            return TransportResponse(try connection.get(request.path, headers: request.headers, maxBody: request.maxBody, keepAlive: keepAlive))
        } catch {
            let failure = error as? QuickHTTP.Failure ?? QuickHTTP.Failure(description: "\(error)")
            switch failure.kind {
            case .refused: throw TransportError(.connectionRefused, failure.description)
            case .timedOut: throw .timedOut(timeout)
            case .other: throw TransportError(.other, failure.description)
            }
        }
    }
}

extension TransportResponse {
    /// A response read from a socket: its head's bytes counted as read.
    package init(_ r: QuickHTTP.Response) {
        self.init(status: r.status, headers: TransportFields(r.headers.map { (name: $0.name, value: $0.value) }), body: r.body, headBytes: r.headBytes)
    }
}
