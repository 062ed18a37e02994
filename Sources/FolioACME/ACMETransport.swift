import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// One HTTP response from the directory, read whole.
struct ACMEResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first(name: name) }

    /// The media type without parameters, lowercased.
    var contentType: String {
        let value = header("Content-Type") ?? ""
        return value.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
    }
}

/// The HTTP client the ACME exchange runs on: the system's trust roots plus the configured
/// extra ones, no redirects, a limit on each request's time and on each body's size.
final class ACMETransport: Sendable {
    static let userAgent = "folio-acme/1"
    /// The largest response read: certificate chains and ACME objects are a few kilobytes.
    static let maxBody = 1 << 20

    private let client: HTTPClient
    private let timeout: TimeAmount

    init(extraTrustRootsPath: String?, requestTimeout: Double) throws(ACMEError) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let path = extraTrustRootsPath { tls.additionalTrustRoots = [.certificates(try Self.roots(path))] }
        var config = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        config.decompression = .disabled
        timeout = .milliseconds(Int64(requestTimeout * 1000))
        config.timeout = .init(connect: .seconds(10), read: timeout)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: config)
    }

    /// The certificates of a PEM file of extra trust roots; an error naming the file otherwise.
    static func roots(_ path: String) throws(ACMEError) -> [NIOSSLCertificate] {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ACMEError(step: "configuration", "trust roots \(path): the file cannot be read")
        }
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
            throw ACMEError(step: "configuration", "trust roots \(path) hold no PEM certificate")
        }
        return certificates
    }

    /// Sends one request; `step` names it in errors. Transport failures (refused, TLS, timeout)
    /// become an ACMEError; HTTP error statuses are the caller's to judge.
    func send(
        _ method: HTTPMethod, _ url: String, body: [UInt8]? = nil, accept: String? = nil, step: String
    ) async throws -> ACMEResponse {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "User-Agent", value: Self.userAgent)
        if let accept { request.headers.add(name: "Accept", value: accept) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/jose+json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let response = try await client.execute(request, timeout: timeout)
            let buffer = try await response.body.collect(upTo: Self.maxBody)
            return ACMEResponse(status: Int(response.status.code), headers: response.headers, body: Array(buffer.readableBytesView))
        } catch {
            try Task.checkCancellation()
            throw ACMEError(step: step, "\(method.rawValue) \(url): \(error)")
        }
    }

    func shutdown() async { try? await client.shutdown() }
}
