import FolioHTTPCore
import FolioSupport
import Foundation
import NIOCore
import NIOPosix

/// What both of the origin's HTTP/2 layers do with a stream's request (libnghttp2's
/// `OriginStreamResponder`, swift-nio-http2's `EdgeHTTP2Handler`): its head, in HTTP/1.1 form,
/// is read by the shared parser and answered by the same `EdgeResponder` as HTTP/1.1; each
/// answer is recorded; a body over the memory budget is read on the thread pool. One per
/// connection; the layer writes the answers.
final class OriginStreamRequests {
    private var responder: EdgeResponder
    private let parser: HTTPRequestParser
    private let recorder: RequestRecorder
    private let fileIO: NIOThreadPool
    /// Fields sent on every response of this listener (`strict-transport-security`).
    let extraFields: [(String, String)]
    private var requestNumber = 0
    /// The client's address, read for the access log when its format wants it.
    private var clientAddress: String?
    private var dateSecond = -1
    private var dateText = ""

    init(
        store: SiteStore, limits: ConnectionLimits, metrics: EdgeMetrics, accessLog: AccessLogSink?, fileIO: NIOThreadPool,
        extraLines: String, role: ListenerRole
    ) {
        responder = EdgeResponder(store: store, role: role, metrics: metrics)
        parser = HTTPRequestParser(maxTargetBytes: limits.maxURIBytes, maxHeadBytes: limits.maxHeaderBytes, maxHeaderCount: limits.maxHeaderCount)
        recorder = RequestRecorder(metrics: metrics, accessLog: accessLog)
        self.fileIO = fileIO
        extraFields = HeaderLines.fields(extraLines)
    }

    /// Answers a complete request (`head` with its blank line): `write` sends an answer (with
    /// its body or not) and returns the body bytes sent, or -1 when the body is on disk, which
    /// `fromDisk` then reads and sends.
    func answer(
        _ head: ByteBuffer, _ channel: Channel, write: (EdgeAnswer, _ withBody: Bool) -> Int,
        fromDisk: (EdgeAnswer, ParsedRequest, NIODeadline, RequestDetails?) -> Void
    ) {
        requestNumber += 1
        let start = NIODeadline.now()
        head.withUnsafeReadableBytes { bytes in
            let details = recorder.wantsDetails ? self.details(bytes, channel) : nil
            switch parser.parse(bytes) {
            case .request(let request, _):
                let answer = responder.answer(request).answer
                let sent = write(answer, request.method != .head)
                if sent >= 0 { record(request.method.name, request.target.string, answer.status, sent, start, details) }
                if sent < 0 { fromDisk(answer, request.owned(), start, details) }
            case .failure(let error):
                let answer = EdgeAnswer.simple(SimpleAnswer(status: error.status, reason: error.reason, body: error.message + "\n"))
                record("-", "-", error.status, write(answer, true), start, details)
            case .incomplete:
                let answer = EdgeAnswer.simple(SimpleAnswer(status: 400, reason: "Bad Request", body: "incomplete request head\n"))
                record("-", "-", 400, write(answer, true), start, details)
            }
        }
    }

    /// The access log's details of a stream's request (its head in HTTP/1.1 form).
    private func details(_ head: UnsafeRawBufferPointer, _ channel: Channel) -> RequestDetails {
        if clientAddress == nil { clientAddress = channel.remoteAddressForLog }
        return RequestDetails(head: head, remoteAddress: clientAddress ?? "-", protocolName: "HTTP/2.0")
    }

    func record(
        _ method: String, _ target: @autoclosure () -> String, _ status: Int, _ bytes: Int, _ start: NIODeadline, _ details: RequestDetails?
    ) {
        recorder.record(requestNumber, method: method, target: target(), status: status, bytes: max(bytes, 0), since: start, details: details)
    }

    /// The Date field's value, made once a second.
    var date: String {
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            dateText = HTTPDate.format(Int64(now))
        }
        return dateText
    }

    /// Reads on the thread pool the body of a full or partial answer whose file is over the
    /// memory budget (its range only); nil when the file cannot be read or changed size.
    func readBody(_ answer: EdgeAnswer, on loop: any EventLoop, allocator: ByteBufferAllocator) -> EventLoopFuture<ByteBuffer?>? {
        let (rep, range): (Representation, ClosedRange<Int>?)
        switch answer {
        case .full(let r): (rep, range) = (r, nil)
        case .partial(let r, let part): (rep, range) = (r, part)
        default: return nil
        }
        guard let path = rep.filePath else { return nil }
        return fileIO.runIfActive(eventLoop: loop) { try FileIO.read(path) }.map { bytes -> ByteBuffer? in
            guard bytes.count == rep.length else { return nil }
            var buffer = allocator.buffer(capacity: range?.count ?? bytes.count)
            if let range { buffer.writeBytes(bytes[range]) } else { buffer.writeBytes(bytes) }
            return buffer
        }.recover { _ in nil }
    }
}
