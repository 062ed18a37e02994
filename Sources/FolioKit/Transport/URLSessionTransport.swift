import FolioKitCore
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// FolioKit's transport by default, on every platform: URLSession, which gives an app the
/// system's TLS (App Transport Security), proxies, HTTP/2 and HTTP/3, and cellular rules. On
/// Linux it is FoundationNetworking, over libcurl.
///
/// URLSession asks for the codings it reads and decodes them itself (gzip and brotli on both
/// platforms), so the sync's `Accept-Encoding` is left to it: the body handed on is decoded,
/// without `Content-Encoding`, and its size on the wire is the response's `Content-Length`. The
/// sync checks every object's SHA-256 on those decoded bytes. No URL cache: the sync makes its
/// own conditional requests and sees the 304s.
package final class URLSessionTransport: Transport {
    package let base: String
    private let session: URLSession
    private let tasks: URLSessionTasks
    private let fields: [(String, String)]
    private let timeout: Duration

    package init(base: String, configuration: FolioHTTPConfiguration) {
        self.base = base
        timeout = configuration.timeout
        fields = configuration.requestFields
        tasks = URLSessionTasks(authorities: configuration.certificateAuthorities.flatMap(PEM.certificates))
        let seconds = timeout.inSeconds
        let config = URLSessionConfiguration.ephemeral
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.httpCookieStorage = nil
        config.httpShouldSetCookies = false
        config.timeoutIntervalForRequest = seconds
        config.httpMaximumConnectionsPerHost = 8
        session = URLSession(configuration: config, delegate: tasks, delegateQueue: nil)
    }

    // The session holds its delegate until it is invalidated.
    deinit { session.finishTasksAndInvalidate() }

    package func get(_ request: TransportRequest) async throws -> TransportResponse {
        let urlRequest = try urlRequest(request)
        let handle = TaskHandle()
        let (session, tasks, timeout) = (self.session, self.tasks, self.timeout)
        let raw = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Off the caller's thread: FoundationNetworking's task creation waits on its
                // own queue, which would hold a thread of Swift's cooperative pool.
                Self.queue.async {
                    let task = session.dataTask(with: urlRequest)
                    tasks.start(task, maxBody: request.maxBody, timeout: timeout, continuation: continuation)
                    handle.started(task)
                }
            }
        } onCancel: {
            handle.cancel()
        }
        return Self.response(raw)
    }

    /// The request with the configured fields and the request's own, but `Accept-Encoding`
    /// (URLSession sets it to what it decodes).
    private func urlRequest(_ request: TransportRequest) throws(TransportError) -> URLRequest {
        guard let url = URL(string: base + request.path) else {
            throw TransportError(.other, "\(base + request.path) is not a URL")
        }
        var urlRequest = URLRequest(url: url)
        for (name, value) in fields + request.headers where name.lowercased() != "accept-encoding" {
            urlRequest.addValue(value, forHTTPHeaderField: name)
        }
        return urlRequest
    }

    /// Where tasks are made and started.
    private static let queue = DispatchQueue(label: "folio.urlsession", attributes: .concurrent)

    /// A request's task once made, and whether its caller was cancelled before that.
    private final class TaskHandle: Sendable {
        private let state = Locked<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

        func started(_ task: URLSessionDataTask) {
            if state.withLock({ $0.task = task; return $0.cancelled }) { task.cancel() }
        }

        func cancel() {
            state.withLock { $0.cancelled = true; return $0.task }?.cancel()
        }
    }

    /// The response handed on: the fields without `Content-Encoding` (URLSession decoded the
    /// body), and the body's size on the wire.
    static func response(_ raw: URLSessionTasks.Received) -> TransportResponse {
        var fields = TransportFields(raw.response.allHeaderFields.compactMap { key, value in
            (key as? String).map { (name: $0, value: "\(value)") }
        })
        var wire: Int?
        if fields.first(name: "content-encoding") != nil {
            fields = fields.removing("content-encoding")
            wire = fields.first(name: "content-length").flatMap { Int($0) } ?? raw.body.count
        }
        let reason = HTTPURLResponse.localizedString(forStatusCode: raw.response.statusCode)
        return TransportResponse(
            status: raw.response.statusCode, headers: fields, body: raw.body, headBytes: TransportResponse.headSize(reason: reason, fields: fields),
            wireBodyBytes: wire)
    }
}

