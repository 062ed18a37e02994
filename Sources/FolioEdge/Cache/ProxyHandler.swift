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
    private var recorder: TierRecorder
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
        recorder = TierRecorder(metrics: metrics, accessLog: accessLog, role: role)
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
            if let now = cache.answerNow(request, role: role, keepAlive: keepAlive, allocator: allocator, extraLines: extraLines) {
                record(context, head, started, status: now.status, cacheStatus: now.cacheStatus, bytes: now.bytes)
                complete(context, slot, now.bytes, closing: !keepAlive)
                return
            }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            cache.answerLater(request, role: role, on: context.eventLoop).whenSuccess { response in
                let (handler, context) = bound.value
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
        let answer = TierAnswer(response, method: head.method, keepAlive: keepAlive, allocator: context.channel.allocator, extraLines: extraLines)
        record(context, head, started, status: answer.status, cacheStatus: answer.cacheStatus, bytes: answer.bytes)
        complete(context, slot, answer.bytes, closing: !keepAlive)
    }

    /// Metrics for every answer; an access log line when enabled (`TierRecorder`).
    private func record(
        _ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ started: NIODeadline, status: Int, cacheStatus: String?, bytes: [ByteBuffer]
    ) {
        // A connection's channel has the listening one as parent; an HTTP/2 stream's has the
        // connection's (whose own parent is the listener). A stream's head reads HTTP/1.1.
        recorder.record(
            head, started, status: status, cacheStatus: cacheStatus, bytes: bytes, remoteAddress: context.channel.remoteAddressForLog,
            protocolName: context.channel.parent?.parent != nil ? "HTTP/2.0" : "HTTP/\(head.version.major).\(head.version.minor)")
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
