import AsyncHTTPClient
import FolioPublished
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Active health checks of a tier's origins (Varnish's probes, nginx's `health_check`): every
/// `interval`, a conditional GET of each origin's `manifest.plist` (If-None-Match with the
/// ETag of the last one read), given `timeout` to answer. A 304, a 200 whose body is a
/// manifest, or any other status below 500 is good; a connection refused or reset, a timeout,
/// an answer that is not HTTP, a 5xx or a 200 that is not a manifest is bad. A bucket's check is
/// signed as its requests are; there any 3xx or 4xx but 304 and 404 is bad too (the manifest is
/// there to read: a 403 means the credentials are wrong). Each bad one says why. Checks run at
/// a fixed rate whatever the origins do; an origin whose last check is still out is skipped.
final class OriginHealthChecker: Sendable {
    let pool: OriginPool
    let client: HTTPClient
    let interval: TimeAmount
    let timeout: TimeAmount
    private let inFlight: Mutex<Set<Int>> = Mutex([])
    private let task: Mutex<RepeatedTask?> = Mutex(nil)

    init(pool: OriginPool, client: HTTPClient, interval: TimeAmount, timeout: TimeAmount = .seconds(1)) {
        self.pool = pool
        self.client = client
        self.interval = interval
        self.timeout = min(timeout, interval)
    }

    /// Starts the rounds on `loop`, the first at once; nothing with a single http origin.
    func start(on loop: any EventLoop) {
        guard pool.isChecked else { return }
        let repeated = loop.scheduleRepeatedTask(initialDelay: .zero, delay: interval) { _ in
            for index in self.pool.origins.indices { self.check(index, on: loop) }
        }
        task.withLock { $0 = repeated }
    }

    func stop() {
        task.withLock { t in
            t?.cancel()
            t = nil
        }
    }

    /// One check of one origin, unless its previous one is still out.
    private func check(_ index: Int, on loop: any EventLoop) {
        guard inFlight.withLock({ $0.insert(index).inserted }) else { return }
        var headers = HTTPHeaders()
        if let etag = pool.checkedETag(index) { headers.add(name: "If-None-Match", value: etag) }
        let origin = pool.origins[index]
        let target = "/" + PublishedLayout.manifest
        let request: HTTPClient.Request?
        if let bucket = origin.s3 {
            request = try? bucket.request(.GET, target: target, headers: headers, date: Date())
        } else {
            request = try? HTTPClient.Request(url: origin.base + target, method: .GET, headers: headers)
        }
        guard let request else {
            inFlight.withLock { _ = $0.remove(index) }
            pool.checked(index, good: false, why: "no request can be made to it")
            return
        }
        client.execute(request: request, eventLoop: .delegate(on: loop), deadline: .now() + timeout).whenComplete { result in
            self.inFlight.withLock { _ = $0.remove(index) }
            switch result {
            case .success(let response): self.judge(index, response)
            case .failure(let error): self.pool.checked(index, good: false, why: HTTPCache.failureText(error))
            }
        }
    }

    /// Whether a check's answer is good, and the manifest version a 200 carries.
    private func judge(_ index: Int, _ response: HTTPClient.Response) {
        let code = Int(response.status.code)
        if let refused = pool.origins[index].s3?.refusal(status: response.status.code, body: response.body, checking: true) {
            pool.checked(index, good: false, why: refused.reason)
            return
        }
        guard code == 200 else {
            pool.checked(index, good: code < 500, why: "its manifest.plist answered \(code)")
            return
        }
        let coding = response.headers.first(name: "content-encoding")
        let bytes = HTTPCache.decoded(response.body.map { Array($0.readableBytesView) } ?? [], coding)
        guard let bytes, let manifest = try? Manifest(bytes: bytes) else {
            pool.checked(index, good: false, why: "its manifest.plist is not a manifest")
            return
        }
        pool.checked(index, good: true, etag: response.headers.first(name: "etag"), version: manifest.version)
    }
}
