import CNghttp2
import FolioHTTPCore
import FolioSupport
import Foundation
import Logging
import NIOCore
import NIOPosix

/// Serves an origin's HTTP/2 connection with libnghttp2 as its frame layer: the connection's
/// decrypted bytes go to an `nghttp2_session` (`nghttp2_session_mem_recv`), which parses frames,
/// decodes HPACK, keeps the stream states, flow control and SETTINGS, and answers PING; what it
/// has to send (`nghttp2_session_mem_send`) is written after each read. Each stream's request
/// is answered by the same `EdgeResponder` as HTTP/1.1, its fields read as HTTP/1.1 head bytes
/// by the shared parser (so both protocols share its limits and its view of a request).
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

    private var responder: EdgeResponder
    private let parser: HTTPRequestParser
    private let recorder: RequestRecorder
    private let fileIO: NIOThreadPool
    private let maxHeaderBytes: Int
    private let timeout: TimeAmount
    /// Fields sent on every response of this listener (`strict-transport-security`).
    private let extraFields: [(String, String)]

    private var session: OpaquePointer?
    private var context: ChannelHandlerContext?
    private var flood = HTTP2FloodGuard()
    /// Set once the connection is ending: nothing more is read into the session.
    private var stopped = false
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
        /// The response body still to send.
        var response: ByteBuffer?
        /// The body is being read from disk.
        var waiting = false
    }
    private var streams: [Int32: Stream] = [:]
    /// The stream whose request header block is being read (blocks are never interleaved).
    private var currentID: Int32 = 0
    /// The highest stream identifier a request has opened.
    private var highestRequestID: Int32 = 0
    private var current = Stream(head: ByteBuffer())
    /// Shared by every stream that keeps no head.
    private let empty = ByteBuffer()
    /// The pseudo-header fields of the header block being read: offsets in `pseudo`.
    private var pseudo = ByteBuffer()
    private var method: Range<Int>?
    private var path: Range<Int>?
    private var authority: Range<Int>?
    /// The response fields as bytes, and their spans, reused for every response.
    private var nvBytes = ByteBuffer()
    private var nvSpans: [(name: Range<Int>, value: Range<Int>)] = []
    private var nv: [nghttp2_nv] = []

    private var requestNumber = 0
    /// The client's address, read for the access log when its format wants it.
    private var clientAddress: String?
    private var dateSecond = -1
    private var date = ""

    init(
        store: SiteStore, limits: ConnectionLimits, metrics: EdgeMetrics, accessLog: AccessLogSink?, fileIO: NIOThreadPool,
        extraLines: String, role: ListenerRole
    ) {
        responder = EdgeResponder(store: store, role: role, metrics: metrics)
        parser = HTTPRequestParser(maxTargetBytes: limits.maxURIBytes, maxHeadBytes: limits.maxHeaderBytes, maxHeaderCount: limits.maxHeaderCount)
        recorder = RequestRecorder(metrics: metrics, accessLog: accessLog)
        self.fileIO = fileIO
        maxHeaderBytes = limits.maxHeaderBytes
        timeout = limits.requestTimeout
        extraFields = HeaderLines.fields(extraLines)
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
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, _, length, user in
            guard let user else { return 0 }
            return Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue().dataReceived(stream, length)
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
    private func flushOutput() {
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

    // MARK: Requests

    /// RFC 9113 §5.1.1: a HEADERS frame on a client stream identifier below the highest one
    /// opened, of a stream that is not open (never used, so closed when a higher one was
    /// opened), is a connection error PROTOCOL_ERROR. (libnghttp2 ignores the block, so that
    /// trailers racing a RST_STREAM it sent do not end the connection; this edge resets a
    /// stream only for a malformed or oversized request, after which no trailers are due.)
    private func beginHeadersFrame(_ id: Int32) -> Int32 {
        if id & 1 == 1, id < highestRequestID, let session, nghttp2_session_find_stream(session, id) == nil {
            nghttp2_session_terminate_session(session, NGHTTP2_PROTOCOL_ERROR.rawValue)
            stopped = true
        }
        return 0
    }

    private func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        guard frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        currentID = frame.pointee.hd.stream_id
        highestRequestID = max(highestRequestID, currentID)
        // One buffer for every header block of the connection: a request that ends with its
        // HEADERS (a GET, a HEAD) is answered from it; one with a body keeps a copy.
        var head = current.head
        current = Stream(head: empty)
        head.clear()
        current.head = head
        pseudo.clear()
        method = nil
        path = nil
        authority = nil
        return 0
    }

    private static let temporalFailure = NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue

    private func header(_ frame: UnsafePointer<nghttp2_frame>, _ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Int32 {
        guard frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }  // trailers: not used
        guard frame.pointee.hd.stream_id == currentID, currentID != 0 else { return 0 }
        // RFC 9113 §6.5.2's size: name, value and 32 bytes each.
        current.headerBytes += name.count + value.count + 32
        if current.headerBytes > maxHeaderBytes {
            currentID = 0
            nghttp2_session_terminate_session(session, NGHTTP2_COMPRESSION_ERROR.rawValue)
            stopped = true
            return Self.temporalFailure
        }
        if name.first == UInt8(ascii: ":") {
            let start = pseudo.writerIndex
            pseudo.writeBytes(value)
            let range = start..<pseudo.writerIndex
            switch name.count {
            case 5 where Self.equal(name, ":path"): path = range
            case 7 where Self.equal(name, ":method"): method = range
            case 10 where Self.equal(name, ":authority"): authority = range
            default: break
            }
            return 0
        }
        // A regular field before :method and :path: nghttp2 resets the stream when it sees a
        // pseudo-header field after it, or none; this handler skips the rest of the block.
        guard !current.invalid else { return 0 }
        guard current.lineWritten || writeRequestLine(&current) else {
            current.invalid = true
            return 0
        }
        // Fields never passed on (RFC 9113 §8.2.2), and Host when :authority gave it.
        if Self.isDropped(name) || (authority != nil && name.count == 4 && Self.equal(name, "host")) { return 0 }
        guard Self.isFieldValue(value) else {
            current.invalid = true
            return 0
        }
        current.head.writeBytes(name)
        current.head.writeStaticString(": ")
        current.head.writeBytes(value)
        current.head.writeStaticString("\r\n")
        return 0
    }

    /// `METHOD path HTTP/1.1` and Host from the pseudo-header fields; false (the stream is
    /// reset) when one is missing or could not be written as HTTP/1.1.
    private func writeRequestLine(_ stream: inout Stream) -> Bool {
        guard let method, let path else { return false }
        let ok = pseudo.withUnsafeReadableBytes { raw -> Bool in
            let m = UnsafeRawBufferPointer(rebasing: raw[method]), p = UnsafeRawBufferPointer(rebasing: raw[path])
            guard !m.isEmpty, !p.isEmpty, Self.isFieldValue(m), Self.isFieldValue(p), !m.contains(0x20), !p.contains(0x20) else { return false }
            stream.head.writeBytes(m)
            stream.head.writeStaticString(" ")
            stream.head.writeBytes(p)
            stream.head.writeStaticString(" HTTP/1.1\r\n")
            if let authority {
                let a = UnsafeRawBufferPointer(rebasing: raw[authority])
                guard Self.isFieldValue(a) else { return false }
                stream.head.writeStaticString("Host: ")
                stream.head.writeBytes(a)
                stream.head.writeStaticString("\r\n")
            }
            return true
        }
        stream.lineWritten = ok
        return ok
    }

    private func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        let hd = frame.pointee.hd
        let endStream = hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            guard frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else {
                // Trailers: not used, but their END_STREAM ends the request.
                if endStream, let head = streams[hd.stream_id]?.head { answer(hd.stream_id, head) }
                break
            }
            guard hd.stream_id == currentID else { break }
            currentID = 0
            guard !current.invalid, current.lineWritten || writeRequestLine(&current) else {
                reset(hd.stream_id, NGHTTP2_PROTOCOL_ERROR)
                break
            }
            current.head.writeStaticString("\r\n")
            if endStream {
                streams[hd.stream_id] = Stream(head: empty)
                answer(hd.stream_id, current.head)
            } else {
                var stream = current
                stream.head = current.head
                streams[hd.stream_id] = stream
            }
        case NGHTTP2_DATA.rawValue:
            if endStream, let head = streams[hd.stream_id]?.head { answer(hd.stream_id, head) }
        default:
            break
        }
        return 0
    }

    /// A request body is not used (only GET and HEAD are served); one past 1 MiB resets the stream.
    private func dataReceived(_ id: Int32, _ length: Int) -> Int32 {
        guard let body = streams[id]?.body else { return 0 }
        guard body + length <= HTTP2StreamBridge.maxRequestBody else {
            reset(id, NGHTTP2_REFUSED_STREAM)
            return 0
        }
        streams[id]?.body = body + length
        return 0
    }

    private func reset(_ id: Int32, _ code: nghttp2_error_code) {
        streams[id] = nil
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, code.rawValue)
    }

    /// Answers a complete request: parsed as HTTP/1.1, routed by the responder, submitted.
    private func answer(_ id: Int32, _ head: ByteBuffer) {
        guard let context else { return }
        requestNumber += 1
        let start = NIODeadline.now()
        head.withUnsafeReadableBytes { bytes in
            let details = recorder.wantsDetails ? self.details(bytes, context) : nil
            switch parser.parse(bytes) {
            case .request(let request, _):
                let answer = responder.answer(request).answer
                let sent = submit(answer, id, withBody: request.method != .head)
                if sent >= 0 { record(request.method.name, request.target.string, answer.status, sent, start, details) }
                if sent < 0 { readFromDisk(answer, id, request: request.owned(), start: start, details: details, context) }
            case .failure(let error):
                let answer = EdgeAnswer.simple(SimpleAnswer(status: error.status, reason: error.reason, body: error.message + "\n"))
                record("-", "-", error.status, submit(answer, id, withBody: true), start, details)
            case .incomplete:
                let answer = EdgeAnswer.simple(SimpleAnswer(status: 400, reason: "Bad Request", body: "incomplete request head\n"))
                record("-", "-", 400, submit(answer, id, withBody: true), start, details)
            }
        }
    }

    /// The access log's details of a stream's request (its head in HTTP/1.1 form).
    private func details(_ head: UnsafeRawBufferPointer, _ context: ChannelHandlerContext) -> RequestDetails {
        if clientAddress == nil { clientAddress = context.channel.remoteAddressForLog }
        return RequestDetails(head: head, remoteAddress: clientAddress ?? "-", protocolName: "HTTP/2.0")
    }

    private func record(
        _ method: String, _ target: @autoclosure () -> String, _ status: Int, _ bytes: Int, _ start: NIODeadline, _ details: RequestDetails?
    ) {
        recorder.record(requestNumber, method: method, target: target(), status: status, bytes: max(bytes, 0), since: start, details: details)
    }

    // MARK: Responses

    /// Submits the answer's HEADERS and, unless the request was a HEAD, its body; returns the
    /// body bytes sent, or -1 when the body must be read from disk first (the HEADERS are
    /// submitted, the DATA deferred).
    private func submit(_ answer: EdgeAnswer, _ id: Int32, withBody: Bool) -> Int {
        beginFields()
        switch answer {
        case .simple(let s):
            let sendBody = withBody && !s.omitBody
            let body = ByteBuffer(string: s.body)
            status(s.status)
            field("content-type", s.contentType)
            field("content-length", s.body.utf8.count)
            field("cache-control", "no-store")
            for (name, value) in s.extra { field(name, value, lower: true) }
            commonFields()
            send(id, body: sendBody ? body : nil)
            return sendBody ? body.readableBytes : 0
        case .notModified(let rep):
            status(304)
            for (name, value) in rep.fields304 { field(name, value) }
            commonFields()
            send(id, body: nil)
            return 0
        case .full(let rep):
            status(200)
            for (name, value) in rep.fields { field(name, value) }
            field("content-length", rep.length)
            commonFields()
            guard withBody else {
                send(id, body: nil)
                return 0
            }
            send(id, body: rep.body, waiting: rep.body == nil)
            return rep.body?.readableBytes ?? -1
        case .partial(let rep, let r):
            status(206)
            for (name, value) in rep.fields { field(name, value) }
            field("content-range", "bytes \(r.lowerBound)-\(r.upperBound)/\(rep.length)")
            field("content-length", r.count)
            commonFields()
            let slice = rep.body.map { $0.getSlice(at: $0.readerIndex + r.lowerBound, length: r.count)! }
            send(id, body: slice, waiting: slice == nil)
            return slice?.readableBytes ?? -1
        }
    }

    private func beginFields() {
        nvBytes.clear()
        nvSpans.removeAll(keepingCapacity: true)
    }

    private func status(_ code: Int) {
        let start = nvBytes.writerIndex
        nvBytes.writeStaticString(":status")
        let name = start..<nvBytes.writerIndex
        nvBytes.writeInteger(UInt8(ascii: "0") + UInt8(code / 100 % 10))
        nvBytes.writeInteger(UInt8(ascii: "0") + UInt8(code / 10 % 10))
        nvBytes.writeInteger(UInt8(ascii: "0") + UInt8(code % 10))
        nvSpans.append((name, name.upperBound..<nvBytes.writerIndex))
    }

    private func field(_ name: String, _ value: String, lower: Bool = false) {
        let start = nvBytes.writerIndex
        nvBytes.writeString(name)
        if lower {
            for i in start..<nvBytes.writerIndex {
                let b = nvBytes.getInteger(at: i, as: UInt8.self)!
                if b >= 0x41 && b <= 0x5A { nvBytes.setInteger(b | 0x20, at: i) }
            }
        }
        let nameEnd = nvBytes.writerIndex
        nvBytes.writeString(value)
        nvSpans.append((start..<nameEnd, nameEnd..<nvBytes.writerIndex))
    }

    private func field(_ name: StaticString, _ value: Int) {
        let start = nvBytes.writerIndex
        nvBytes.writeStaticString(name)
        let nameEnd = nvBytes.writerIndex
        var digits = value == 0 ? 1 : 0
        var v = value
        while v > 0 {
            digits += 1
            v /= 10
        }
        nvBytes.writeRepeatingByte(0, count: digits)
        v = value
        for i in stride(from: nvBytes.writerIndex - 1, through: nameEnd, by: -1) {
            nvBytes.setInteger(UInt8(ascii: "0") + UInt8(v % 10), at: i)
            v /= 10
        }
        nvSpans.append((start..<nameEnd, nameEnd..<nvBytes.writerIndex))
    }

    /// The Date and the listener's own fields.
    private func commonFields() {
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            date = HTTPDate.format(Int64(now))
        }
        field("date", date)
        for (name, value) in extraFields { field(name, value) }
    }

    /// Submits the fields gathered, and a body (or one read later, when `waiting`).
    private func send(_ id: Int32, body: ByteBuffer?, waiting: Bool = false) {
        guard let session else { return }
        let hasBody = waiting || (body.map { $0.readableBytes > 0 } ?? false)
        if hasBody {
            streams[id]?.response = body
            streams[id]?.waiting = waiting
        }
        let base = nvBytes.readerIndex
        nvBytes.withUnsafeMutableReadableBytes { raw in
            let pointer = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            nv.removeAll(keepingCapacity: true)
            for (name, value) in nvSpans {
                nv.append(
                    nghttp2_nv(
                        name: pointer + (name.lowerBound - base), value: pointer + (value.lowerBound - base),
                        namelen: name.count, valuelen: value.count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            if hasBody {
                var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil)) { _, id, buffer, length, flags, _, user in
                    guard let user, let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
                    let handler = Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue()
                    return handler.readBody(id, UnsafeMutableRawBufferPointer(start: buffer, count: length), flags)
                }
                nghttp2_submit_response(session, id, nv, nv.count, &provider)
            } else {
                nghttp2_submit_response(session, id, nv, nv.count, nil)
            }
        }
    }

    private func readBody(_ id: Int32, _ buffer: UnsafeMutableRawBufferPointer, _ flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard var stream = streams.removeValue(forKey: id) else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        defer { streams[id] = stream }
        if stream.waiting { return Int(NGHTTP2_ERR_DEFERRED.rawValue) }
        guard var body = stream.response else {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            return 0
        }
        let count = min(buffer.count, body.readableBytes)
        body.withUnsafeReadableBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]).copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        body.moveReaderIndex(forwardBy: count)
        if body.readableBytes == 0 {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            stream.response = nil
        } else {
            stream.response = body
        }
        return count
    }

    /// Over the memory budget: the body is read on the thread pool, then sent; a file that
    /// cannot be read (or changed size) resets the stream.
    private func readFromDisk(
        _ answer: EdgeAnswer, _ id: Int32, request: ParsedRequest, start: NIODeadline, details: RequestDetails?, _ context: ChannelHandlerContext
    ) {
        let (rep, range): (Representation, ClosedRange<Int>?)
        switch answer {
        case .full(let r): (rep, range) = (r, nil)
        case .partial(let r, let part): (rep, range) = (r, part)
        default: return
        }
        guard let path = rep.filePath else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let allocator = context.channel.allocator
        fileIO.runIfActive(eventLoop: context.eventLoop) { try FileIO.read(path) }.whenComplete { result in
            let handler = bound.value
            guard let session = handler.session, handler.streams[id] != nil else { return }
            guard case .success(let bytes) = result, bytes.count == rep.length else {
                handler.reset(id, NGHTTP2_INTERNAL_ERROR)
                handler.record(request.method.name, request.target.string, 500, 0, start, details)
                handler.flushOutput()
                return
            }
            var buffer = allocator.buffer(capacity: range?.count ?? bytes.count)
            if let range { buffer.writeBytes(bytes[range]) } else { buffer.writeBytes(bytes) }
            handler.streams[id]?.response = buffer
            handler.streams[id]?.waiting = false
            nghttp2_session_resume_data(session, id)
            handler.flushOutput()
            handler.record(request.method.name, request.target.string, answer.status, buffer.readableBytes, start, details)
        }
    }

    // MARK: Bytes

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ s: StaticString) -> Bool {
        guard bytes.count == s.utf8CodeUnitCount else { return false }
        return memcmp(bytes.baseAddress!, s.utf8Start, bytes.count) == 0
    }

    /// connection, keep-alive, proxy-connection, transfer-encoding, upgrade, te, content-length.
    private static func isDropped(_ name: UnsafeRawBufferPointer) -> Bool {
        switch name.count {
        case 2: equal(name, "te")
        case 7: equal(name, "upgrade")
        case 10: equal(name, "connection") || equal(name, "keep-alive")
        case 14: equal(name, "content-length")
        case 16: equal(name, "proxy-connection")
        case 17: equal(name, "transfer-encoding")
        default: false
        }
    }

    /// No CR, LF or NUL (nghttp2 checks this too; the HTTP/1.1 head must never split).
    private static func isFieldValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for b in bytes where b == 0x0D || b == 0x0A || b == 0 { return false }
        return true
    }
}
