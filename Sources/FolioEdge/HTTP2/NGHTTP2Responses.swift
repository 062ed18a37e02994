import CNghttp2
import FolioHTTPCore
import Foundation
import NIOCore

/// The responses of an `EdgeNGHTTP2Handler`: a responder gathers a response's fields
/// (`beginFields`, `status`, `field`) into one reused buffer and submits them with a body
/// (`send`), which nghttp2 reads as flow control allows (`readBody`); a body still being made
/// (read from disk) is deferred and resumed (`resume`).
extension EdgeNGHTTP2Handler {
    var allocator: ByteBufferAllocator { context?.channel.allocator ?? ByteBufferAllocator() }

    /// Whether stream `id` still waits for its answer (not reset, not closed).
    func isOpen(_ id: Int32) -> Bool { streams[id] != nil }

    func beginFields() {
        nvBytes.clear()
        nvSpans.removeAll(keepingCapacity: true)
    }

    func status(_ code: Int) {
        let start = nvBytes.writerIndex
        nvBytes.writeStaticString(":status")
        let name = start..<nvBytes.writerIndex
        nvBytes.writeInteger(UInt8(ascii: "0") + UInt8(code / 100 % 10))
        nvBytes.writeInteger(UInt8(ascii: "0") + UInt8(code / 10 % 10))
        nvBytes.writeInteger(UInt8(ascii: "0") + UInt8(code % 10))
        nvSpans.append((name, name.upperBound..<nvBytes.writerIndex))
    }

    func field(_ name: String, _ value: String, lower: Bool = false) {
        let start = nvBytes.writerIndex
        nvBytes.writeString(name)
        if lower {
            for i in start..<nvBytes.writerIndex {
                let b = nvBytes.getInteger(at: i, as: UInt8.self)!
                if b >= 0x41 && b <= 0x5A { nvBytes.setInteger(b | 0x20, at: i) }
            }
        }
        let nameEnd = nvBytes.writerIndex
        nvBytes.writeString(value)
        nvSpans.append((start..<nameEnd, nameEnd..<nvBytes.writerIndex))
    }

    func field(_ name: StaticString, _ value: Int) {
        let start = nvBytes.writerIndex
        nvBytes.writeStaticString(name)
        let nameEnd = nvBytes.writerIndex
        var digits = value == 0 ? 1 : 0
        var v = value
        while v > 0 {
            digits += 1
            v /= 10
        }
        nvBytes.writeRepeatingByte(0, count: digits)
        v = value
        for i in stride(from: nvBytes.writerIndex - 1, through: nameEnd, by: -1) {
            nvBytes.setInteger(UInt8(ascii: "0") + UInt8(v % 10), at: i)
            v /= 10
        }
        nvSpans.append((start..<nameEnd, nameEnd..<nvBytes.writerIndex))
    }

    /// Submits the fields gathered, and a body (or one read later, when `waiting`).
    func send(_ id: Int32, body: ByteBuffer?, waiting: Bool = false) {
        guard let session else { return }
        let hasBody = waiting || (body.map { $0.readableBytes > 0 } ?? false)
        if hasBody {
            streams[id]?.response = body
            streams[id]?.waiting = waiting
        }
        let base = nvBytes.readerIndex
        nvBytes.withUnsafeMutableReadableBytes { raw in
            let pointer = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            nv.removeAll(keepingCapacity: true)
            for (name, value) in nvSpans {
                nv.append(
                    nghttp2_nv(
                        name: pointer + (name.lowerBound - base), value: pointer + (value.lowerBound - base),
                        namelen: name.count, valuelen: value.count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            if hasBody {
                var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil)) { _, id, buffer, length, flags, _, user in
                    guard let user, let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
                    let handler = Unmanaged<EdgeNGHTTP2Handler>.fromOpaque(user).takeUnretainedValue()
                    return handler.readBody(id, UnsafeMutableRawBufferPointer(start: buffer, count: length), flags)
                }
                nghttp2_submit_response(session, id, nv, nv.count, &provider)
            } else {
                nghttp2_submit_response(session, id, nv, nv.count, nil)
            }
        }
    }

    private func readBody(_ id: Int32, _ buffer: UnsafeMutableRawBufferPointer, _ flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard var stream = streams.removeValue(forKey: id) else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        defer { streams[id] = stream }
        if stream.waiting { return Int(NGHTTP2_ERR_DEFERRED.rawValue) }
        guard var body = stream.response else {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            return 0
        }
        let count = min(buffer.count, body.readableBytes)
        body.withUnsafeReadableBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]).copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        body.moveReaderIndex(forwardBy: count)
        if body.readableBytes == 0 {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            stream.response = nil
        } else {
            stream.response = body
        }
        return count
    }

    /// Over the memory budget: the body is read on the thread pool, then sent; a file that

    /// The body of a stream whose HEADERS went out with `send(waiting: true)`: sent now.
    func resume(_ id: Int32, body: ByteBuffer) {
        guard let session, streams[id] != nil else { return }
        streams[id]?.response = body
        streams[id]?.waiting = false
        nghttp2_session_resume_data(session, id)
        flushOutput()
    }
}
