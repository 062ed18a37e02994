import CNghttp2
import FolioHTTPCore
import NIOCore
import NIOHTTP1

/// The cache tier's answers over HTTP/2 on libnghttp2 (`EdgeNGHTTP2Handler`). Each stream's
/// request is read by the origin mode's HTTP/1.1 parser for its limits (414 for a long target,
/// 431 for too many fields, 400), then answered as over HTTP/1.1: from the store at once
/// (`HTTPCache.answerNow`), else on the connection's loop (`answerLater`: misses, coalescing,
/// revalidation). The answer's HTTP/1.1 head is read back as HTTP/2 fields (`ResponseHead`, as
/// `HTTP2StreamBridge` does on the swift-nio-http2 path), so both paths send the same fields.
final class TierStreamResponder: NGHTTP2StreamResponder {
    let keepsRequestBodies = true
    private let cache: HTTPCache
    private let parser: HTTPRequestParser
    private var recorder: TierRecorder
    /// Header lines sent on every response of this listener (`Strict-Transport-Security`).
    private let extraLines: String
    private let role: ListenerRole
    /// The client's address, read for the access log when its format wants it.
    private var clientAddress: String?

    init(cache: HTTPCache, limits: ConnectionLimits, metrics: EdgeMetrics, accessLog: AccessLogSink?, extraLines: String, role: ListenerRole) {
        self.cache = cache
        parser = HTTPRequestParser(maxTargetBytes: limits.maxURIBytes, maxHeadBytes: limits.maxHeaderBytes, maxHeaderCount: limits.maxHeaderCount)
        recorder = TierRecorder(metrics: metrics, accessLog: accessLog, role: role)
        self.extraLines = extraLines
        self.role = role
    }

    func answer(_ id: Int32, head: ByteBuffer, body: ByteBuffer?, on h2: EdgeNGHTTP2Handler) {
        let started = NIODeadline.now()
        let allocator = h2.allocator
        let request: ProxyRequest
        switch Self.request(head, body, parser) {
        case .success(let r): request = r
        case .failure(let error):
            let response = ProxyResponse(status: HTTPResponseStatus(statusCode: error.status), headers: Self.textHeaders, body: ByteBuffer(string: error.message + "\n"))
            let answer = TierAnswer(response, method: .GET, keepAlive: true, allocator: allocator, extraLines: extraLines)
            return submit(answer, id, HTTPRequestHead(version: .http2, method: .GET, uri: "-"), started, h2)
        }
        let requestHead = HTTPRequestHead(version: .http2, method: request.method, uri: request.target, headers: request.headers)
        if let now = cache.answerNow(request, role: role, keepAlive: true, allocator: allocator, extraLines: extraLines) {
            return submit(now, id, requestHead, started, h2)
        }
        guard let loop = h2.context?.eventLoop else { return }
        let bound = NIOLoopBound((self, h2), eventLoop: loop)
        cache.answerLater(request, role: role, on: loop).whenSuccess { response in
            let (responder, h2) = bound.value
            guard h2.isOpen(id) else { return }
            let answer = TierAnswer(response, method: request.method, keepAlive: true, allocator: h2.allocator, extraLines: responder.extraLines)
            responder.submit(answer, id, requestHead, started, h2)
            h2.flushOutput()
        }
    }

    private static let textHeaders: HTTPHeaders = ["Content-Type": "text/plain; charset=utf-8"]

    /// Records the answer, and submits its head as HTTP/2 fields with its body.
    private func submit(_ answer: TierAnswer, _ id: Int32, _ head: HTTPRequestHead, _ started: NIODeadline, _ h2: EdgeNGHTTP2Handler) {
        recorder.record(
            head, started, status: answer.status, cacheStatus: answer.cacheStatus, bytes: answer.bytes, remoteAddress: address(h2),
            protocolName: "HTTP/2.0")
        guard let bytes = answer.bytes.first, let parsed = ResponseHead.parse(bytes), parsed.status >= 200 else {
            return h2.reset(id, NGHTTP2_INTERNAL_ERROR)
        }
        h2.beginFields()
        h2.status(parsed.status)
        for (name, value, _) in parsed.fields.dropFirst() { h2.field(name, value) }
        h2.send(id, body: answer.bytes.count > 1 ? answer.bytes[1] : nil)
    }

    private func address(_ h2: EdgeNGHTTP2Handler) -> String {
        if clientAddress == nil { clientAddress = h2.context?.channel.remoteAddressForLog }
        return clientAddress ?? "-"
    }
}

extension TierStreamResponder {
    /// The request of a stream's HTTP/1.1 head (as `EdgeNGHTTP2Handler` wrote it) and body; the
    /// parser's error when its limits or rules refuse the head.
    static func request(_ head: ByteBuffer, _ body: ByteBuffer?, _ parser: HTTPRequestParser) -> Result<ProxyRequest, RequestError> {
        head.withUnsafeReadableBytes { bytes in
            switch parser.parse(bytes) {
            case .request(let parsed, _):
                var headers = fields(bytes)
                if let body { headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes)) }
                let method = HTTPMethod(rawValue: parsed.method.name)
                return .success(ProxyRequest(method: method, target: parsed.target.string, headers: headers, body: body))
            case .failure(let error):
                return .failure(error)
            case .incomplete:
                return .failure(RequestError(status: 400, reason: "Bad Request", message: "incomplete request head"))
            }
        }
    }

    /// The `name: value` lines after the request line, up to the blank one. The head is the
    /// handler's own: one space after each colon, no line folded, no CR or LF in a value.
    static func fields(_ bytes: UnsafeRawBufferPointer) -> HTTPHeaders {
        var headers = HTTPHeaders()
        var start = (bytes.firstIndex(of: 0x0A) ?? bytes.count - 1) + 1
        while start < bytes.count, bytes[start] != 0x0D {
            var end = start
            while end < bytes.count, bytes[end] != 0x0D { end += 1 }
            if let colon = bytes[start..<end].firstIndex(of: UInt8(ascii: ":")), colon + 2 <= end {
                headers.add(
                    name: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<colon]), as: UTF8.self),
                    value: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(colon + 2)..<end]), as: UTF8.self))
            }
            start = end + 2
        }
        return headers
    }
}
