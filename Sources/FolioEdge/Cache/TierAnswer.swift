import NIOCore
import NIOHTTP1

/// One answer of the cache tier, as HTTP/1.1 bytes (its head, then its body if any), the way
/// both protocols send it: `ProxyHandler` writes the bytes, `TierStreamResponder` reads the head
/// back as HTTP/2 fields.
struct TierAnswer {
    var bytes: [ByteBuffer]
    var status: Int
    /// The Cache-Status the answer carries; nil for a plain hit from a prepared head.
    var cacheStatus: String?

    init(_ response: ProxyResponse, method: HTTPMethod, keepAlive: Bool, allocator: ByteBufferAllocator, extraLines: String) {
        bytes = ProxyHandler.serialize(response, method: method, keepAlive: keepAlive, allocator: allocator, extraLines: extraLines)
        status = Int(response.status.code)
        cacheStatus = response.headers["cache-status"].last
    }

    init(bytes: [ByteBuffer], status: Int) {
        self.bytes = bytes
        self.status = status
    }
}

extension HTTPCache {
    /// The answer to a request that the store holds a usable response for, made at once (a
    /// plain hit from its prepared head, a 304, a range); nil when `answerLater` must answer it.
    func answerNow(
        _ request: ProxyRequest, role: ListenerRole, keepAlive: Bool, allocator: ByteBufferAllocator, extraLines: String
    ) -> TierAnswer? {
        switch role == .adminOnly ? nil : answerFromCache(request) {
        case .prepared(let stored):
            let bytes = preparedHit(stored, method: request.method, keepAlive: keepAlive, allocator: allocator, extraLines: extraLines)
            return TierAnswer(bytes: bytes, status: stored.status)
        case .prepared304(let stored):
            let bytes = preparedHit(
                stored, notModified: true, method: request.method, keepAlive: keepAlive, allocator: allocator, extraLines: extraLines)
            return TierAnswer(bytes: bytes, status: 304)
        case .response(let hit):
            return TierAnswer(hit, method: request.method, keepAlive: keepAlive, allocator: allocator, extraLines: extraLines)
        case nil:
            return nil
        }
    }

    /// Every other answer (a miss, a revalidation, an admin endpoint), on `loop`: a failure is a 500.
    func answerLater(_ request: ProxyRequest, role: ListenerRole, on loop: any EventLoop) -> EventLoopFuture<ProxyResponse> {
        handle(request, on: loop, role: role).hop(to: loop).flatMapErrorThrowing { _ in
            ProxyResponse(status: .internalServerError, headers: [:], body: nil)
        }
    }
}
