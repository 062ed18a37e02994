import AsyncHTTPClient
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The deploy endpoints of an edge's admin listener (`/.folio/deploy…`), over HTTP/1.1 with
/// the bearer token; each refusal becomes an ``ObjectStoreError`` carrying the edge's message.
package final class EdgeDeployClient: Sendable {
    /// The deploy protocol this client speaks (the edge's `DeployBegin.protocolVersion`).
    package static let protocolVersion = 5

    /// What the edge answers a begin: the deploy's id and the files it lacks.
    package struct Started: Codable, Sendable {
        /// The edge's protocol; nil from an edge older than protocol 2.
        package var `protocol`: Int?
        package var id: String
        package var missing: [String]
        package var current: Int
        /// The edge serves the directory as it is: nothing to send, no deploy begun.
        package var upToDate: Bool?
        /// When up to date: the object files (variants included) the manifests name.
        package var objects: Int?
    }

    /// What the edge answers a plan: what it still lacks after rebuilding what it could.
    package struct Planned: Codable, Sendable {
        package var missing: [String]
        package var rebuilt: Int
        package var rebuiltObjects: Int
        /// The edge makes nothing from the files named: commit once they are sent.
        package var final: Bool?
    }

    /// What the edge answers a finish: the plan, and the commit when the plan lacked nothing.
    package struct Finished: Codable, Sendable {
        package var planned: Planned
        package var committed: Committed?
    }

    /// What the edge answers a commit.
    package struct Committed: Codable, Sendable {
        package var version: Int
        package var previous: Int
        /// The object files (variants included) the manifests now served name.
        package var objects: Int?
    }

    /// A channel's `manifest.plist` as a begin names it.
    package struct Channel: Codable, Sendable, Equatable {
        package var version: Int
        package var sha256: String
        package var size: Int
    }

    /// What a begin sends.
    package struct Begin: Codable, Sendable {
        package struct File: Codable, Sendable, Equatable {
            package var path: String
            package var size: Int
            /// For a mutable file: the edge compares it with its own.
            package var sha256: String?
        }
        package var `protocol` = EdgeDeployClient.protocolVersion
        package var version: Int
        package var holder: String
        package var force: Bool
        package var channels: [String: Channel]
        /// Every file but the objects.
        package var files: [File]
    }

    package let base: URL
    private let token: String
    private let transport: Transport

    /// Blocking sockets for plain http (to loopback only); AsyncHTTPClient for https.
    private enum Transport: Sendable {
        case plain(LoopbackDeployHTTP)
        case client(HTTPClient)
    }

    /// A client of the edge at `base` (`https://HOST:PORT`), trusting `caFile`'s authorities
    /// instead of the system's when given. The token is refused over plain http but on loopback.
    package init(base: URL, token: String, caFile: String?) throws(ObjectStoreError) {
        try Self.checkTransport(base)
        self.base = base
        self.token = token
        if base.scheme?.lowercased() == "http", let plain = LoopbackDeployHTTP(base: base.absoluteString) {
            transport = .plain(plain)
            return
        }
        var config = HTTPClient.Configuration()
        config.timeout = .init(connect: .seconds(5), read: .seconds(120))
        config.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        config.decompression = .disabled
        config.httpVersion = .http1Only
        if let caFile {
            guard FileManager.default.fileExists(atPath: caFile) else {
                throw ObjectStoreError(.usage, "--ca \(caFile) does not exist: give the PEM file of the authority that signed the edge's certificate")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(caFile)
            config.tlsConfiguration = tls
        }
        transport = .client(HTTPClient(eventLoopGroupProvider: .singleton, configuration: config))
    }

    /// Refuses a URL that is not https, or http to a loopback address (the token would travel in clear).
    package static func checkTransport(_ url: URL) throws(ObjectStoreError) {
        let scheme = url.scheme?.lowercased() ?? ""
        guard let host = url.host, !host.isEmpty, scheme == "https" || scheme == "http" else {
            throw ObjectStoreError(.usage, "'\(url.absoluteString)' is not an edge's URL: give https://HOST:PORT (its admin listener)")
        }
        if scheme == "http", !Loopback.contains(host) {
            throw ObjectStoreError(
                .usage, "refusing to send the deploy token over plain http to \(host): use https://\(host)…, or http:// only to a loopback address (127.0.0.1, ::1, localhost)")
        }
    }

    package func shutdown() async {
        if case .client(let http) = transport { try? await http.shutdown() }
    }

    package func begin(_ begin: Begin) async throws -> Started {
        let body = try JSONEncoder().encode(begin)
        return try decode(try await send("POST", "", body: Array(body), what: "begin the deploy"))
    }

    package func put(_ id: String, _ relative: String, _ bytes: [UInt8]) async throws {
        _ = try await send("PUT", "/\(id)/\(relative)", body: bytes, what: "upload \(relative)")
    }

    /// Uploads several files in one request (``DeployFileBatch``).
    package func put(_ id: String, batch files: [(relative: String, bytes: [UInt8])]) async throws {
        _ = try await send("POST", "/\(id)/files", body: DeployFileBatch.encode(files), what: "upload \(files.count) files")
    }

    /// Plans the deploy, after staging `files` (sent in the same request) when there are any.
    package func plan(_ id: String, with files: [(relative: String, bytes: [UInt8])] = []) async throws -> Planned {
        try decode(try await send("POST", "/\(id)/plan", body: Self.batch(files), what: "plan the deploy"))
    }

    /// Plans the deploy after staging `files`, as ``plan(_:with:)``, and commits it in the same
    /// request when the plan lacks nothing.
    package func finish(_ id: String, with files: [(relative: String, bytes: [UInt8])] = []) async throws -> Finished {
        try decode(try await send("POST", "/\(id)/finish", body: Self.batch(files), what: "plan and switch the edge to the new version"))
    }

    /// Commits the deploy, after staging `files` (sent in the same request) when there are any.
    package func commit(_ id: String, with files: [(relative: String, bytes: [UInt8])] = []) async throws -> Committed {
        try decode(try await send("POST", "/\(id)/commit", body: Self.batch(files), what: "switch the edge to the new version"))
    }

    private static func batch(_ files: [(relative: String, bytes: [UInt8])]) -> [UInt8] {
        files.isEmpty ? [] : DeployFileBatch.encode(files)
    }

    /// Asks the edge to prune its root (`POST /.folio/deploy/prune` with a JSON request); its JSON answer.
    package func prune(_ request: [UInt8]) async throws -> [UInt8] {
        try await send("POST", "/prune", body: request, what: "prune the edge")
    }

    /// Drops the staged files and the lock (after a failure); errors are ignored.
    package func abort(_ id: String) async {
        _ = try? await send("DELETE", "/\(id)", body: [], what: "abort the deploy")
    }

    private func decode<T: Decodable>(_ body: [UInt8]) throws -> T {
        do { return try JSONDecoder().decode(T.self, from: Data(body)) } catch {
            throw ObjectStoreError(.store, "\(base.absoluteString) answered something that is not a folio-edge deploy answer: is it an edge's admin listener?")
        }
    }

    /// Sends one request; the body of a 2xx answer, else an error with the edge's message.
    private func send(_ method: String, _ path: String, body: [UInt8], what: String) async throws -> [UInt8] {
        let headers = [("Authorization", "Bearer \(token)"), ("Content-Type", path.isEmpty ? "application/json" : "application/octet-stream")]
        let status: Int
        let answer: [UInt8]
        do {
            (status, answer) = try await exchange(method, path, headers, body)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw ObjectStoreError(.store, "could not \(what) at \(base.absoluteString): \(Self.describe(error))")
        }
        guard !(200..<300).contains(status) else { return answer }
        throw Self.refusal(status, String(decoding: answer, as: UTF8.self), what: what)
    }

    /// One request and its answer's status and body: over blocking sockets for plain http,
    /// else through AsyncHTTPClient.
    private func exchange(_ method: String, _ path: String, _ headers: [(String, String)], _ body: [UInt8]) async throws -> (Int, [UInt8]) {
        let timeout = 300
        switch transport {
        case .plain(let plain):
            do { return try await plain.send(method, Self.path + path, headers: headers, body: body, timeoutMs: Int32(timeout * 1000)) } catch {
                if Task.isCancelled { throw CancellationError() }
                throw error
            }
        case .client(let http):
            var request = HTTPClientRequest(url: endpoint + path)
            request.method = HTTPMethod(rawValue: method)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await http.execute(request, timeout: .seconds(Int64(timeout)))
            return (Int(response.status.code), Array(try await response.body.collect(upTo: 64 << 20).readableBytesView))
        }
    }

    /// A transport error in words; a certificate the client does not trust points to --ca.
    private static func describe(_ error: Error) -> String {
        let text = "\(error)"
        guard text.contains("certificate") || text.contains("handshake") || text.contains("NIOSSL") || text.contains("BoringSSL") else {
            return ObjectStorePublisher.describe(error)
        }
        return "the TLS handshake failed (\(text)): if the edge's certificate is from a private CA, pass --ca FILE with that CA"
    }

    /// The deploy endpoints' path under the edge's base URL.
    private static let path = "/.folio/deploy"

    private var endpoint: String {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text + Self.path
    }

    /// The edge's refusal as an error: 409 locked, 412 a rollback, else a failure.
    private static func refusal(_ status: Int, _ message: String, what: String) -> ObjectStoreError {
        let text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        switch status {
        case 409: return ObjectStoreError(.locked, "the edge refused to begin the deploy (409): \(text)")
        case 412: return ObjectStoreError(.rollback, "the edge refused the deploy (412): \(text)")
        case 401: return ObjectStoreError(.credentials, "the edge refused the token (401): \(text)")
        case 405 where text.hasPrefix("only GET"):
            return ObjectStoreError(.store, "the edge does not take deploys here (405): give its --admin-listen address, and start it with --deploy-token-file")
        default: return ObjectStoreError(.store, "could not \(what): the edge answered \(status): \(text)")
        }
    }
}
