import NIOCore
import NIOHPACK
import NIOHTTP2

/// One HTTP/2 stream, served by the same HTTP/1.1 handlers as a connection of its mode (the
/// edge's `EdgeHandler`, the tier's decoder and `ProxyHandler`), so both protocols share one
/// implementation of every route, precondition and limit. (Here, apart from the edge, so the
/// `http2-frames` fuzz target reaches it.)
///
/// Inbound, the stream's HEADERS (and DATA) become one HTTP/1.1 request in bytes: the
/// pseudo-header fields give the request line and `Host`, connection-specific fields are
/// dropped, and a body is sent with its `Content-Length`. Outbound, the handler's response
/// bytes are read back: the head becomes a HEADERS frame (`:status`, fields in lower case,
/// connection-specific ones dropped), the body DATA frames, the last of them ending the stream.
package final class HTTP2StreamBridge: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTP2Frame.FramePayload
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = IOData
    package typealias OutboundOut = HTTP2Frame.FramePayload

    /// The largest request body passed on; a larger one resets the stream (REFUSED_STREAM).
    package static let maxRequestBody = 1 << 20

    package init() {}

    private var request: ByteBuffer?
    private var body: ByteBuffer?
    private var forwarded = false
    private var isHead = false
    private var response = ResponseState.head(nil)

    enum ResponseState {
        /// Collecting the head's bytes.
        case head(ByteBuffer?)
        /// Body bytes still to come: a count, or until the handler closes (no Content-Length).
        case body(remaining: Int, untilClose: Bool)
        case done
    }

    // MARK: Requests

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !forwarded else { return }
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if request == nil {
                guard let head = Self.requestHead(headers.headers, allocator: context.channel.allocator) else {
                    return reset(context, .protocolError)
                }
                request = head
                isHead = headers.headers.first(name: ":method") == "HEAD"
            }  // A second HEADERS block is trailers: not passed on.
            if headers.endStream { forward(context) }
        case .data(let data):
            guard request != nil, case .byteBuffer(var chunk) = data.data else { return reset(context, .protocolError) }
            guard (body?.readableBytes ?? 0) + chunk.readableBytes <= Self.maxRequestBody else {
                return reset(context, .refusedStream)
            }
            if body == nil { body = chunk } else { body!.writeBuffer(&chunk) }
            if data.endStream { forward(context) }
        default:
            break
        }
    }

    /// Passes the complete request on as HTTP/1.1 bytes.
    private func forward(_ context: ChannelHandlerContext) {
        guard var bytes = request else { return }
        forwarded = true
        if let body, body.readableBytes > 0 {
            bytes.writeString("Content-Length: \(body.readableBytes)\r\n\r\n")
            bytes.writeImmutableBuffer(body)
        } else {
            bytes.writeStaticString("\r\n")
        }
        request = nil
        body = nil
        context.fireChannelRead(wrapInboundOut(bytes))
    }

    private func reset(_ context: ChannelHandlerContext, _ code: HTTP2ErrorCode) {
        forwarded = true
        context.writeAndFlush(wrapOutboundOut(.rstStream(code)), promise: nil)
        context.close(promise: nil)
    }

    /// Fields never forwarded in either direction (RFC 9113 §8.2.2), and those the bridge sets.
    static let dropped: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "content-length"]

    /// The request line and fields of an HTTP/1.1 request, without the blank line; nil when a
    /// pseudo-header is missing or a field could not be written as HTTP/1.1.
    package static func requestHead(_ fields: HPACKHeaders, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard let method = fields.first(name: ":method"), let path = fields.first(name: ":path"),
            isToken(method), isFieldValue(path), !path.utf8.contains(UInt8(ascii: " "))
        else { return nil }
        var head = allocator.buffer(capacity: 256)
        head.writeString("\(method) \(path) HTTP/1.1\r\n")
        let authority = fields.first(name: ":authority")
        if let authority {
            guard isFieldValue(authority) else { return nil }
            head.writeString("Host: \(authority)\r\n")
        }
        for (name, value, _) in fields where !name.hasPrefix(":") {
            if dropped.contains(name) || (authority != nil && name == "host") { continue }
            guard isToken(name), isFieldValue(value) else { return nil }
            head.writeString(name)
            head.writeStaticString(": ")
            head.writeString(value)
            head.writeStaticString("\r\n")
        }
        return head
    }

    static func isToken(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
    }

    /// No CR, LF or NUL (RFC 9113 §8.2.1): a value that would end the line in HTTP/1.1.
    static func isFieldValue(_ s: String) -> Bool {
        !s.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }
}

// MARK: Responses

