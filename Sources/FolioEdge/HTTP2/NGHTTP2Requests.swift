import CNghttp2
import FolioHTTPCore
import Foundation
import NIOCore

/// The requests of an `EdgeNGHTTP2Handler`: each stream's header block is written, as nghttp2
/// decodes it, as an HTTP/1.1 head (the pseudo-header fields give the request line and `Host`;
/// connection-specific fields are dropped), which the stream's responder reads with the mode's
/// HTTP/1.1 parser, so both protocols share its limits and its view of a request.
extension EdgeNGHTTP2Handler {

    /// RFC 9113 §5.1.1: a HEADERS frame on a client stream identifier below the highest one
    /// opened, of a stream that is not open (never used, so closed when a higher one was
    /// opened), is a connection error PROTOCOL_ERROR. (libnghttp2 ignores the block, so that
    /// trailers racing a RST_STREAM it sent do not end the connection; this edge resets a
    /// stream only for a malformed or oversized request, after which no trailers are due.)
    func beginHeadersFrame(_ id: Int32) -> Int32 {
        if id & 1 == 1, id < highestRequestID, let session, nghttp2_session_find_stream(session, id) == nil {
            nghttp2_session_terminate_session(session, NGHTTP2_PROTOCOL_ERROR.rawValue)
            stopped = true
        }
        return 0
    }

