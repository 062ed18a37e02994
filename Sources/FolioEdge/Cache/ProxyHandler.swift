import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// One connection of the cache tier, behind NIO's HTTP/1.1 request decoder: collects each
/// request, lets the `HTTPCache` answer it, and writes the answers as bytes, in request order
/// (a pipelined request answered from the cache waits for an earlier one still at the origin).
/// A plain hit is written from the stored response's prepared head plus its `Age` line, in one
/// write with the body; everything else is serialized here (no response encoder in the pipeline).
final class ProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    /// The largest request body forwarded (413 beyond).
    static let maxRequestBody = 16 << 20

    private let cache: HTTPCache
    private let metrics: EdgeMetrics
    private let accessLog: AccessLogSink?
    /// The access log's request id: this connection's number (taken at its first line) and the request's.
    private var connectionID: UInt64?
    private var requestNumber = 0
    var head: HTTPRequestHead?
    /// When the request being read began.
    private var started = NIODeadline.now()
    private var body: ByteBuffer?
    private var tooLarge = false

    /// Answers in request order: nil while a request is still being answered. `closing` marks
    /// the answer after which the connection closes.
    var queue: [(bytes: [ByteBuffer]?, closing: Bool)] = []
    /// The sequence number of `queue[0]`, and of the next request.
    private var first = 0
    private var next = 0
    var closed = false
    /// Reading stops while this many answers are outstanding (a client pipelining without
    /// reading), and resumes below a quarter of it.
    static let maxOutstanding = 128
    private var readPaused = false

    /// Header lines sent on every response of this listener (`Strict-Transport-Security` over TLS).
    private let extraLines: String
    /// The request timeout (see `TierRequestTimeout.swift`): the limit, whether bytes of a
    /// request not yet complete have arrived, since when the connection waits for one, the timer.
    let requestTimeout: TimeAmount
    let progress: RequestProgress
    var waitingSince = NIODeadline.now()
    var timer: RepeatedTask?
    /// Since when the edge drains (SIGTERM): answers from then on close the connection.
    var quiescingSince: NIODeadline?

    /// Which endpoints this listener answers (the `/.folio/` ones and PURGE only where the admin ones are).
    let role: ListenerRole

    init(
        cache: HTTPCache, metrics: EdgeMetrics, accessLog: AccessLogSink?, extraLines: String = "", requestTimeout: TimeAmount = .seconds(15),
        progress: RequestProgress = RequestProgress(), role: ListenerRole = .all
    ) {
        self.role = role
        self.requestTimeout = requestTimeout
        self.progress = progress
        self.extraLines = extraLines
        self.cache = cache
        self.metrics = metrics
        self.accessLog = accessLog
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            started = .now()
            body = nil
            tooLarge = false
        case .body(var chunk):
            guard !tooLarge else { return }
            if (body?.readableBytes ?? 0) + chunk.readableBytes > Self.maxRequestBody {
                tooLarge = true
                body = nil
            } else if body == nil {
                body = chunk
            } else {
                body!.writeBuffer(&chunk)
            }
        case .end:
            guard let head, !closed else { return }
            self.head = nil
            progress.bytesPending = false
            let slot = next
            next += 1
            queue.append((nil, false))
            if queue.count >= Self.maxOutstanding, !readPaused {
                readPaused = true
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
            }
            let keepAlive = head.isKeepAlive && quiescingSince == nil
            let started = self.started
            if tooLarge {
                let response = ProxyResponse(status: .payloadTooLarge, headers: [:], body: nil)
                answered(context, slot, head, started, response, keepAlive: false)
                return
            }
            let request = ProxyRequest(method: head.method, target: head.uri, headers: head.headers, body: body)
            body = nil
            let allocator = context.channel.allocator
            switch role == .adminOnly ? nil : cache.answerFromCache(request) {
            case .prepared(let stored):
                let bytes = cache.preparedHit(stored, method: head.method, keepAlive: keepAlive, allocator: allocator, extraLines: extraLines)
                record(context, head, started, status: stored.status, cacheStatus: nil, bytes: bytes)
                complete(context, slot, bytes, closing: !keepAlive)
                return
            case .prepared304(let stored):
                let bytes = cache.preparedHit(
                    stored, notModified: true, method: head.method, keepAlive: keepAlive, allocator: allocator, extraLines: extraLines)
                record(context, head, started, status: 304, cacheStatus: nil, bytes: bytes)
                complete(context, slot, bytes, closing: !keepAlive)
                return
            case .response(let hit):
                answered(context, slot, head, started, hit, keepAlive: keepAlive)
                return
            case nil:
                break
            }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            cache.handle(request, on: context.eventLoop, role: role).hop(to: context.eventLoop).whenComplete { result in
                let (handler, context) = bound.value
                let response: ProxyResponse
                switch result {
                case .success(let r): response = r
                case .failure: response = ProxyResponse(status: .internalServerError, headers: [:], body: nil)
                }
                handler.answered(context, slot, head, started, response, keepAlive: keepAlive)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A request NIO's decoder cannot read: 400 (431 for a head too large) after the answers
        // already due, then close.
        guard !closed else { return }
        // A head over --max-header-bytes or the field count: 431, as the origin mode answers.
        if (error as? HTTPParserError) == .headerOverflow {
            answerAndClose(context, .requestHeaderFieldsTooLarge, "request header fields too large\n", head: nil, started: started)
        } else {
            answerAndClose(context, .badRequest, "malformed request\n", head: nil, started: started)
        }
    }

    /// A short text answer of our own after the answers already due, then the connection
    /// closes: a request the decoder cannot read, or one that did not come in time.
    func answerAndClose(
        _ context: ChannelHandlerContext, _ status: HTTPResponseStatus, _ text: String, head: HTTPRequestHead?, started: NIODeadline
    ) {
        let slot = next
        next += 1
        queue.append((nil, false))
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        let response = ProxyResponse(status: status, headers: headers, body: ByteBuffer(string: text))
        answered(context, slot, head ?? HTTPRequestHead(version: .http1_1, method: .GET, uri: "-"), started, response, keepAlive: false)
    }

    /// Serializes `response`, counts and logs it, and queues it for request `slot`.
    private func answered(
        _ context: ChannelHandlerContext, _ slot: Int, _ head: HTTPRequestHead, _ started: NIODeadline, _ response: ProxyResponse,
        keepAlive: Bool
    ) {
        let bytes = Self.serialize(
            response, method: head.method, keepAlive: keepAlive, allocator: context.channel.allocator, extraLines: extraLines)
        record(context, head, started, status: Int(response.status.code), cacheStatus: response.headers["cache-status"].last, bytes: bytes)
        complete(context, slot, bytes, closing: !keepAlive)
    }

    /// Metrics for every answer; an access log line when enabled.
    /// `cacheStatus` nil is a plain hit.
    private func record(
        _ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ started: NIODeadline, status: Int, cacheStatus: String?, bytes: [ByteBuffer]
    ) {
        let size = bytes.reduce(0) { $0 + $1.readableBytes }
        let elapsed = (NIODeadline.now() - started).nanoseconds
        metrics.record(status: status, bytes: size, nanoseconds: elapsed)
        if status < 400, role != .adminOnly, head.method == .GET || head.method == .HEAD { metrics.manifestFetches.record(target: head.uri) }
        if let cacheStatus { metrics.recordCacheResult(cacheStatus) } else { metrics.recordCacheHit() }
        switch accessLog {
        case nil:
            break
        case .text(let log):
            log.info(
                "\(head.method) \(head.uri) \(status)",
                metadata: [
                    "bytes": "\(size)", "us": "\(elapsed / 1000)", "cache": "\(cacheStatus ?? "folio-edge; hit")",
                ])
        case .lines(let writer, let format):
            requestNumber += 1
            // Body bytes, as nginx's $body_bytes_sent: every answer is its head, then its body if any.
            let body = bytes.dropFirst().reduce(0) { $0 + $1.readableBytes }
            writer.write(logRecord(context, head, status: status, bytes: body, nanoseconds: elapsed).line(format))
        }
    }

    /// The combined or JSON line's record.
    private func logRecord(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, status: Int, bytes: Int, nanoseconds: Int64) -> AccessLogRecord {
        // A connection's channel has the listening one as parent; an HTTP/2 stream's has the
        // connection's (whose own parent is the listener). A stream's head reads HTTP/1.1.
        let version = context.channel.parent?.parent != nil ? "HTTP/2.0" : "HTTP/\(head.version.major).\(head.version.minor)"
        let connection = connectionID ?? RequestRecorder.nextConnectionID.add(1, ordering: .relaxed).newValue
        connectionID = connection
        let details = RequestDetails(
            remoteAddress: context.channel.remoteAddressForLog, protocolName: head.uri == "-" ? "-" : version,
            referer: head.headers.first(name: "referer"), userAgent: head.headers.first(name: "user-agent"))
        return AccessLogRecord(
            time: Date(), details: details, method: head.uri == "-" ? "-" : "\(head.method)", target: head.uri, status: status,
            bytes: bytes, durationMicroseconds: nanoseconds / 1000, requestID: "\(connection)-\(requestNumber)")
    }

    /// Fills the answer for request `slot` and writes every answer now due, in order.
    private func complete(_ context: ChannelHandlerContext, _ slot: Int, _ bytes: [ByteBuffer], closing: Bool) {
        guard !closed, slot - first >= 0, slot - first < queue.count else { return }
        queue[slot - first] = (bytes, closing)
        var wrote = false
        while let front = queue.first, let ready = front.bytes {
            for buffer in ready { context.write(wrapOutboundOut(buffer), promise: nil) }
            wrote = true
            queue.removeFirst()
            first += 1
            if front.closing {
                closed = true
                queue.removeAll()
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in channel.close(promise: nil) }
                return
            }
        }
        if wrote { context.flush() }
        if queue.isEmpty { waitingSince = .now() }
        if readPaused, queue.count < Self.maxOutstanding / 4 {
            readPaused = false
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
            context.read()
        }
    }

    /// A response as bytes: status line, fields, Content-Length (none for 1xx, 204 and 304;
    /// the body's length otherwise, or the stored length for HEAD when the cache set it), then
    /// the body unless the request was HEAD.
    static func serialize(
        _ response: ProxyResponse, method: HTTPMethod, keepAlive: Bool, allocator: ByteBufferAllocator, extraLines: String = ""
    ) -> [ByteBuffer] {
        let status = Int(response.status.code)
        let bodyless = method == .HEAD || status == 204 || status == 304 || status < 200
        var head = allocator.buffer(capacity: 512)
        head.writeString("HTTP/1.1 \(status) \(response.status.reasonPhrase)\r\n")
        for (name, value) in response.headers {
            let lower = name.lowercased()
            if lower == "connection" || (lower == "content-length" && !response.lengthSet) { continue }
            head.writeString(name)
            head.writeStaticString(": ")
            head.writeString(value)
            head.writeStaticString("\r\n")
        }
        if !response.lengthSet {
            if !bodyless {
                head.writeString("Content-Length: \(response.body?.readableBytes ?? 0)\r\n")
            } else if method == .HEAD, status != 204, status != 304, status >= 200,
                let length = response.headers.first(name: "content-length")
            {
                head.writeString("Content-Length: \(length)\r\n")
            }
        }
        if !keepAlive { head.writeStaticString("Connection: close\r\n") }
        head.writeString(extraLines)
        head.writeStaticString("\r\n")
        if !bodyless, let body = response.body, body.readableBytes > 0 { return [head, body] }
        return [head]
    }
}
