import FolioKitCore
import FolioSupport
import FolioToolSupport

/// The command line's transports, measured faster on Linux: blocking sockets for `http://`,
/// AsyncHTTPClient for `https://`.
package enum NIOTransports {
    package static func forEdge(_ edge: String, configuration: FolioHTTPConfiguration = .init()) -> any Transport {
        if let plain = PlainEndpoint(edge) { return SocketTransport(endpoint: plain, configuration: configuration) }
        return HTTPClientTransport(base: edge, configuration: configuration)
    }
}

extension SocketTransport {
    /// Identity, gzip and brotli: it asks for `br, gzip`.
    package func decode(_ body: [UInt8], coding: String?, maxSize: Int) throws -> [UInt8] {
        try ContentDecoding.decode(body, coding: coding, maxSize: maxSize)
    }
}

extension HTTPClientTransport {
    /// Identity, gzip and brotli: it asks for `br, gzip`.
    package func decode(_ body: [UInt8], coding: String?, maxSize: Int) throws -> [UInt8] {
        try ContentDecoding.decode(body, coding: coding, maxSize: maxSize)
    }
}
