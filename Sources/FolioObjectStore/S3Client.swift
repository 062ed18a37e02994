import AsyncHTTPClient
import FolioS3Signing
import FolioSupport
import Foundation
import NIOCore
import NIOHTTP1

/// A response from the store: status, headers, body.
package struct S3Response: Sendable {
    package var status: Int
    package var headers: HTTPHeaders
    package var body: [UInt8]

    /// The `<Code>` of an S3 error document, when the body is one.
    package var errorCode: String? { XMLText.first("Code", in: body) }
}

/// A signed request to the store, before it is sent.
package struct S3Request: Sendable {
    package var method: String
    package var key: String
    package var query: [(String, String)] = []
    package var headers: [(String, String)] = []
    package var body: [UInt8] = []

    package init(method: String, key: String, query: [(String, String)] = [], headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.key = key
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// The S3 REST calls the publisher makes, signed with SigV4, each retried (with exponential
/// backoff and jitter) on 500, 503, `SlowDown` and connection errors.
package final class S3Client: Sendable {
    package let configuration: S3Configuration
    package let bucket: String
    package let retry: RetryPolicy
    private let http: HTTPClient

    package init(configuration: S3Configuration, bucket: String, retry: RetryPolicy = RetryPolicy()) {
        self.configuration = configuration
        self.bucket = bucket
        self.retry = retry
        var config = HTTPClient.Configuration()
        config.timeout = .init(connect: .seconds(3), read: .seconds(60))
        config.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
        config.decompression = .disabled
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
    }

    /// Closes the connections; call once at the end.
    package func shutdown() async {
        try? await http.shutdown()
    }

    /// Sends `request`, retrying what may succeed on a second try; the last response or error.
    package func send(_ request: S3Request) async throws -> S3Response {
        var attempt = 0
        while true {
            attempt += 1
            do {
                let response = try await sendOnce(request)
                if attempt < retry.attempts, Self.isRetryable(response) {
                    try await retry.pause(after: attempt)
                    continue
                }
                return response
            } catch let error as CancellationError {
                throw error
            } catch let error as ObjectStoreError {
                throw error
            } catch {
                if attempt >= retry.attempts { throw unreachable(error, tries: attempt) }
                try await retry.pause(after: attempt)
            }
        }
    }

    /// A connection failure in words.
    private func unreachable(_ error: Error, tries: Int) -> ObjectStoreError {
        let text = "\(error)".lowercased()
        let why = text.contains("refused") ? "connection refused" : text.contains("timeout") || text.contains("timed out") ? "timed out"
            : text.contains("resolve") || text.contains("lookup") ? "the host name does not resolve" : "the connection failed"
        return ObjectStoreError(.store, "could not reach the store at \(configuration.endpoint.absoluteString): \(why) (\(tries) tries)")
    }

    private static func isRetryable(_ r: S3Response) -> Bool {
        r.status == 500 || r.status == 502 || r.status == 503 || r.status == 504 || r.errorCode == "SlowDown"
    }

    private func sendOnce(_ request: S3Request) async throws -> S3Response {
        let url = configuration.url(bucket: bucket, key: request.key)
        let query = SigV4Signer.canonicalQuery(request.query)
        let fields = configuration.signedFields(
            method: request.method, url: url, query: request.query, headers: request.headers,
            payloadHash: ContentHash.sha256Hex(request.body), date: Date())
        var outgoing = HTTPClientRequest(url: url.absoluteString + (query.isEmpty ? "" : "?" + query))
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in fields { outgoing.headers.add(name: name, value: value) }
        if !request.body.isEmpty || request.method == "PUT" || request.method == "POST" {
            outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        }
        let response = try await http.execute(outgoing, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 16 << 20)
        return S3Response(status: Int(response.status.code), headers: response.headers, body: Array(body.readableBytesView))
    }
}

/// How many times a request is tried and how long to wait between tries: exponential backoff
/// from `base`, capped, with full jitter.
package struct RetryPolicy: Sendable {
    package var attempts: Int
    package var baseMilliseconds: Int
    package var capMilliseconds: Int

    package init(attempts: Int = 5, baseMilliseconds: Int = 100, capMilliseconds: Int = 5000) {
        self.attempts = attempts
        self.baseMilliseconds = baseMilliseconds
        self.capMilliseconds = capMilliseconds
    }

    /// Sleeps a random time up to `min(cap, base * 2^(attempt-1))`.
    func pause(after attempt: Int) async throws {
        let ceiling = min(capMilliseconds, baseMilliseconds << min(attempt - 1, 20))
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...max(ceiling, 1))))
    }
}
