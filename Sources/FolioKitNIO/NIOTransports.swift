import FolioKit

/// The command line's transports, measured faster on Linux: blocking sockets for `http://`,
/// AsyncHTTPClient for `https://`.
package enum NIOTransports {
    package static func forEdge(_ edge: String, configuration: FolioHTTPConfiguration = .init()) -> any Transport {
        if let plain = PlainEndpoint(edge) { return SocketTransport(endpoint: plain, configuration: configuration) }
        return HTTPClientTransport(base: edge, configuration: configuration)
    }
}