extension HTTP2StreamBridge {
    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(var bytes) = unwrapOutboundIn(data) else {
            promise?.fail(ChannelError.operationUnsupported)
            return
        }
        switch response {
        case .head(var collected):
            if collected == nil { collected = bytes } else { collected!.writeBuffer(&bytes) }
            writeHead(context, collected!, promise: promise)
        case .body:
            writeBody(context, bytes, promise: promise)
        case .done:
            promise?.succeed(())
        }
    }

    /// Once the head is complete: its HEADERS frame, then any body bytes that came with it.
    private func writeHead(_ context: ChannelHandlerContext, _ collected: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let parsed = ResponseHead.parse(collected) else {
            response = .head(collected)
            promise?.succeed(())
            return
        }
        var rest = collected
        rest.moveReaderIndex(forwardBy: parsed.length)
        if parsed.status < 200 {
            // An interim response: its own HEADERS frame, then the final head.
            response = .head(nil)
            context.write(wrapOutboundOut(.headers(.init(headers: parsed.fields))), promise: nil)
            return rest.readableBytes > 0 ? writeHead(context, rest, promise: promise) : (promise?.succeed(()) ?? ())
        }
        let bodyless = isHead || parsed.status == 204 || parsed.status == 304
        let length = bodyless ? 0 : parsed.contentLength
        let ends = length == 0
        response = ends ? .done : .body(remaining: length ?? Int.max, untilClose: length == nil)
        // The caller's promise goes with the last frame this write makes.
        let bodyFollows = !ends && rest.readableBytes > 0
        context.write(wrapOutboundOut(.headers(.init(headers: parsed.fields, endStream: ends))), promise: bodyFollows ? nil : promise)
        if bodyFollows { writeBody(context, rest, promise: promise) }
    }

    private func writeBody(_ context: ChannelHandlerContext, _ bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard case .body(let remaining, let untilClose) = response else { return (promise?.succeed(()) ?? ()) }
        let count = min(remaining, bytes.readableBytes)
        let slice = bytes.getSlice(at: bytes.readerIndex, length: count)!
        let ends = !untilClose && count == remaining
        response = ends ? .done : .body(remaining: untilClose ? remaining : remaining - count, untilClose: untilClose)
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(slice), endStream: ends))), promise: promise)
    }

    /// The handler closes its "connection" after a response that ends it (405, 408, a drain):
    /// for a stream whose response is complete, that is already done by END_STREAM, and
    /// closing the stream channel too would reset it (RST_STREAM CANCEL), which clients such as
    /// AsyncHTTPClient report as a failure. Only an unfinished response resets the stream.
    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        switch response {
        case .body(_, true):
            // A body without a length ends when the handler closes.
            response = .done
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true))), promise: promise)
        case .done:
            context.flush()
            promise?.succeed(())
        case .head, .body:
            context.close(mode: mode, promise: promise)
        }
    }
}

/// The head of an HTTP/1.1 response written by the edge's handlers, as HTTP/2 fields.
package struct ResponseHead {
    package var status: Int
    /// `:status` first, then the regular fields.
    package var fields: HPACKHeaders
    package var contentLength: Int?
    /// The bytes of the head, blank line included.
    package var length: Int

    /// nil until the blank line that ends the head is in `bytes`. Read as bytes, line by line:
    /// names are lowered into short (inline) strings, values copied once.
    package static func parse(_ bytes: ByteBuffer) -> ResponseHead? {
        bytes.withUnsafeReadableBytes { raw -> ResponseHead? in
            guard let end = headEnd(raw), end >= 12, let status = statusCode(raw) else { return nil }
            var head = ResponseHead(status: status, fields: HPACKHeaders(), contentLength: nil, length: end + 4)
            head.fields.reserveCapacity(16)
            head.fields.add(name: ":status", value: String(status))
            var line = lineEnd(raw, from: 0, limit: end) + 2
            while line < end {
                let next = lineEnd(raw, from: line, limit: end)
                head.addField(UnsafeRawBufferPointer(rebasing: raw[line..<next]))
                line = next + 2
            }
            return head
        }
    }

    /// The three digits after `HTTP/1.1 `.
    private static func statusCode(_ raw: UnsafeRawBufferPointer) -> Int? {
        var code = 0
        for i in 9..<12 {
            guard (0x30...0x39).contains(raw[i]) else { return nil }
            code = code * 10 + Int(raw[i] - 0x30)
        }
        return code
    }

    /// The offset of the CR that ends the line starting at `from` (or `limit`).
    private static func lineEnd(_ raw: UnsafeRawBufferPointer, from: Int, limit: Int) -> Int {
        var i = from
        while i < limit, raw[i] != 0x0D { i += 1 }
        return i
    }

    /// One `Name: value` line as a field: the name in lower case, the value without leading
    /// blanks; connection-specific fields dropped, Content-Length noted.
    private mutating func addField(_ line: UnsafeRawBufferPointer) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = String(unsafeUninitializedCapacity: colon) { out in
            for i in 0..<colon { out[i] = line[i] | (line[i] >= 0x41 && line[i] <= 0x5A ? 0x20 : 0) }
            return colon
        }
        var start = colon + 1
        while start < line.count, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[start...]), as: UTF8.self)
        if name == "content-length" {
            contentLength = Int(value)
        } else if HTTP2StreamBridge.dropped.contains(name) {
            return
        }
        fields.add(name: name, value: value)
    }

    /// The offset of the `\r\n\r\n` that ends a head.
    private static func headEnd(_ raw: UnsafeRawBufferPointer) -> Int? {
        guard raw.count >= 4 else { return nil }
        for i in 0...(raw.count - 4) where raw[i] == 0x0D && raw[i + 1] == 0x0A && raw[i + 2] == 0x0D && raw[i + 3] == 0x0A {
            return i
        }
        return nil
    }
}
