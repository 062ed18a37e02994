import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The metrics and the access-log line of each answer of one tier connection, over HTTP/1.1
/// (`ProxyHandler`) and HTTP/2 (`TierStreamResponder`).
struct TierRecorder {
    let metrics: EdgeMetrics
    let accessLog: AccessLogSink?
    let role: ListenerRole
    /// The access log's request id: this connection's number (taken at its first line) and the request's.
    private var connectionID: UInt64?
    private var requestNumber = 0

    init(metrics: EdgeMetrics, accessLog: AccessLogSink?, role: ListenerRole) {
        self.metrics = metrics
        self.accessLog = accessLog
        self.role = role
    }

    /// Metrics for every answer; an access log line when enabled. `cacheStatus` nil is a plain
    /// hit; `bytes` is the answer as written, its head first. The client's address and the
    /// protocol's name are read only for a combined or JSON line.
    mutating func record(
        _ head: HTTPRequestHead, _ started: NIODeadline, status: Int, cacheStatus: String?, bytes: [ByteBuffer],
        remoteAddress: @autoclosure () -> String, protocolName: @autoclosure () -> String
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
            let connection = connectionID ?? RequestRecorder.nextConnectionID.add(1, ordering: .relaxed).newValue
            connectionID = connection
            let details = RequestDetails(
                remoteAddress: remoteAddress(), protocolName: head.uri == "-" ? "-" : protocolName(),
                referer: head.headers.first(name: "referer"), userAgent: head.headers.first(name: "user-agent"))
            let line = AccessLogRecord(
                time: Date(), details: details, method: head.uri == "-" ? "-" : "\(head.method)", target: head.uri, status: status,
                bytes: body, durationMicroseconds: elapsed / 1000, requestID: "\(connection)-\(requestNumber)")
            writer.write(line.line(format))
        }
    }
}
