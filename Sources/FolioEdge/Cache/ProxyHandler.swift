import NIOCore
import NIOHTTP1

/// One connection of the cache tier, behind NIO's HTTP/1.1 server pipeline (which keeps
/// pipelined requests in order): collects each request, lets the `HTTPCache` answer it, and
/// writes the answer with its exact length.
final class ProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The largest request body forwarded (413 beyond).
    static let maxRequestBody = 16 << 20

    private let cache: HTTPCache
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var tooLarge = false

    init(cache: HTTPCache) { self.cache = cache }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
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
            guard let head else { return }
            self.head = nil
            let keepAlive = head.isKeepAlive
            if tooLarge {
                var headers = HTTPHeaders()
                headers.add(name: "Connection", value: "close")
                write(context, ProxyResponse(status: .payloadTooLarge, headers: headers, body: nil), version: head.version, method: head.method, keepAlive: false)
                return
            }
            let request = ProxyRequest(method: head.method, target: head.uri, headers: head.headers, body: body)
            body = nil
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            cache.handle(request, on: context.eventLoop).hop(to: context.eventLoop).whenComplete { result in
                let (handler, context) = bound.value
                let response: ProxyResponse
                switch result {
                case .success(let r): response = r
                case .failure: response = ProxyResponse(status: .internalServerError, headers: HTTPHeaders(), body: nil)
                }
                handler.write(context, response, version: head.version, method: head.method, keepAlive: keepAlive)
            }
        }
    }

    private func write(_ context: ChannelHandlerContext, _ response: ProxyResponse, version: HTTPVersion, method: HTTPMethod, keepAlive: Bool) {
        var headers = response.headers
        let status = response.status.code
        let bodyless = method == .HEAD || status == 204 || status == 304 || status < 200
        if !bodyless {
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body?.readableBytes ?? 0))
        } else if status == 204 || status < 200 {
            headers.remove(name: "content-length")
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: response.status, headers: headers))), promise: nil)
        if !bodyless, let body = response.body, body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
