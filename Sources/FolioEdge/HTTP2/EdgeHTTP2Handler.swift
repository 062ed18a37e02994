import FolioHTTPCore
import FolioSupport
import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix

/// Serves an origin's HTTP/2 connection on the connection's channel itself, after
/// swift-nio-http2's handler: each stream's request is answered by the same `EdgeResponder`
/// as HTTP/1.1 and written as HEADERS and DATA frames, with no channel, pipeline or HTTP/1.1
/// round trip per stream.
///
/// A request's fields become HTTP/1.1 head bytes (`HTTP2StreamBridge.requestHead`: a field
/// that could not be written as HTTP/1.1 resets the stream) and are read by the HTTP/1.1
/// parser, so both protocols share its limits and its view of a request. A request body is
/// not used (only GET and HEAD are served); one past 1 MiB resets the stream.
final class EdgeHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let requests: OriginStreamRequests
    /// Streams whose request head has arrived, and the body bytes seen so far.
    private var open: [HTTP2StreamID: (head: ByteBuffer, body: Int)] = [:]

    init(
        store: SiteStore, limits: ConnectionLimits, metrics: EdgeMetrics, accessLog: AccessLogSink?, fileIO: NIOThreadPool,
        extraLines: String, role: ListenerRole
    ) {
        requests = OriginStreamRequests(
            store: store, limits: limits, metrics: metrics, accessLog: accessLog, fileIO: fileIO, extraLines: extraLines, role: role)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            if open[id] == nil {
                guard let head = HTTP2StreamBridge.requestHead(headers.headers, allocator: context.channel.allocator) else {
                    return reset(context, id, .protocolError)
                }
                open[id] = (head, 0)
            }  // A second HEADERS block is trailers: not used.
            if headers.endStream { answer(context, id) }
        case .data(let data):
            guard let stream = open[id] else { return }
            let body = stream.body + data.data.readableBytes
            guard body <= HTTP2StreamBridge.maxRequestBody else { return reset(context, id, .refusedStream) }
            open[id]?.body = body
            if data.endStream { answer(context, id) }
        case .rstStream:
            open[id] = nil
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent { open[closed.streamID] = nil }
        context.fireUserInboundEventTriggered(event)
    }

    private func reset(_ context: ChannelHandlerContext, _ id: HTTP2StreamID, _ code: HTTP2ErrorCode) {
        open[id] = nil
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(code))), promise: nil)
    }

    /// Answers a complete request (`OriginStreamRequests`), written as frames.
    private func answer(_ context: ChannelHandlerContext, _ id: HTTP2StreamID) {
        guard var head = open.removeValue(forKey: id)?.head else { return }
        head.writeStaticString("\r\n")
        requests.answer(head, context.channel) { answer, withBody in
            write(answer, id, withBody: withBody, context)
        } fromDisk: { answer, request, start, details in
            readFromDisk(answer, id, request: request, start: start, details: details, context)
        }
    }

    // MARK: Writing

    /// Writes the answer's HEADERS and, unless the request was a HEAD, its DATA; returns the
    /// body bytes sent, or -1 when the body must be read from disk first (the HEADERS are written).
    private func write(_ answer: EdgeAnswer, _ id: HTTP2StreamID, withBody: Bool, _ context: ChannelHandlerContext) -> Int {
        switch answer {
        case .simple(let s):
            let sendBody = withBody && !s.omitBody
            var fields = head("\(s.status)", count: 4 + s.extra.count)
            fields.add(name: "content-type", value: s.contentType)
            fields.add(name: "content-length", value: "\(s.body.utf8.count)")
            fields.add(name: "cache-control", value: "no-store")
            for (name, value) in s.extra { fields.add(name: name.lowercased(), value: value) }
            writeHeaders(context, id, fields, end: !sendBody)
            if sendBody { writeData(context, id, ByteBuffer(string: s.body)) }
            return sendBody ? s.body.utf8.count : 0
        case .notModified(let rep):
            writeHeaders(context, id, head("304", rep.fields304), end: true)
            return 0
        case .full(let rep):
            var fields = head("200", rep.fields)
            fields.add(name: "content-length", value: "\(rep.length)")
            writeHeaders(context, id, fields, end: !withBody)
            return withBody ? writeBody(context, id, rep, range: nil) : 0
        case .partial(let rep, let r):
            var fields = head("206", rep.fields)
            fields.add(name: "content-range", value: "bytes \(r.lowerBound)-\(r.upperBound)/\(rep.length)")
            fields.add(name: "content-length", value: "\(r.count)")
            writeHeaders(context, id, fields, end: false)
            return writeBody(context, id, rep, range: r)
        }
    }

    /// `:status`, then `fields`, the Date and the listener's fields (room for `count` more).
    private func head(_ status: String, _ fields: [(String, String)] = [], count: Int = 2) -> HPACKHeaders {
        var h = HPACKHeaders()
        h.reserveCapacity(fields.count + requests.extraFields.count + count + 2)
        h.add(name: ":status", value: status)
        for (name, value) in fields { h.add(name: name, value: value) }
        h.add(name: "date", value: requests.date)
        for (name, value) in requests.extraFields { h.add(name: name, value: value) }
        return h
    }

    private func writeHeaders(_ context: ChannelHandlerContext, _ id: HTTP2StreamID, _ fields: HPACKHeaders, end: Bool) {
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: fields, endStream: end)))), promise: nil)
    }

    private func writeData(_ context: ChannelHandlerContext, _ id: HTTP2StreamID, _ bytes: ByteBuffer) {
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(bytes), endStream: true)))), promise: nil)
    }

    /// The body from memory (its bytes sent), or -1 when it is on disk.
    private func writeBody(_ context: ChannelHandlerContext, _ id: HTTP2StreamID, _ rep: Representation, range: ClosedRange<Int>?) -> Int {
        guard let body = rep.body else { return -1 }
        let slice = range.map { body.getSlice(at: body.readerIndex + $0.lowerBound, length: $0.count)! } ?? body
        writeData(context, id, slice)
        return slice.readableBytes
    }

    /// Over the memory budget: the body is read on the thread pool, then sent; a file that
    /// cannot be read (or changed size) resets the stream.
    private func readFromDisk(
        _ answer: EdgeAnswer, _ id: HTTP2StreamID, request: ParsedRequest, start: NIODeadline, details: RequestDetails?, _ context: ChannelHandlerContext
    ) {
        guard let read = requests.readBody(answer, on: context.eventLoop, allocator: context.channel.allocator) else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        read.whenSuccess { body in
            let (handler, context) = bound.value
            guard let body else {
                handler.reset(context, id, .internalError)
                handler.requests.record(request.method.name, request.target.string, 500, 0, start, details)
                return
            }
            handler.writeData(context, id, body)
            context.flush()
            handler.requests.record(request.method.name, request.target.string, answer.status, body.readableBytes, start, details)
        }
    }
}
