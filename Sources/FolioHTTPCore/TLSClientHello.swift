/// The parts of a TLS ClientHello (RFC 8446 §4.1.2) a server looks at before choosing how to
/// answer: the server name (SNI, RFC 6066 §3) and the offered application protocols (ALPN,
/// RFC 7301). Read from the first bytes of a connection, across handshake records.
package struct TLSClientHello: Sendable, Equatable {
    package var serverName: String?
    package var alpn: [String]

    package init(serverName: String?, alpn: [String]) {
        self.serverName = serverName
        self.alpn = alpn
    }

    package enum Parse: Sendable, Equatable {
        /// More bytes are needed.
        case incomplete
        /// Not a ClientHello (or a malformed one): let the TLS handler answer it.
        case notHello
        case hello(TLSClientHello)
    }

    /// The largest ClientHello read (its records are buffered until it is whole).
    package static let maxLength = 1 << 16

    /// Reads the ClientHello at the start of `bytes` (the connection's first bytes).
    package static func parse(_ bytes: some Collection<UInt8>) -> Parse {
        var records = Reader(Array(bytes))
        var message: [UInt8] = []
        // The handshake message may span several records of type 22 (handshake).
        while true {
            guard let header = records.take(5) else { return .incomplete }
            guard header[0] == 22, header[1] == 3 else { return .notHello }
            let length = Int(header[3]) << 8 | Int(header[4])
            guard length > 0, length <= 1 << 14 + 256 else { return .notHello }
            guard let fragment = records.take(length) else { return .incomplete }
            message += fragment
            if message.count >= 4 {
                guard message[0] == 1 else { return .notHello }  // client_hello
                let body = Int(message[1]) << 16 | Int(message[2]) << 8 | Int(message[3])
                guard body <= maxLength else { return .notHello }
                if message.count >= 4 + body { return hello(Array(message[4..<(4 + body)])) }
            }
        }
    }

    /// The fields of a ClientHello's body.
    static func hello(_ body: [UInt8]) -> Parse {
        var r = Reader(body)
        guard r.take(2 + 32) != nil,  // legacy_version, random
            r.vector(1) != nil,  // legacy_session_id
            r.vector(2) != nil,  // cipher_suites
            r.vector(1) != nil  // legacy_compression_methods
        else { return .notHello }
        var hello = TLSClientHello(serverName: nil, alpn: [])
        guard r.remaining > 0 else { return .hello(hello) }  // no extensions
        guard var extensions = r.vector(2).map(Reader.init), r.remaining == 0 else { return .notHello }
        while extensions.remaining > 0 {
            guard let type = extensions.uint16(), let data = extensions.vector(2) else { return .notHello }
            switch type {
            case 0: hello.serverName = serverName(data)
            case 16: hello.alpn = protocols(data) ?? []
            default: break
            }
        }
        return .hello(hello)
    }

    /// The host_name of a server_name extension.
    static func serverName(_ data: [UInt8]) -> String? {
        var r = Reader(data)
        guard var list = r.vector(2).map(Reader.init) else { return nil }
        while list.remaining > 0 {
            guard let type = list.take(1), let name = list.vector(2) else { return nil }
            if type[0] == 0 { return String(decoding: name, as: UTF8.self) }
        }
        return nil
    }

    /// The protocol names of an application_layer_protocol_negotiation extension.
    static func protocols(_ data: [UInt8]) -> [String]? {
        var r = Reader(data)
        guard var list = r.vector(2).map(Reader.init) else { return nil }
        var names: [String] = []
        while list.remaining > 0 {
            guard let name = list.vector(1), !name.isEmpty else { return nil }
            names.append(String(decoding: name, as: UTF8.self))
        }
        return names
    }

    /// Bounds-checked reads of big-endian fields and length-prefixed vectors.
    struct Reader {
        let bytes: [UInt8]
        var at = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var remaining: Int { bytes.count - at }

        /// The next `n` bytes, as an array of their own (indexed from 0).
        mutating func take(_ n: Int) -> [UInt8]? {
            guard n >= 0, remaining >= n else { return nil }
            defer { at += n }
            return Array(bytes[at..<(at + n)])
        }

        mutating func uint16() -> Int? {
            take(2).map { Int($0[0]) << 8 | Int($0[1]) }
        }

        /// A vector with a `width`-byte length prefix (1 or 2).
        mutating func vector(_ width: Int) -> [UInt8]? {
            guard let prefix = take(width) else { return nil }
            let length = prefix.reduce(0) { $0 << 8 | Int($1) }
            return take(length)
        }
    }
}
