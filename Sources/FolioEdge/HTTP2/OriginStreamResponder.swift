import CNghttp2
import FolioHTTPCore
import NIOCore
import NIOPosix

/// The origin's answers over HTTP/2 on libnghttp2 (`EdgeNGHTTP2Handler`): each stream's
/// request is answered as `OriginStreamRequests` says and submitted from the prepared fields
/// and body.
final class OriginStreamResponder: NGHTTP2StreamResponder {
    let keepsRequestBodies = false
    private let requests: OriginStreamRequests

    init(
        store: SiteStore, limits: ConnectionLimits, metrics: EdgeMetrics, accessLog: AccessLogSink?, fileIO: NIOThreadPool,
        extraLines: String, role: ListenerRole
    ) {
        requests = OriginStreamRequests(
            store: store, limits: limits, metrics: metrics, accessLog: accessLog, fileIO: fileIO, extraLines: extraLines, role: role)
    }

    func answer(_ id: Int32, head: ByteBuffer, body: ByteBuffer?, on h2: EdgeNGHTTP2Handler) {
        guard let channel = h2.context?.channel else { return }
        requests.answer(head, channel) { answer, withBody in
            submit(answer, id, withBody: withBody, h2)
        } fromDisk: { answer, request, start, details in
            readFromDisk(answer, id, request: request, start: start, details: details, h2)
        }
    }

    /// Submits the answer's HEADERS and, unless the request was a HEAD, its body; returns the
    /// body bytes sent, or -1 when the body must be read from disk first (the HEADERS are
    /// submitted, the DATA deferred).
    private func submit(_ answer: EdgeAnswer, _ id: Int32, withBody: Bool, _ h2: EdgeNGHTTP2Handler) -> Int {
        h2.beginFields()
        switch answer {
        case .simple(let s):
            let sendBody = withBody && !s.omitBody
            let body = ByteBuffer(string: s.body)
            h2.status(s.status)
            h2.field("content-type", s.contentType)
            h2.field("content-length", s.body.utf8.count)
            h2.field("cache-control", "no-store")
            for (name, value) in s.extra { h2.field(name, value, lower: true) }
            commonFields(h2)
            h2.send(id, body: sendBody ? body : nil)
            return sendBody ? body.readableBytes : 0
        case .notModified(let rep):
            h2.status(304)
            for (name, value) in rep.fields304 { h2.field(name, value) }
            commonFields(h2)
            h2.send(id, body: nil)
            return 0
        case .full(let rep):
            h2.status(200)
            for (name, value) in rep.fields { h2.field(name, value) }
            h2.field("content-length", rep.length)
            commonFields(h2)
            guard withBody else {
                h2.send(id, body: nil)
                return 0
            }
            h2.send(id, body: rep.body, waiting: rep.body == nil)
            return rep.body?.readableBytes ?? -1
        case .partial(let rep, let r):
            h2.status(206)
            for (name, value) in rep.fields { h2.field(name, value) }
            h2.field("content-range", "bytes \(r.lowerBound)-\(r.upperBound)/\(rep.length)")
            h2.field("content-length", r.count)
            commonFields(h2)
            let slice = rep.body.map { $0.getSlice(at: $0.readerIndex + r.lowerBound, length: r.count)! }
            h2.send(id, body: slice, waiting: slice == nil)
            return slice?.readableBytes ?? -1
        }
    }

    /// The Date and the listener's own fields.
    private func commonFields(_ h2: EdgeNGHTTP2Handler) {
        h2.field("date", requests.date)
        for (name, value) in requests.extraFields { h2.field(name, value) }
    }

    /// Over the memory budget: the body is read on the thread pool, then sent; a file that
    /// cannot be read (or changed size) resets the stream.
    private func readFromDisk(
        _ answer: EdgeAnswer, _ id: Int32, request: ParsedRequest, start: NIODeadline, details: RequestDetails?, _ h2: EdgeNGHTTP2Handler
    ) {
        guard let loop = h2.context?.eventLoop, let read = requests.readBody(answer, on: loop, allocator: h2.allocator) else { return }
        let bound = NIOLoopBound((requests, h2), eventLoop: loop)
        read.whenSuccess { body in
            let (requests, h2) = bound.value
            guard h2.isOpen(id) else { return }
            guard let body else {
                h2.reset(id, NGHTTP2_INTERNAL_ERROR)
                requests.record(request.method.name, request.target.string, 500, 0, start, details)
                return h2.flushOutput()
            }
            h2.resume(id, body: body)
            requests.record(request.method.name, request.target.string, answer.status, body.readableBytes, start, details)
        }
    }
}
