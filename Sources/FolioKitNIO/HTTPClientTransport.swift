import AsyncHTTPClient
import FolioKitCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The transport of https edges: AsyncHTTPClient, pooled for the process (one HTTP/2
/// connection where the edge offers it), no automatic decompression (the sync counts the bytes
/// as sent and decodes them with its own limits). Cancelling the task cancels the request.
package struct HTTPClientTransport: Transport {
    package let base: String
    package let timeout: Duration
    private let fields: [(String, String)]
    private let client: HTTPClient

    package init(base: String, configuration: FolioHTTPConfiguration) {
        self.base = base
        self.timeout = configuration.timeout
        fields = configuration.requestFields
        client = FolioHTTP.client(extraAuthorities: configuration.certificateAuthorities)
    }

    package func get(_ request: TransportRequest) async throws -> TransportResponse {
        var http = HTTPClientRequest(url: base + request.path)
        for (name, value) in fields { http.headers.add(name: name, value: value) }
        for (name, value) in request.headers { http.headers.add(name: name, value: value) }
        do {
            let response = try await client.execute(http, timeout: TimeAmount(timeout))
            let body = try await response.body.collect(upTo: request.maxBody)
            let fields = TransportFields(response.headers.map { (name: $0.name, value: $0.value) })
            return TransportResponse(
                status: Int(response.status.code), headers: fields, body: Array(body.readableBytesView),
                headBytes: TransportResponse.headSize(reason: response.status.reasonPhrase, fields: fields))
        } catch {
            let classified = Self.classify(error, timeout: timeout)
            if let failure = classified as? TransportError, failure.kind == .tls, let mistake = await PlainHTTPProbe.mistake(base: base) {
                throw mistake
            }
            throw classified
        }
    }

    /// The error a failed request becomes, by its type: a cancellation stays one.
    static func classify(_ error: any Error, timeout: Duration) -> any Error {
        switch error {
        case is CancellationError: return error
        case let e as HTTPClientError:
            switch e {
            case .cancelled: return CancellationError()
            case .connectTimeout, .deadlineExceeded, .readTimeout, .writeTimeout: return TransportError.timedOut(timeout)
            case .remoteConnectionClosed: return TransportError(.other, "the edge closed the connection")
            default: return TransportError(.other, "the request failed (\(Self.words(e)))")
            }
        case is NIOSSLError, is BoringSSLError:
            // Their descriptions name types and build paths: say what it means instead.
            return TransportError(
                .tls,
                "the TLS handshake failed: the edge's certificate is not trusted here, or it does not speak TLS; "
                    + "for a private certificate authority set \(FolioHTTP.caFileVariable) to its PEM file")
        case let e as NIOConnectionError: return classifyConnect(e)
        case let e as IOError where e.errnoCode == ECONNREFUSED: return TransportError(.connectionRefused, "connection refused")
        case ChannelError.connectTimeout: return TransportError.timedOut(timeout)
        case is NIOTooManyBytesError: return TransportError(.other, "the answer is larger than expected")
        case let e as IOError: return TransportError(.other, "the connection failed (\(String(cString: strerror(e.errnoCode))))")
        default: return TransportError(.other, "the request failed (\(Self.words(error)))")
        }
    }

    /// An error's description without a type's name in front (`HTTPClientError.badURL` → `bad URL`).
    static func words(_ error: any Error) -> String {
        var text = "\(error)"
        if let dot = text.firstIndex(of: "."), text[..<dot].allSatisfy({ $0.isLetter || $0.isNumber }), text.first?.isUppercase == true {
            text = String(text[text.index(after: dot)...])
        }
        var out = ""
        for c in text {
            if c.isUppercase, let last = out.last, last.isLowercase { out += " " }
            out.append(c)
        }
        return out.lowercased()
    }

    private static func classifyConnect(_ e: NIOConnectionError) -> TransportError {
        let refused = e.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
        if refused { return TransportError(.connectionRefused, "connection refused") }
        if e.dnsAError != nil || e.dnsAAAAError != nil { return TransportError(.other, "cannot resolve \(e.host)") }
        return TransportError(.other, "cannot connect to \(e.host):\(e.port)")
    }
}
