import FolioHTTPCore
import NIOCore

/// A deploy request on an HTTP/1.1 connection while its body arrives: the connection handler
/// feeds it bytes until the body is whole, then hands the request to ``EdgeDeploy``.
struct DeployUpload {
    private(set) var request: DeployRequest
    /// Body bytes still to come.
    private(set) var remaining: Int
    /// The answer to send without reading the body (then the connection closes).
    private(set) var refusal: DeployResponse?

    private static let prefix = Array(DeployRoute.base.utf8)

    /// Whether a request target is one of the deploy endpoints (a cheap look at its bytes).
    static func matches(_ target: HeaderValue) -> Bool {
        target.bytes.starts(with: prefix) && (target.count == prefix.count || [UInt8(ascii: "/"), UInt8(ascii: "?")].contains(target.bytes[prefix.count]))
    }

    /// A deploy request whose head is `head`; refused at once when deploys are off, when it is
    /// not authorized, chunked or too large.
    init(_ parsed: ParsedRequest, head: UnsafeRawBufferPointer, deploy: EdgeDeploy?) {
        let target = parsed.target.string
        let path = target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
        request = DeployRequest(
            method: parsed.method.name, path: path, authorization: DeployRequest.field("authorization", inHead: Array(head)), body: [])
        remaining = parsed.contentLength
        if let deploy {
            refusal = deploy.refusal(authorization: request.authorization)
        } else {
            refusal = .text(403, "deploys are disabled on this edge: start folio-edge with --root and --deploy-token-file FILE")
        }
        if refusal == nil, parsed.chunked { refusal = .text(411, "send the deploy request with a Content-Length, not chunked") }
        if refusal == nil, remaining > DeployRequest.maxBody {
            refusal = .text(413, "\(path): \(remaining) bytes is more than a deploy request may carry (\(DeployRequest.maxBody) bytes)")
        }
        if refusal == nil { request.body.reserveCapacity(remaining) }
    }

    /// Takes what it still needs of `buffer`'s bytes; true when the body is whole.
    mutating func absorb(_ buffer: inout ByteBuffer) -> Bool {
        let n = min(remaining, buffer.readableBytes)
        if n > 0 {
            buffer.withUnsafeReadableBytes { request.body.append(contentsOf: $0.prefix(n)) }
            buffer.moveReaderIndex(forwardBy: n)
            remaining -= n
        }
        return remaining == 0
    }
}
