import FolioHTTPCore
import FolioSupport
import Foundation
import Logging
import NIOCore
import NIOExtras
import NIOPosix
import Synchronization

/// Limits and policies the connection handler enforces.
package struct ConnectionLimits: Sendable {
    package var maxURIBytes = 8192
    package var maxHeaderCount = 100
    package var maxHeaderBytes = 16384
    /// How long a client may take to send its next complete request (slowloris and idle guard).
    package var requestTimeout: TimeAmount = .seconds(15)

    package init() {}
}

/// Serves one HTTP/1.1 connection: parses request heads from the raw bytes (a strict parser of
/// our own, measurably faster here than a general-purpose decoder), answers each from one
/// `Site` snapshot with prepared heads, and writes raw bytes. Pipelined requests are answered
/// in order; responses are flushed once per read burst.
final class EdgeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Routes each request to its answer (and holds the connection's version of the site).
    private var responder: EdgeResponder
    private let limits: ConnectionLimits
    private let parser: HTTPRequestParser
    private let recorder: RequestRecorder
    private let fileIO: NIOThreadPool

    /// Bytes received and not yet parsed.
    private var buffer: ByteBuffer?
    /// Body bytes of the current request still to be discarded.
    private var bodyToSkip = 0
    private var requestStart: NIODeadline = .now()
    private var requestNumber = 0
    private var waitingSince: NIODeadline = .now()
    private var lastLogged: NIODeadline = .now()
    private var closeAfterResponse = false
    /// The current request's details for the access log, read only when its format wants them.
    private var details: RequestDetails?
    private var clientAddress: String?
    private var quiescing = false
    private var quiescingSince = NIODeadline.now()
    private var closed = false
    private var pendingRead = false
    private var busyWithDisk = false
    private var timer: RepeatedTask?
    private var dateSecond = -1
    private var dateLine = ByteBuffer()
    /// The end of a prepared head: the Date line and the blank line (with Connection: close
    /// before them when the connection ends after the response), made once a second.
    private var headTail = ByteBuffer()
    private var headTailClose = ByteBuffer()
    /// Responses (heads and small bodies) gathered during one read burst and handed to the
    /// channel as one write when it ends: one pipeline write per burst instead of one or two
    /// per response, and, once the socket has taken it, the same storage is reused.
    private var pending = ByteBuffer()
    /// Bodies up to this size are copied into `pending`; larger ones are written by reference.
    private static let copyLimit = 16 * 1024

    /// Header lines sent on every response of this listener (`Strict-Transport-Security` over TLS).
    private let extraLines: String
    /// Which endpoints this listener answers; the deploy endpoints (off: nil).
    private let role: ListenerRole
    private let deploy: EdgeDeploy?
    /// The deploy request whose body is arriving.
    private var deployUpload: DeployUpload?

    init(
        store: SiteStore, limits: ConnectionLimits, metrics: EdgeMetrics, accessLog: AccessLogSink?, fileIO: NIOThreadPool,
        extraLines: String = "", role: ListenerRole = .all, deploy: EdgeDeploy? = nil
    ) {
        self.extraLines = extraLines
        self.role = role
        self.deploy = deploy
        self.responder = EdgeResponder(store: store, role: role, metrics: metrics)
        self.limits = limits
        self.parser = HTTPRequestParser(
            maxTargetBytes: limits.maxURIBytes, maxHeadBytes: limits.maxHeaderBytes, maxHeaderCount: limits.maxHeaderCount)
        self.recorder = RequestRecorder(metrics: metrics, accessLog: accessLog)
        self.fileIO = fileIO
    }

    // MARK: Connection lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        waitingSince = .now()
        let limit = limits.requestTimeout
        let check = min(limit, .seconds(1))
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: check, delay: check) { _ in
            let (handler, context) = loopBound.value
            handler.checkTimeout(context: context, limit: limit)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    /// Closes a connection whose next request has not arrived in full within the limit
    /// (idle keep-alive connections and slowloris clients alike).
    private func checkTimeout(context: ChannelHandlerContext, limit: TimeAmount) {
        let idle = (buffer?.readableBytes ?? 0) == 0 && bodyToSkip == 0
        if quiescing, !closed, !busyWithDisk, idle, NIODeadline.now() - quiescingSince >= quiesceGrace { return close(context: context) }
        guard !closed, !busyWithDisk, NIODeadline.now() - waitingSince > limit else { return }
        if (buffer?.readableBytes ?? 0) > 0 || bodyToSkip > 0 || deployUpload != nil {
            deployUpload = nil
            closeAfterResponse = true
            requestStart = .now()
            unreadRequest(context)
            log(method: "-", target: "-", status: writeSimple(context: context, status: 408, reason: "Request Timeout", body: "request timed out\n"), bytes: 0)
            flush(context)
        }
        close(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            // Drain: a request already (partly) received, or arriving before the idle
            // connection's next check (`quiesceGrace` at least), is answered with Connection:
            // close. Closing an idle connection at once would cut a request on its way.
            quiescing = true
            quiescingSince = .now()
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        close(context: context)
    }

    private func close(context: ChannelHandlerContext) {
        guard !closed else { return }
        closed = true
        context.close(promise: nil)
    }

    // MARK: Back-pressure: stop reading while the client is not taking our responses.

    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable && !busyWithDisk {
            context.read()
        } else {
            pendingRead = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, pendingRead, !busyWithDisk {
            pendingRead = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        guard !closed else { return }
        if buffer == nil || buffer!.readableBytes == 0 {
            buffer = incoming
        } else {
            buffer!.writeBuffer(&incoming)
        }
        process(context: context)
        // A fully used read buffer is let go, so NIO's pooled allocator can reuse its storage
        // for the next read instead of allocating a new one.
        if buffer?.readableBytes == 0 { buffer = nil }
    }

    /// Answers every complete request in the buffer, in order.
    private func process(context: ChannelHandlerContext) {
        recyclePending()
        while !closed, !busyWithDisk, var buf = buffer, buf.readableBytes > 0 {
            if bodyToSkip > 0 {
                let n = min(bodyToSkip, buf.readableBytes)
                buf.moveReaderIndex(forwardBy: n)
                bodyToSkip -= n
                buffer = buf
                continue
            }
            if deployUpload != nil {
                absorbDeployBody(&buf, context: context)
                buffer = buf
                continue
            }
            // The request is answered while its bytes are in view: its target and header
            // values point into them (see `HeaderValue`).
            let outcome = buf.withUnsafeReadableBytes { bytes -> Step in
                switch parser.parse(bytes) {
                case .incomplete:
                    return .incomplete
                case .failure(let error):
                    return .failure(error)
                case .request(let request, let length):
                    requestStart = .now()
                    if role != .publicOnly, DeployUpload.matches(request.target) {
                        deployUpload = DeployUpload(request, head: UnsafeRawBufferPointer(rebasing: bytes[..<length]), deploy: deploy)
                        return .deploy(length)
                    }
                    if request.chunked {
                        // A chunked body on GET or HEAD is not worth parsing: answer and close.
                        closeAfterResponse = true
                    }
                    bodyToSkip = request.contentLength
                    if recorder.wantsDetails { readDetails(UnsafeRawBufferPointer(rebasing: bytes[..<length]), context) }
                    respond(to: request, context: context)
                    return .answered(length)
                }
            }
            switch outcome {
            case .incomplete:
                if buf.readerIndex > 4096 { buf.discardReadBytes() }
                buffer = buf
                return
            case .failure(let error):
                buffer = nil
                closeAfterResponse = true
                requestStart = .now()
                unreadRequest(context)
                let status = writeSimple(context: context, status: error.status, reason: error.reason, body: error.message + "\n")
                log(method: "-", target: "-", status: status, bytes: 0)
                flush(context)
                close(context: context)
                return
            case .answered(let length):
                // The head was consumed; a body to skip is counted in `bodyToSkip`.
                buf.moveReaderIndex(forwardBy: length)
                buffer = buf
                if !busyWithDisk { finishRequest(context: context) }
            case .deploy(let length):
                buf.moveReaderIndex(forwardBy: length)
                absorbDeployBody(&buf, context: context)
                buffer = buf
            }
        }
    }

    private enum Step {
        case incomplete
        case failure(RequestError)
        case answered(Int)
        /// A deploy request's head was consumed; its body follows (`deployUpload`).
        case deploy(Int)
    }

    // MARK: Deploy requests: the body collected, then answered off the event loop.

    /// Feeds the arriving deploy body; once whole, hands the request to the deploy endpoints
    /// (pausing this connection's reads until it is answered). A refused one is answered at
    /// once and the connection closes, its body unread.
    private func absorbDeployBody(_ buf: inout ByteBuffer, context: ChannelHandlerContext) {
        guard var upload = deployUpload else { return }
        if let refusal = upload.refusal {
            deployUpload = nil
            closeAfterResponse = true
            answerDeploy(upload.request, refusal, context: context)
            finishRequest(context: context)
            return
        }
        waitingSince = .now()
        guard upload.absorb(&buf) else {
            deployUpload = upload
            return
        }
        deployUpload = nil
        guard let deploy else { return }
        busyWithDisk = true
        let request = upload.request
        let promise = context.eventLoop.makePromise(of: DeployResponse.self)
        promise.completeWithTask { await deploy.handle(request) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        promise.futureResult.whenSuccess { response in
            let (handler, context) = bound.value
            handler.answerDeploy(request, response, context: context)
            handler.busyWithDisk = false
            handler.finishRequest(context: context)
            handler.resumeAfterDisk(context: context)
        }
    }

    private func answerDeploy(_ request: DeployRequest, _ response: DeployResponse, context: ChannelHandlerContext) {
        requestNumber += 1
        writeSimple(context: context, status: response.status, reason: response.reason, body: response.body, contentType: response.contentType)
        log(method: request.method, target: HeaderValue(request.path), status: response.status, bytes: response.body.utf8.count)
    }

    private func finishRequest(context: ChannelHandlerContext) {
        // The clock was just read for the request's log line: the wait for the next one starts then.
        waitingSince = lastLogged
        if closeAfterResponse || quiescing {
            flush(context)
            close(context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flush(context)
        context.fireChannelReadComplete()
    }

    private func respond(to request: ParsedRequest, context: ChannelHandlerContext) {
        requestNumber += 1
        if !request.keepAlive || quiescing { closeAfterResponse = true }
        let (answer, close) = responder.answer(request)
        if close { closeAfterResponse = true }  // its body is not read
        let isGet = request.method == .get
        switch answer {
        case .simple(let simple):
            writeSimple(context: context, simple)
            finish(request, context: context, status: simple.status, bytes: simple.omitBody ? 0 : simple.body.utf8.count)
        case .notModified(let rep):
            writePreparedHead(context: context, rep.head304)
            finish(request, context: context, status: 304, bytes: 0)
        case .full(let rep):
            writePreparedHead(context: context, rep.head200)
            sendBody(rep, range: nil, isGet: isGet, request: request, status: 200, context: context)
        case .partial(let rep, let r):
            writeHead(context: context, status: "HTTP/1.1 206 Partial Content\r\n", block: rep.headPartial,
                      extra: "Content-Range: bytes \(r.lowerBound)-\(r.upperBound)/\(rep.length)\r\nContent-Length: \(r.count)\r\n")
            sendBody(rep, range: r, isGet: isGet, request: request, status: 206, context: context)
        }
    }

    private func sendBody(_ rep: Representation, range: ClosedRange<Int>?, isGet: Bool, request: ParsedRequest, status: Int, context: ChannelHandlerContext) {
        let length = range?.count ?? rep.length
        guard isGet else {
            finish(request, context: context, status: status, bytes: 0)
            return
        }
        if let body = rep.body {
            let slice = range.map { body.getSlice(at: body.readerIndex + $0.lowerBound, length: $0.count)! } ?? body
            if slice.readableBytes <= Self.copyLimit {
                pending.writeImmutableBuffer(slice)
            } else {
                writePending(context)
                context.write(wrapOutboundOut(.byteBuffer(slice)), promise: nil)
            }
            finish(request, context: context, status: status, bytes: length)
            return
        }
        // Over the memory budget: read from disk on the thread pool, holding later pipelined
        // requests until this response is written so they stay in order. The request is kept
        // for the log line, so its views are copied off the read buffer first.
        guard let path = rep.filePath else { return }
        let request = request.owned()
        busyWithDisk = true
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        fileIO.runIfActive(eventLoop: loop) { try FileIO.read(path) }.whenComplete { result in
            let (handler, context) = bound.value
            switch result {
            case .success(let bytes) where bytes.count == rep.length:
                var buf = context.channel.allocator.buffer(capacity: length)
                if let r = range { buf.writeBytes(bytes[r]) } else { buf.writeBytes(bytes) }
                handler.writePending(context)
                context.writeAndFlush(handler.wrapOutboundOut(.byteBuffer(buf)), promise: nil)
                handler.finish(request, context: context, status: status, bytes: length)
            default:
                // The head promised a body we cannot send: end the connection.
                handler.closeAfterResponse = true
                handler.finish(request, context: context, status: 500, bytes: 0)
            }
            handler.busyWithDisk = false
            handler.finishRequest(context: context)
            handler.resumeAfterDisk(context: context)
        }
    }

    private func resumeAfterDisk(context: ChannelHandlerContext) {
        process(context: context)
        flush(context)
        if !busyWithDisk, pendingRead, context.channel.isWritable {
            pendingRead = false
            context.read()
        }
    }

    /// The access log's details of the request whose head is `head` (its format wants them).
    private func readDetails(_ head: UnsafeRawBufferPointer, _ context: ChannelHandlerContext) {
        if clientAddress == nil { clientAddress = context.channel.remoteAddressForLog }
        details = RequestDetails(head: head, remoteAddress: clientAddress ?? "-")
    }

    /// The access log's details of a request that could not be read.
    private func unreadRequest(_ context: ChannelHandlerContext) {
        guard recorder.wantsDetails else { return }
        if clientAddress == nil { clientAddress = context.channel.remoteAddressForLog }
        details = RequestDetails(remoteAddress: clientAddress ?? "-", protocolName: "-")
    }

    private func finish(_ request: ParsedRequest, context: ChannelHandlerContext, status: Int, bytes: Int) {
        log(method: request.method.name, target: request.target, status: status, bytes: bytes)
    }

    private func log(method: String, target: HeaderValue, status: Int, bytes: Int) {
        lastLogged = recorder.record(
            requestNumber, method: method, target: target.string, status: status, bytes: bytes, since: requestStart, details: details)
    }

    // MARK: Writing

    private func currentDateLine() -> ByteBuffer {
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            let date = "Date: \(HTTPDate.format(Int64(now)))\r\n" + extraLines
            dateLine = ByteBuffer(string: date)
            headTail = ByteBuffer(string: date + "\r\n")
            headTailClose = ByteBuffer(string: "Connection: close\r\n" + date + "\r\n")
        }
        return dateLine
    }

    /// A head prepared at load time, then the Date line, appended to the burst's responses.
    private func writePreparedHead(context: ChannelHandlerContext, _ head: ByteBuffer) {
        _ = currentDateLine()
        let tail = closeAfterResponse ? headTailClose : headTail
        let total = head.readableBytes + tail.readableBytes
        // Both parts copied in one reservation of `pending`.
        pending.writeWithUnsafeMutableBytes(minimumWritableBytes: total) { out in
            head.withUnsafeReadableBytes { h in
                tail.withUnsafeReadableBytes { t in
                    out.baseAddress!.copyMemory(from: h.baseAddress!, byteCount: h.count)
                    (out.baseAddress! + h.count).copyMemory(from: t.baseAddress!, byteCount: t.count)
                }
            }
            return total
        }
    }

    /// Hands the gathered responses to the channel (before anything written by reference).
    private func writePending(_ context: ChannelHandlerContext, flush: Bool = false) {
        guard pending.readableBytes > 0 else {
            if flush { context.flush() }
            return
        }
        // One pipeline pass when flushing too.
        if flush {
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(pending)), promise: nil)
        } else {
            context.write(wrapOutboundOut(.byteBuffer(pending)), promise: nil)
        }
        // Marked as handed over by the reader index alone: `clear()` now would allocate new
        // storage while the channel still holds this one. `recyclePending()` resets it later.
        pending.moveReaderIndex(to: pending.writerIndex)
    }

    /// At the start of a read burst: the last burst's responses have been sent by now (the
    /// flush at its end writes them), so their storage is normally free to reuse.
    private func recyclePending() {
        if pending.readableBytes == 0 { pending.clear() }
    }

    /// Sends everything written so far.
    private func flush(_ context: ChannelHandlerContext) { writePending(context, flush: true) }

    private func writeHead(context: ChannelHandlerContext, status: StaticString, block: ByteBuffer, extra: String?) {
        let date = currentDateLine()
        pending.writeStaticString(status)
        pending.writeImmutableBuffer(date)
        pending.writeImmutableBuffer(block)
        if let extra { pending.writeString(extra) }
        if closeAfterResponse { pending.writeStaticString("Connection: close\r\n") }
        pending.writeStaticString("\r\n")
    }

    private func writeSimple(context: ChannelHandlerContext, _ s: SimpleAnswer) {
        let extra = s.extra.map { "\($0): \($1)\r\n" }.joined()
        writeSimple(context: context, status: s.status, reason: s.reason, body: s.body, contentType: s.contentType, extra: extra, omitBody: s.omitBody)
    }

    /// Writes a small generated response; returns its status for the log.
    @discardableResult
    private func writeSimple(
        context: ChannelHandlerContext, status: Int, reason: String, body: String,
        contentType: String = "text/plain; charset=utf-8", extra: String = "", omitBody: Bool = false
    ) -> Int {
        var s = "HTTP/1.1 \(status) \(reason)\r\n"
        pending.writeString(s)
        pending.writeImmutableBuffer(currentDateLine())
        s = "Content-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\nCache-Control: no-store\r\n" + extra
        if closeAfterResponse { s += "Connection: close\r\n" }
        s += "\r\n"
        pending.writeString(s)
        if !omitBody { pending.writeString(body) }
        return status
    }

    /// The path of a request target (origin form), percent-decoded, without the query.
    static func path(of uri: String) -> String? {
        // The usual target: origin form with no query, fragment or escapes, served as it is.
        let plain = uri.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.first == UInt8(ascii: "/")
                && !bytes.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "%") }
        }
        if plain == true { return uri }
        var uri = uri
        // Absolute form (RFC 9112 §3.2.2): "http://host/path" serves "/path".
        for scheme in ["http://", "https://"] where uri.utf8.first != UInt8(ascii: "/") && uri.lowercased().hasPrefix(scheme) {
            let rest = uri.dropFirst(scheme.count)
            guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else { return "/" }
            uri = rest[slash] == "/" ? String(rest[slash...]) : "/" + rest[slash...]
        }
        let utf8 = uri.utf8
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        var end = utf8.endIndex
        var hasPercent = false
        for i in utf8.indices {
            let b = utf8[i]
            if b == UInt8(ascii: "?") || b == UInt8(ascii: "#") {
                end = i
                break
            }
            if b == UInt8(ascii: "%") { hasPercent = true }
        }
        guard hasPercent else { return end == utf8.endIndex ? uri : String(uri[..<end]) }
        var bytes: [UInt8] = []
        var it = utf8[..<end].makeIterator()
        while let b = it.next() {
            if b != UInt8(ascii: "%") { bytes.append(b); continue }
            guard let h = it.next(), let l = it.next(), let hi = hexValue(h), let lo = hexValue(l) else { return nil }
            bytes.append(hi << 4 | lo)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
