import Logging
import NIOCore
import Synchronization

/// Records each answered request of one connection: the metrics, and a line of the access log
/// when there is one (its request id is the connection's number and the request's).
struct RequestRecorder {
    let metrics: EdgeMetrics
    let accessLog: Logger?
    let connectionID: UInt64

    static let nextConnectionID = Atomic<UInt64>(0)

    init(metrics: EdgeMetrics, accessLog: Logger?) {
        self.metrics = metrics
        self.accessLog = accessLog
        connectionID = Self.nextConnectionID.add(1, ordering: .relaxed).newValue
    }

    /// Records the request answered now, started at `start`; returns now. `target` is read only
    /// for the log.
    @discardableResult
    func record(
        _ requestNumber: Int, method: String, target: @autoclosure () -> String, status: Int, bytes: Int, since start: NIODeadline
    ) -> NIODeadline {
        let now = NIODeadline.now()
        let elapsed = now - start
        metrics.record(status: status, bytes: bytes, nanoseconds: elapsed.nanoseconds)
        guard let log = accessLog else { return now }
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
        return now
    }
}
