import FolioHTTPCore
import NIOCore
import NIOEmbedded
import NIOHTTP2

extension FuzzTargets {
    /// The edge's HTTP/2 server side on an embedded channel: swift-nio-http2's handler with the
    /// edge's limits and connection guard, and each stream behind an `HTTP2StreamBridge`. The
    /// input follows the client preface. Whatever the frames, each request the bridge hands to
    /// HTTP/1.1 is exactly one request (its head and the body its Content-Length announces, no
    /// byte more: nothing is smuggled), and the canned answer goes back without a trap.
    package static func http2Frames(_ data: UnsafeRawBufferPointer) {
        let channel = EmbeddedChannel()
        defer {
            _ = try? channel.finish(acceptAlreadyClosed: true)
            // The pipelines come apart in tasks the close schedules (handlers removed, the
            // guard's timer cancelled, the stream channels closed): run them, or they leak.
            channel.embeddedEventLoop.run()
        }
        do {
            _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                mode: .server, connectionConfiguration: HTTP2Limits.connection(maxHeaderBytes: 16384),
                streamConfiguration: HTTP2Limits.stream()
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(HTTP2StreamBridge())
                    try stream.pipeline.syncOperations.addHandler(CannedHTTP1Answer())
                }
            }
            try channel.pipeline.syncOperations.addHandler(HTTP2ConnectionGuard(timeout: .seconds(15)))
            // Active, as an accepted connection is: its close then closes the streams too.
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            var input = channel.allocator.buffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            input.writeBytes(data)
            try channel.writeInbound(input)
        } catch {
            return  // a connection error: swift-nio-http2 answered with GOAWAY
        }
        channel.embeddedEventLoop.run()
        while (try? channel.readOutbound(as: ByteBuffer.self)) ?? nil != nil {}
    }
}

/// Stands in for the edge's HTTP/1.1 handler: checks what the bridge hands over, then answers.
private final class CannedHTTP1Answer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let parser = HTTPRequestParser(maxTargetBytes: 1 << 20, maxHeadBytes: 1 << 22, maxHeaderCount: 1 << 16)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        bytes.withUnsafeReadableBytes { raw in
            switch Self.parser.parse(raw) {
            case .request(let request, let length):
                FuzzTargets.check(
                    !request.chunked && length + request.contentLength == raw.count, "http2-frames",
                    "the bridge handed over more or less than one request: head \(length), body \(request.contentLength), \(raw.count) bytes")
            case .incomplete:
                FuzzTargets.violated("http2-frames", "the bridge handed over an incomplete request")
            case .failure:
                break  // a field the HTTP/1.1 parser refuses (it answers 400 then)
            }
        }
        let answer = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer)), promise: nil)
    }
}