/// The session's delegate: each running task's response and body, its size limit and deadline,
/// and the continuation its `get` waits on. Also, on Apple platforms, the extra certificate
/// authorities' trust evaluation.
final class URLSessionTasks: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What a finished task received.
    struct Received {
        var response: HTTPURLResponse
        var body: [UInt8]
    }

    private struct Running {
        var continuation: CheckedContinuation<Received, any Error>
        /// The request's limit, on the bytes as sent.
        var maxBody: Int
        /// The most decoded bytes taken: `maxBody` for an answer sent as it is; for a
        /// compressed one, whose decoded size the sync checks, at least 64 MiB.
        var maxDecoded: Int
        var timeout: Duration
        var response: HTTPURLResponse?
        var body: [UInt8] = []
    }

    /// DER certificates trusted besides the system's (Apple platforms; see ``URLSessionTransport``).
    let authorities: [[UInt8]]
    private let running = Locked<[Int: Running]>([:])

    init(authorities: [[UInt8]]) {
        self.authorities = authorities
    }

    /// Runs `task`, resuming `continuation` once it ends; cancels it past `timeout`.
    func start(_ task: URLSessionDataTask, maxBody: Int, timeout: Duration, continuation: CheckedContinuation<Received, any Error>) {
        let id = task.taskIdentifier
        running.withLock { $0[id] = Running(continuation: continuation, maxBody: maxBody, maxDecoded: maxBody, timeout: timeout) }
        let seconds = timeout.inSeconds
        Self.deadlines.asyncAfter(deadline: .now() + seconds) { [weak self, weak task] in
            guard let task else { return }
            self?.fail(task, TransportError.timedOut(timeout))
        }
        task.resume()
    }

    /// Where deadlines are kept: a queue of their own, so that busy global queues delay none.
    private static let deadlines = DispatchQueue(label: "folio.urlsession.deadlines")

    /// Ends a running `task` with `failure` now, and cancels it.
    private func fail(_ task: URLSessionTask, _ failure: TransportError) {
        guard let ended = running.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        ended.continuation.resume(throwing: failure)
        task.cancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        let over = running.withLock { running -> Bool in
            guard var task = running[dataTask.taskIdentifier] else { return false }
            task.response = http
            if http?.value(forHTTPHeaderField: "Content-Encoding") != nil { task.maxDecoded = max(task.maxBody, Self.decodedLimit) }
            running[dataTask.taskIdentifier] = task
            return (http?.value(forHTTPHeaderField: "Content-Length").flatMap { Int($0) } ?? 0) > task.maxBody
        }
        completionHandler(over ? .cancel : .allow)
        if over { fail(dataTask, Self.tooLarge) }
    }

    /// The most decoded bytes of a compressed answer (the manifest's own limit).
    static let decodedLimit = 64 << 20
    static let tooLarge = TransportError(.other, "the answer is larger than expected")

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let over = running.withLock { running -> Bool in
            guard running[dataTask.taskIdentifier] != nil else { return false }
            running[dataTask.taskIdentifier]!.body.append(contentsOf: data)
            return running[dataTask.taskIdentifier]!.body.count > running[dataTask.taskIdentifier]!.maxDecoded
        }
        if over { fail(dataTask, Self.tooLarge) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let done = running.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let error { return done.continuation.resume(throwing: Self.classify(error, timeout: done.timeout, authorities: !authorities.isEmpty)) }
        guard let response = done.response else {
            return done.continuation.resume(throwing: TransportError(.other, "the edge's answer is not HTTP"))
        }
        done.continuation.resume(returning: Received(response: response, body: done.body))
    }

    /// The error a failed task becomes: a cancellation stays one.
    static func classify(_ error: any Error, timeout: Duration, authorities: Bool) -> any Error {
        guard let e = error as? URLError else { return TransportError(.other, "the request failed (\(error.localizedDescription))") }
        switch e.code {
        case .cancelled: return CancellationError()
        case .timedOut: return TransportError.timedOut(timeout)
        case .cannotConnectToHost: return TransportError(.connectionRefused, "connection refused")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .clientCertificateRejected, .clientCertificateRequired:
            return TransportError(.tls, tlsMessage(authorities: authorities))
        case .cannotFindHost, .dnsLookupFailed: return TransportError(.other, "cannot resolve the edge's host")
        case .networkConnectionLost: return TransportError(.other, "the edge closed the connection")
        // FoundationNetworking says `unknown` for what libcurl reports, TLS failures among them.
        case .unknown where e.localizedDescription.contains("SSL"): return TransportError(.tls, tlsMessage(authorities: authorities))
        default: return TransportError(.other, "the request failed (\(e.localizedDescription))")
        }
    }

    /// What a failed handshake means, and what to do.
    static func tlsMessage(authorities: Bool) -> String {
        var text = "the TLS handshake failed: the edge's certificate is not trusted here, or it does not speak TLS"
        #if !canImport(Security)
        if authorities {
            text += "; URLSession on Linux trusts only the system's certificate authorities: add yours to the system's store"
        }
        #endif
        return text
    }

    #if canImport(Security)
    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
            let trust = challenge.protectionSpace.serverTrust, !authorities.isEmpty
        else { return completionHandler(.performDefaultHandling, nil) }
        if ServerTrust.evaluate(trust, anchors: authorities) {
            completionHandler(.useCredential, URLCredential(trust: trust))
        } else {
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
    #endif
}

/// FolioKit's transport for an edge URL: URLSession (``URLSessionTransport``).
package enum Transports {
    package static func forEdge(_ edge: String, configuration: FolioHTTPConfiguration = .init()) -> any Transport {
        var base = edge
        while base.hasSuffix("/") { base.removeLast() }
        return URLSessionTransport(base: base, configuration: configuration)
    }
}
