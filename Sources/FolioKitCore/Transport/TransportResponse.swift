/// The edge's answer: its status, fields and body, with the bytes it took on the wire for the
/// sync's counts. The one response type of every transport.
///
/// The body is as sent (still in its content coding, which the sync decodes with its own size
/// limit) unless the transport decoded it already: URLSession decodes gzip and brotli by itself
/// and takes `Content-Encoding` out of what it hands on (``wireBodyBytes`` then says what came).
package struct TransportResponse: Sendable {
    package var status: Int
    package var headers: TransportFields
    package var body: [UInt8]
    /// The status line's and fields' bytes, as received (or as close as the transport can tell).
    package var headBytes: Int
    /// The body's bytes on the wire when the transport decoded it; nil when `body` is as sent.
    package var wireBodyBytes: Int?

    package init(status: Int, headers: TransportFields, body: [UInt8], headBytes: Int, wireBodyBytes: Int? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.headBytes = headBytes
        self.wireBodyBytes = wireBodyBytes
    }

    /// The body's bytes as they came over the wire.
    package var bodyBytesOnWire: Int { wireBodyBytes ?? body.count }

    /// A head's size as an HTTP/1.1 response would have it: the status line and each field.
    package static func headSize(reason: String, fields: TransportFields) -> Int {
        fields.reduce(17 + reason.utf8.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }
}

/// Response fields in the order received; names compare case-insensitively.
package struct TransportFields: Sendable, Sequence, ExpressibleByArrayLiteral, CustomStringConvertible {
    package private(set) var fields: [(name: String, value: String)]

    package init(_ fields: [(name: String, value: String)]) { self.fields = fields }
    package init(arrayLiteral elements: (String, String)...) { fields = elements.map { (name: $0.0, value: $0.1) } }

    /// The value of the first field named `name`.
    package func first(name: String) -> String? { fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }

    /// The value of every field named `name`, one per line received.
    package subscript(name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Without the fields named `name`.
    package func removing(_ name: String) -> TransportFields {
        TransportFields(fields.filter { $0.name.caseInsensitiveCompare(name) != .orderedSame })
    }

    package func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    package var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: ", ") }
}
