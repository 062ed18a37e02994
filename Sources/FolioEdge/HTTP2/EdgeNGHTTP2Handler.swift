import CNghttp2
import FolioHTTPCore
import Foundation
import NIOCore

/// What answers the streams of an `EdgeNGHTTP2Handler`: the origin's site
/// (`OriginStreamResponder`) or the tier's cache (`TierStreamResponder`).
protocol NGHTTP2StreamResponder: AnyObject {
    /// Whether a request's body is kept for `answer` (the tier forwards it; the origin serves
    /// GET and HEAD only and counts it against the limit alone).
    var keepsRequestBodies: Bool { get }

    /// A complete request on stream `id`: its head in HTTP/1.1 form, blank line included, and
    /// its body when kept. The answer is submitted on `connection`, now or later on its loop.
    func answer(_ id: Int32, head: ByteBuffer, body: ByteBuffer?, on connection: EdgeNGHTTP2Handler)
}

/// Serves an HTTP/2 connection, in either mode, with libnghttp2 as its frame layer: the
/// connection's decrypted bytes go to an `nghttp2_session` (`nghttp2_session_mem_recv`), which
/// parses frames, decodes HPACK, keeps the stream states, flow control and SETTINGS, and answers
/// PING; what it has to send (`nghttp2_session_mem_send`) is written after each read. Each
/// stream's request is written as an HTTP/1.1 head (`NGHTTP2Requests.swift`) and answered by the
/// mode's `NGHTTP2StreamResponder`, which submits fields and a body (`NGHTTP2Responses.swift`).
///
/// Defences: the floods swift-nio-http2 refused before (rapid reset, CONTINUATION, PING,
/// SETTINGS, PRIORITY, empty DATA) are found by `HTTP2FloodGuard` on the frame headers and end
/// the connection with GOAWAY ENHANCE_YOUR_CALM; a header list over `--max-header-bytes` with
/// GOAWAY COMPRESSION_ERROR; a field nghttp2 finds malformed (CR, LF, NUL, upper case, a
/// connection-specific field) resets its stream with PROTOCOL_ERROR. A connection error ends
/// by `LingeringClose`; a connection with no open stream for the request timeout is closed;
/// on drain the first GOAWAY names the highest stream and, after a grace, the final one the
/// last stream taken.
final class EdgeNGHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let responder: any NGHTTP2StreamResponder
    let maxHeaderBytes: Int
    private let timeout: TimeAmount

    private(set) var session: OpaquePointer?
    private(set) var context: ChannelHandlerContext?
    private var flood = HTTP2FloodGuard()
    /// Set once the connection is ending: nothing more is read into the session.
    var stopped = false
    private var draining = false
    /// The drain's second GOAWAY is out: the connection closes once no stream is left.
    private var finalGoAwaySent = false
    private var lastActivity = NIODeadline.now()
    private var timer: RepeatedTask?

    /// A stream whose request is being read or answered.
    struct Stream {
        /// The request line and fields in HTTP/1.1 form, the blank line included once the
        /// header block has ended (kept only for a request with a body).
        var head: ByteBuffer
        var headerBytes = 0
        var lineWritten = false
        /// A field could not be written as HTTP/1.1: the stream is reset (PROTOCOL_ERROR).
        var invalid = false
        var body = 0
        /// The request body, when the responder keeps it.
        var requestBody: ByteBuffer?
        /// The response body still to send.
        var response: ByteBuffer?
        /// The body is being read from disk.
        var waiting = false
    }
    var streams: [Int32: Stream] = [:]
    /// The stream whose request header block is being read (blocks are never interleaved).
    var currentID: Int32 = 0
    /// The highest stream identifier a request has opened.
    var highestRequestID: Int32 = 0
    var current = Stream(head: ByteBuffer())
    /// Shared by every stream that keeps no head.
    let empty = ByteBuffer()
    /// The pseudo-header fields of the header block being read: offsets in `pseudo`.
    var pseudo = ByteBuffer()
    var method: Range<Int>?
    var path: Range<Int>?
    var authority: Range<Int>?
    /// The response fields as bytes, and their spans, reused for every response.
    var nvBytes = ByteBuffer()
    var nvSpans: [(name: Range<Int>, value: Range<Int>)] = []
    var nv: [nghttp2_nv] = []

    init(responder: any NGHTTP2StreamResponder, limits: ConnectionLimits) {
        self.responder = responder
        maxHeaderBytes = limits.maxHeaderBytes
        timeout = limits.requestTimeout
        nvSpans.reserveCapacity(24)
        nv.reserveCapacity(24)
    }

    // MARK: The session

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        session = Self.makeSession(self, maxHeaderBytes: maxHeaderBytes)
        guard session != nil else { return context.close(promise: nil) }  // out of memory
        pseudo = context.channel.allocator.buffer(capacity: 512)
        nvBytes = context.channel.allocator.buffer(capacity: 1024)
        // The server's SETTINGS go out at once, as swift-nio-http2 sent them.
        flushOutput()
        let check = min(timeout, .seconds(1))
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: check, delay: check) { _ in
            let handler = bound.value
            if handler.streams.isEmpty, NIODeadline.now() - handler.lastActivity > handler.timeout { handler.context?.close(promise: nil) }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let session { nghttp2_session_del(session) }
        session = nil
        self.context = nil
        streams = [:]
    }

    /// Initial SETTINGS: 128 concurrent streams (nginx's default), the header list limit, and
    /// 1 MiB windows (the stream's and, by WINDOW_UPDATE, the connection's).
    private static func makeSession(_ handler: EdgeNGHTTP2Handler, maxHeaderBytes: Int) -> OpaquePointer? {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return nil }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks) { _, header, user in
            guard let header, let user, header.pointee.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            return Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue().beginHeadersFrame(header.pointee.stream_id)
        }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            return Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue().beginHeaders(frame)
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let user, let name, let value else { return 0 }
            return Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue().header(
                frame, UnsafeRawBufferPointer(start: name, count: nameLength), UnsafeRawBufferPointer(start: value, count: valueLength))
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            return Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue().frameReceived(frame)
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, user in
            guard let user else { return 0 }
            return Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue().dataReceived(stream, UnsafeRawBufferPointer(start: data, count: length))
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, _, user in
            guard let user else { return 0 }
            let handler = Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue()
            handler.streams[stream] = nil
            handler.lastActivity = .now()
            return 0
        }
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else { return nil }
        defer { nghttp2_option_del(option) }
        // nghttp2's own rapid-reset limit stays as a backstop behind HTTP2FloodGuard's (which
        // answers first, with ENHANCE_YOUR_CALM): 1,000 resets, then 33 a second.
        nghttp2_option_set_stream_reset_rate_limit(option, 1000, 33)
        var session: OpaquePointer?
        guard nghttp2_session_server_new2(&session, callbacks, Unmanaged.passUnretained(handler).toOpaque(), option) == 0, let session else {
            return nil
        }
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: UInt32(HTTP2Limits.maxConcurrentStreams)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: UInt32(maxHeaderBytes)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 1 << 20)
        return session
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !stopped, let session else { return }
        let bytes = unwrapInboundIn(data)
        lastActivity = .now()
        let (accepted, found) = bytes.withUnsafeReadableBytes { raw -> (Int, HTTP2FloodGuard.Flood?) in
            guard let base = raw.baseAddress else { return (0, nil) }
            let (accepted, found) = flood.scan(raw, now: .now())
            let read = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), accepted)
            return (read < 0 ? -1 : accepted, found)
        }
        if found != nil {
            nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
            stopped = true
        } else if accepted < 0 {
            // A fatal error (the connection preface, a callback's failure): GOAWAY
            // PROTOCOL_ERROR, unless the session already sent its own.
            nghttp2_session_terminate_session(session, NGHTTP2_PROTOCOL_ERROR.rawValue)
            stopped = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushOutput()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent, let session, !draining else { return context.fireUserInboundEventTriggered(event) }
        // RFC 9113 §6.8: a first GOAWAY naming the highest stream, so that requests already
        // on their way are still taken; after the grace, the one naming the last stream taken.
        draining = true
        nghttp2_submit_shutdown_notice(session)
        flushOutput()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: HTTP2ConnectionGuard.drainGrace) {
            let handler = bound.value
            guard let session = handler.session else { return }
            nghttp2_submit_goaway(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session), NGHTTP2_NO_ERROR.rawValue, nil, 0)
            handler.finalGoAwaySent = true
            handler.flushOutput()
        }
    }

    /// Writes what the session has to send; then ends the connection when the session is done
    /// (after GOAWAY), or, when draining, once no stream is left.
    func flushOutput() {
        guard let session, let context else { return }
        var out: ByteBuffer?
        while true {
            var pointer: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &pointer)
            guard count > 0, let pointer else {
                if count < 0 { stopped = true }
                break
            }
            if out == nil { out = context.channel.allocator.buffer(capacity: max(count, 16 * 1024)) }
            out!.writeBytes(UnsafeRawBufferPointer(start: pointer, count: count))
        }
        if let out { context.writeAndFlush(wrapOutboundOut(out), promise: nil) }
        if stopped || (nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0) {
            stopped = true
            linger(context)
        } else if finalGoAwaySent && streams.isEmpty && nghttp2_session_want_write(session) == 0 {
            context.close(promise: nil)
        }
    }

    private var lingering = false

    /// A connection error: the GOAWAY is written; the connection ends by `LingeringClose`, once
    /// the client has stopped sending (at once when the pipeline has none).
    private func linger(_ context: ChannelHandlerContext) {
        guard !lingering else { return }
        lingering = true
        let linger = context.eventLoop.makePromise(of: Void.self)
        linger.futureResult.assumeIsolated().whenFailure { _ in context.close(promise: nil) }
        context.triggerUserOutboundEvent(LingeringClose.Begin(), promise: linger)
    }


    func reset(_ id: Int32, _ code: nghttp2_error_code) {
        streams[id] = nil
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, code.rawValue)
    }

}
