import NIOCore

/// Reads the frame headers of a client's HTTP/2 byte stream, ahead of the frame layer
/// (libnghttp2), and finds the floods it answers with GOAWAY ENHANCE_YOUR_CALM, with the limits
/// swift-nio-http2 applied before: more than 200 RST_STREAM frames in 30 s (rapid reset,
/// CVE-2023-44487); more than 200 PING, SETTINGS and PRIORITY frames in 30 s; more than 5
/// CONTINUATION frames in a row (CVE-2024-27316 family); more than one empty DATA frame in a
/// row without END_STREAM or a HEADERS frame between. Only the 9-byte frame headers are read;
/// payloads are skipped, and their checks are the frame layer's.
package struct HTTP2FloodGuard {
    package static let maxResets = 200
    package static let maxControlFrames = 200
    package static let window = TimeAmount.seconds(30)
    package static let maxContinuations = 5
    package static let maxEmptyData = 1

    package enum Flood: Equatable, Sendable {
        case resets, controlFrames, continuations, emptyData
    }

    /// The connection preface's 24 bytes, not frames.
    private var prefaceLeft = 24
    /// The bytes of a frame header read so far (at most 9, packed big-endian).
    private var header: UInt64 = 0
    private var headerBytes = 0
    /// Payload bytes of the current frame still to skip.
    private var payloadLeft = 0
    private var continuations = 0
    private var emptyData = 0
    private var resets = RateWindow(limit: maxResets)
    private var control = RateWindow(limit: maxControlFrames)

    package init() {}

    /// Reads `bytes`; returns how many of them come before the end of the frame that made a
    /// flood (all of them when none did), and the flood.
    package mutating func scan(_ bytes: UnsafeRawBufferPointer, now: @autoclosure () -> NIODeadline) -> (accepted: Int, flood: Flood?) {
        var i = 0
        let n = bytes.count
        if prefaceLeft > 0 {
            let skip = min(prefaceLeft, n)
            prefaceLeft -= skip
            i = skip
        }
        while i < n {
            if payloadLeft > 0 {
                let skip = min(payloadLeft, n - i)
                payloadLeft -= skip
                i += skip
                continue
            }
            header = header << 8 | UInt64(bytes[i])
            headerBytes += 1
            i += 1
            guard headerBytes == 9 else { continue }
            let length = Int(truncatingIfNeeded: header >> 48) & 0xFF_FFFF
            let type = UInt8(truncatingIfNeeded: header >> 40)
            let flags = UInt8(truncatingIfNeeded: header >> 32)
            header = 0
            headerBytes = 0
            payloadLeft = length
            if let flood = frame(type: type, flags: flags, length: length, now: now) {
                return (min(n, i + length), flood)
            }
        }
        return (n, nil)
    }

    private mutating func frame(type: UInt8, flags: UInt8, length: Int, now: () -> NIODeadline) -> Flood? {
        let endStream = flags & 0x1 != 0, endHeaders = flags & 0x4 != 0
        switch type {
        case 0x0:  // DATA
            if length == 0 { emptyData += 1 }
            if endStream { emptyData = 0 }
            if emptyData > Self.maxEmptyData { return .emptyData }
        case 0x1:  // HEADERS
            emptyData = 0
            continuations = 0
        case 0x9:  // CONTINUATION
            if !endHeaders {
                continuations += 1
                if continuations > Self.maxContinuations { return .continuations }
            } else {
                continuations = 0
            }
        case 0x3:  // RST_STREAM
            if !resets.record(now()) { return .resets }
        case 0x2, 0x4, 0x6:  // PRIORITY, SETTINGS, PING
            if !control.record(now()) { return .controlFrames }
        default:
            break
        }
        return nil
    }

    /// The times of the last `limit` events: one more within the window is too many.
    struct RateWindow {
        let limit: Int
        private var times: [NIODeadline] = []
        private var next = 0

        init(limit: Int) { self.limit = limit }

        /// false when this event is the limit's + 1st within the window.
        mutating func record(_ now: NIODeadline) -> Bool {
            if times.count < limit {
                times.append(now)
                return true
            }
            let oldest = times[next]
            times[next] = now
            next = (next + 1) % limit
            return now - oldest >= HTTP2FloodGuard.window
        }
    }
}