    func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        guard frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        currentID = frame.pointee.hd.stream_id
        highestRequestID = max(highestRequestID, currentID)
        // One buffer for every header block of the connection: a request that ends with its
        // HEADERS (a GET, a HEAD) is answered from it; one with a body keeps a copy.
        var head = current.head
        current = Stream(head: empty)
        head.clear()
        current.head = head
        pseudo.clear()
        method = nil
        path = nil
        authority = nil
        return 0
    }

    static let temporalFailure = NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue

    func header(_ frame: UnsafePointer<nghttp2_frame>, _ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Int32 {
        guard frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }  // trailers: not used
        guard frame.pointee.hd.stream_id == currentID, currentID != 0 else { return 0 }
        // RFC 9113 §6.5.2's size: name, value and 32 bytes each.
        current.headerBytes += name.count + value.count + 32
        if current.headerBytes > maxHeaderBytes {
            currentID = 0
            nghttp2_session_terminate_session(session, NGHTTP2_COMPRESSION_ERROR.rawValue)
            stopped = true
            return Self.temporalFailure
        }
        if name.first == UInt8(ascii: ":") {
            let start = pseudo.writerIndex
            pseudo.writeBytes(value)
            let range = start..<pseudo.writerIndex
            switch name.count {
            case 5 where Self.equal(name, ":path"): path = range
            case 7 where Self.equal(name, ":method"): method = range
            case 10 where Self.equal(name, ":authority"): authority = range
            default: break
            }
            return 0
        }
        // A regular field before :method and :path: nghttp2 resets the stream when it sees a
        // pseudo-header field after it, or none; this handler skips the rest of the block.
        guard !current.invalid else { return 0 }
        guard current.lineWritten || writeRequestLine(&current) else {
            current.invalid = true
            return 0
        }
        // Fields never passed on (RFC 9113 §8.2.2), and Host when :authority gave it.
        if Self.isDropped(name) || (authority != nil && name.count == 4 && Self.equal(name, "host")) { return 0 }
        guard Self.isFieldValue(value) else {
            current.invalid = true
            return 0
        }
        current.head.writeBytes(name)
        current.head.writeStaticString(": ")
        current.head.writeBytes(value)
        current.head.writeStaticString("\r\n")
        return 0
    }

    /// `METHOD path HTTP/1.1` and Host from the pseudo-header fields; false (the stream is
    /// reset) when one is missing or could not be written as HTTP/1.1.
    private func writeRequestLine(_ stream: inout Stream) -> Bool {
        guard let method, let path else { return false }
        let ok = pseudo.withUnsafeReadableBytes { raw -> Bool in
            let m = UnsafeRawBufferPointer(rebasing: raw[method]), p = UnsafeRawBufferPointer(rebasing: raw[path])
            guard !m.isEmpty, !p.isEmpty, Self.isFieldValue(m), Self.isFieldValue(p), !m.contains(0x20), !p.contains(0x20) else { return false }
            stream.head.writeBytes(m)
            stream.head.writeStaticString(" ")
            stream.head.writeBytes(p)
            stream.head.writeStaticString(" HTTP/1.1\r\n")
            if let authority {
                let a = UnsafeRawBufferPointer(rebasing: raw[authority])
                guard Self.isFieldValue(a) else { return false }
                stream.head.writeStaticString("Host: ")
                stream.head.writeBytes(a)
                stream.head.writeStaticString("\r\n")
            }
            return true
        }
        stream.lineWritten = ok
        return ok
    }

    func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        let hd = frame.pointee.hd
        let endStream = hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            guard frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else {
                // Trailers: not used, but their END_STREAM ends the request.
                if endStream, let head = streams[hd.stream_id]?.head { deliver(hd.stream_id, head) }
                break
            }
            guard hd.stream_id == currentID else { break }
            currentID = 0
            guard !current.invalid, current.lineWritten || writeRequestLine(&current) else {
                reset(hd.stream_id, NGHTTP2_PROTOCOL_ERROR)
                break
            }
            current.head.writeStaticString("\r\n")
            if endStream {
                streams[hd.stream_id] = Stream(head: empty)
                deliver(hd.stream_id, current.head)
            } else {
                var stream = current
                stream.head = current.head
                streams[hd.stream_id] = stream
            }
        case NGHTTP2_DATA.rawValue:
            if endStream, let head = streams[hd.stream_id]?.head { deliver(hd.stream_id, head) }
        default:
            break
        }
        return 0
    }

    /// A request body is kept only for a responder that uses it; one past 1 MiB resets the stream.
    func dataReceived(_ id: Int32, _ data: UnsafeRawBufferPointer) -> Int32 {
        guard let body = streams[id]?.body else { return 0 }
        guard body + data.count <= HTTP2StreamBridge.maxRequestBody else {
            reset(id, NGHTTP2_REFUSED_STREAM)
            return 0
        }
        streams[id]?.body = body + data.count
        if responder.keepsRequestBodies, !data.isEmpty {
            if streams[id]?.requestBody == nil, let context { streams[id]?.requestBody = context.channel.allocator.buffer(capacity: data.count) }
            streams[id]?.requestBody?.writeBytes(data)
        }
        return 0
    }

    /// A request whose stream ended: to the responder, with its body when kept.
    private func deliver(_ id: Int32, _ head: ByteBuffer) {
        let body = streams[id]?.requestBody
        streams[id]?.requestBody = nil
        responder.answer(id, head: head, body: body, on: self)
    }

    // MARK: Bytes

    static func equal(_ bytes: UnsafeRawBufferPointer, _ s: StaticString) -> Bool {
        guard bytes.count == s.utf8CodeUnitCount else { return false }
        return memcmp(bytes.baseAddress!, s.utf8Start, bytes.count) == 0
    }

    /// connection, keep-alive, proxy-connection, transfer-encoding, upgrade, te, content-length.
    static func isDropped(_ name: UnsafeRawBufferPointer) -> Bool {
        switch name.count {
        case 2: equal(name, "te")
        case 7: equal(name, "upgrade")
        case 10: equal(name, "connection") || equal(name, "keep-alive")
        case 14: equal(name, "content-length")
        case 16: equal(name, "proxy-connection")
        case 17: equal(name, "transfer-encoding")
        default: false
        }
    }

    /// No CR, LF or NUL (nghttp2 checks this too; the HTTP/1.1 head must never split).
    private static func isFieldValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for b in bytes where b == 0x0D || b == 0x0A || b == 0 { return false }
        return true
    }
}
