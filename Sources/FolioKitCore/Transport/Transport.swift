import FolioSupport
import Foundation

/// One GET the sync asks of the edge: a path under the edge's base URL (which may have a path
/// prefix of its own), the request fields, and the most body bytes it accepts.
package struct TransportRequest: Sendable {
    package var path: String
    package var headers: [(String, String)]
    package var maxBody: Int

    /// The codings the sync asks for: brotli first (the smallest variant the edge holds), then
    /// gzip. (URLSession asks for what it decodes itself instead.)
    package static let acceptEncoding = ("Accept-Encoding", "br, gzip")

    package init(path: String, headers: [(String, String)], maxBody: Int) {
        self.path = path
        self.headers = headers
        self.maxBody = maxBody
    }
}

/// A failure to get an answer from the edge: retrying might cure it, or it means offline.
package struct TransportError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        case connectionRefused
        case timedOut
        /// The TLS handshake failed: an untrusted certificate, or an edge that does not speak TLS.
        case tls
        /// An https URL for an edge that answered in plain HTTP: a configuration mistake.
        case plainHTTP
        /// Anything else on the way (reset, closed early, a response that cannot be read).
        case other

        /// Whether another try may get an answer (not after a timeout or a TLS failure).
        package var isRetryable: Bool { self == .connectionRefused || self == .other }
    }

    package var kind: Kind
    package var description: String
    /// The path of the request that failed, once the retry policy gave up on it.
    package var path: String?

    package init(_ kind: Kind, _ description: String, path: String? = nil) {
        self.kind = kind
        self.description = description
        self.path = path
    }

    /// A request that got no answer within `timeout`.
    package static func timedOut(_ timeout: Duration) -> TransportError {
        TransportError(.timedOut, "the edge did not answer within \(seconds(timeout)) s")
    }

    /// `1`, `2.5`: a duration in seconds, as people write it.
    package static func seconds(_ d: Duration) -> String {
        let ms = d.wholeMilliseconds
        return ms % 1000 == 0 ? String(ms / 1000) : String(Double(ms) / 1000)
    }
}

/// How the sync talks to an edge: one GET at a time or many at once. Every implementation
/// returns without holding a thread of Swift's cooperative pool while it waits, and stops
/// within 100 ms when its task is cancelled (throwing `CancellationError`).
///
/// FolioKit's is URLSession (`URLSessionTransport`); FolioKitNIO has the command line's
/// (blocking sockets for plain http, AsyncHTTPClient for https), measured faster on Linux, and
/// links no FoundationNetworking (libcurl and its 27 libraries cost `folio` 4 ms at start).
/// Tests give the sync a fake one.
package protocol Transport: Sendable {
    /// The edge's base URL, for messages.
    var base: String { get }

    /// One GET; throws ``TransportError`` when no answer came.
    func get(_ request: TransportRequest) async throws -> TransportResponse

    /// GETs every request, at most `concurrency` at once, each with `policy`'s retries, and
    /// hands each answer to `handle` (from any thread). The first error, from a request or
    /// from `handle`, stops the rest and is thrown.
    func getAll(
        _ requests: [TransportRequest], concurrency: Int, policy: RetryPolicy,
        handle: @escaping @Sendable (Int, TransportResponse) throws -> Void
    ) async throws

    /// A body it handed on, decoded from `coding` (its `Content-Encoding`; nil for none), at
    /// most `maxSize` bytes. The default reads identity and gzip; a transport that asks for
    /// more codings (brotli) reads them too.
    func decode(_ body: [UInt8], coding: String?, maxSize: Int) throws -> [UInt8]
}

extension Transport {
    package func decode(_ body: [UInt8], coding: String?, maxSize: Int) throws -> [UInt8] {
        try ContentDecoding.decode(body, coding: coding, maxSize: maxSize, brotli: nil)
    }

    /// The default: a task group over ``get(_:)``, each answer handled on a thread for blocking
    /// work (``BlockingThreads``): `handle` verifies and stores an object, file work that must
    /// hold neither a thread of Swift's cooperative pool nor one of Dispatch's.
    package func getAll(
        _ requests: [TransportRequest], concurrency: Int, policy: RetryPolicy,
        handle: @escaping @Sendable (Int, TransportResponse) throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func add() {
                guard next < requests.count else { return }
                let (i, request) = (next, requests[next])
                next += 1
                group.addTask {
                    let response = try await policy.run(request, on: self)
                    try await Blocking.run { _ in try handle(i, response) }
                }
            }
            for _ in 0..<max(1, concurrency) { add() }
            while try await group.next() != nil { add() }
        }
    }
}
