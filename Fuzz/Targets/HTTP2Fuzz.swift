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

extension FuzzTargets {
    /// The frame-header scanner in front of libnghttp2 (`HTTP2FloodGuard`): the input after the
    /// client preface, read whole and read in pieces (their sizes from the input's first byte)
    /// at one instant, finds the same flood in the same frame (the bytes accepted end with that
    /// frame, or with the piece it goes on past), and never accepts more bytes than it was given.
    package static func http2FloodGuard(_ data: UnsafeRawBufferPointer) {
        guard let first = data.first else { return }
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        let input = preface + Array(data.dropFirst())
        let now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        input.withUnsafeBytes { raw in
            var whole = HTTP2FloodGuard()
            let once = whole.scan(raw, now: now)
            check(once.accepted <= raw.count && (once.flood != nil || once.accepted == raw.count), "http2-flood-guard",
                  "accepted \(once.accepted) of \(raw.count) bytes without a flood")
            var pieces = HTTP2FloodGuard()
            let step = Int(first % 31) + 1
            var offset = 0
            var found: (Int, HTTP2FloodGuard.Flood)?
            while offset < raw.count {
                let end = min(raw.count, offset + step)
                let r = pieces.scan(UnsafeRawBufferPointer(rebasing: raw[offset..<end]), now: now)
                if let flood = r.flood {
                    // Up to the end of the flood's frame, or of this piece when the frame goes on.
                    found = (offset + r.accepted, flood)
                    check(once.accepted == offset + r.accepted || (r.accepted == end - offset && once.accepted > end), "http2-flood-guard",
                          "whole: \(once), in pieces of \(step): \(flood) at \(offset + r.accepted)")
                    break
                }
                check(r.accepted == end - offset, "http2-flood-guard", "a piece without a flood was not accepted whole")
                offset = end
            }
            check(found?.1 == once.flood, "http2-flood-guard", "whole: \(once), in pieces of \(step): \(String(describing: found))")
        }
    }
}
