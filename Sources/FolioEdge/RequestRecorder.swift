import Foundation
import Logging
import NIOCore
import Synchronization

/// Records each answered request of one connection: the metrics, and a line of the access log
/// when there is one (its request id is the connection's number and the request's).
struct RequestRecorder {
    let metrics: EdgeMetrics
    let accessLog: AccessLogSink?
    let connectionID: UInt64
    /// The log's format wants the request's `RequestDetails` (client address, protocol, Referer,
    /// User-Agent): the handlers read them only then.
    let wantsDetails: Bool

    static let nextConnectionID = Atomic<UInt64>(0)

    init(metrics: EdgeMetrics, accessLog: AccessLogSink?) {
        self.metrics = metrics
        self.accessLog = accessLog
        connectionID = Self.nextConnectionID.add(1, ordering: .relaxed).newValue
        if case .lines = accessLog { wantsDetails = true } else { wantsDetails = false }
    }

    /// Records the request answered now, started at `start`; returns now. `target` and
    /// `details` are read only for the log.
    @discardableResult
    func record(
        _ requestNumber: Int, method: String, target: @autoclosure () -> String, status: Int, bytes: Int, since start: NIODeadline,
        details: @autoclosure () -> RequestDetails? = nil
    ) -> NIODeadline {
        let now = NIODeadline.now()
        let elapsed = now - start
        metrics.record(status: status, bytes: bytes, nanoseconds: elapsed.nanoseconds)
        switch accessLog {
        case nil:
            break
        case .text(let log):
            log.info(
                "request",
                metadata: [
                    "request_id": "\(connectionID)-\(requestNumber)",
                    "method": "\(method)",
                    "path": "\(target())",
                    "status": "\(status)",
                    "bytes": "\(bytes)",
                    "duration_us": "\(elapsed.nanoseconds / 1000)",
                ])
        case .lines(let writer, let format):
            let record = AccessLogRecord(
                time: Date(), details: details() ?? RequestDetails(remoteAddress: "-", protocolName: "-"), method: method, target: target(),
                status: status, bytes: bytes, durationMicroseconds: elapsed.nanoseconds / 1000, requestID: "\(connectionID)-\(requestNumber)")
            writer.write(record.line(format))
        }
        return now
    }
}

extension Channel {
    /// The client's address for the access log (`-` when there is none).
    var remoteAddressForLog: String {
        remoteAddress?.ipAddress ?? (remoteAddress?.pathname.map { "unix:\($0)" } ?? "-")
    }
}
