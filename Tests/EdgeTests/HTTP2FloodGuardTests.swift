import FolioHTTPCore
import NIOCore
import Testing

/// The frame-header scanner in front of libnghttp2: which floods it finds, where, and what it
/// lets through.
@Suite("HTTP/2 flood guard")
struct HTTP2FloodGuardTests {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    static func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
        let n = payload.count
        return [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), type, flags,
                UInt8(stream >> 24), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    static func scan(_ bytes: [UInt8], at now: NIODeadline = .uptimeNanoseconds(1 << 40)) -> (accepted: Int, flood: HTTP2FloodGuard.Flood?) {
        var guardian = HTTP2FloodGuard()
        return bytes.withUnsafeBytes { guardian.scan($0, now: now) }
    }

    static let ping = frame(6, 0, 0, Array(repeating: 0, count: 8))
    static let headers = frame(1, 5, 1, [0x82, 0x84, 0x87])

    @Test("201 PINGs within 30 s are a flood, found at the end of the 201st frame; 200 are not")
    func pings() {
        let settings = Self.frame(4, 0, 0)
        let ok = Self.preface + settings + Array(Array(repeating: Self.ping, count: 199).joined())
        #expect(Self.scan(ok) == (ok.count, nil))
        let flood = ok + Self.ping + Self.ping + Self.headers
        let r = Self.scan(flood)
        // SETTINGS and 199 PINGs are 200 control frames; the next PING is the 201st.
        #expect(r.flood == HTTP2FloodGuard.Flood.controlFrames && r.accepted == ok.count + Self.ping.count)
    }

    @Test("events spread over more than 30 s are no flood")
    func window() {
        var guardian = HTTP2FloodGuard()
        let start = NIODeadline.uptimeNanoseconds(1 << 40)
        _ = Self.preface.withUnsafeBytes { guardian.scan($0, now: start) }
        for i in 0..<1000 {
            // One PING every 200 ms: 150 in any 30 s.
            let r = Self.ping.withUnsafeBytes { guardian.scan($0, now: start + .milliseconds(Int64(i) * 200)) }
            #expect(r.flood == nil, "PING \(i)")
        }
    }

    @Test("rapid reset: 201 RST_STREAM frames")
    func resets() {
        var bytes = Self.preface
        for i in 0..<201 { bytes += Self.frame(1, 5, UInt32(1 + 2 * i), [0x82]) + Self.frame(3, 0, UInt32(1 + 2 * i), [0, 0, 0, 8]) }
        let r = Self.scan(bytes)
        #expect(r.flood == HTTP2FloodGuard.Flood.resets && r.accepted == bytes.count)
        #expect(Self.scan(Array(bytes.dropLast(13 + 10))).flood == nil)
    }

    @Test("six CONTINUATION frames without END_HEADERS are a flood; five and an end are not")
    func continuations() {
        let start = Self.preface + Self.frame(1, 0, 1, [0x82])
        let five = start + Array(Array(repeating: Self.frame(9, 0, 1), count: 5).joined())
        #expect(Self.scan(five + Self.frame(9, 4, 1, [0x84])).flood == nil)
        #expect(Self.scan(five + Self.frame(9, 0, 1)).flood == .continuations)
    }

    @Test("two empty DATA frames in a row are a flood; END_STREAM or HEADERS between resets the count")
    func emptyData() {
        let start = Self.preface + Self.frame(1, 4, 1, [0x83])
        let empty = Self.frame(0, 0, 1)
        #expect(Self.scan(start + empty + empty).flood == .emptyData)
        #expect(Self.scan(start + empty + Self.frame(0, 1, 1) + empty).flood == nil)
        #expect(Self.scan(start + empty + Self.frame(0, 0, 1, [1]) + empty).flood == .emptyData)
    }

    @Test("payloads are skipped, whatever their bytes, across reads of any size")
    func pieces() {
        // A DATA payload full of bytes that would read as PING headers.
        let payload = Array(Array(repeating: Self.ping, count: 300).joined())
        let bytes = Self.preface + Self.frame(1, 4, 1, [0x83]) + Self.frame(0, 1, 1, Array(payload.prefix(16000)))
        for step in [1, 7, 9, 1000] {
            var guardian = HTTP2FloodGuard()
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + step)
                let r = bytes[offset..<end].withUnsafeBytes { guardian.scan($0, now: .uptimeNanoseconds(1 << 40)) }
                #expect(r == (end - offset, nil), "step \(step) at \(offset)")
                offset = end
            }
        }
    }
}
