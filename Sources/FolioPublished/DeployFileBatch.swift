/// Several files of a deploy in one request body (`POST /.folio/deploy/ID/files`): for each,
/// its path relative to the published root, a newline, its size in decimal, a newline, and its
/// bytes. One request instead of one per file: a one-post edit sends about ten small files,
/// which over HTTPS would each have opened a connection and made a TLS handshake.
package enum DeployFileBatch {
    /// The most files a client puts in one batch, and the most bytes (a file larger than that
    /// is sent alone): batches of a large first deploy still go several at once.
    package static let maxFiles = 256
    package static let maxBytes = 4 << 20

    /// The body carrying `files`.
    package static func encode(_ files: [(relative: String, bytes: [UInt8])]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(files.reduce(0) { $0 + $1.relative.utf8.count + 24 + $1.bytes.count })
        for (relative, bytes) in files {
            body += Array("\(relative)\n\(bytes.count)\n".utf8)
            body += bytes
        }
        return body
    }

    /// The files of a batch `body`, in order; an error that says where the body is not one.
    package static func decode(_ body: [UInt8]) throws(DeployFileBatchError) -> [(relative: String, bytes: ArraySlice<UInt8>)] {
        var files: [(relative: String, bytes: ArraySlice<UInt8>)] = []
        var at = 0
        func line(_ what: String) throws(DeployFileBatchError) -> String {
            guard let end = body[at...].firstIndex(of: UInt8(ascii: "\n")), end > at, end - at <= 4096 else {
                throw DeployFileBatchError("file \(files.count + 1) of the batch has no \(what) line at byte \(at)")
            }
            defer { at = end + 1 }
            return String(decoding: body[at..<end], as: UTF8.self)
        }
        while at < body.count {
            let relative = try line("path")
            let sizeText = try line("size")
            guard let size = Int(sizeText), size >= 0, sizeText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw DeployFileBatchError("\(relative) in the batch has size '\(sizeText)', not a number of bytes")
            }
            guard size <= body.count - at else {
                throw DeployFileBatchError("\(relative) in the batch is cut short: \(body.count - at) of its \(size) bytes came")
            }
            files.append((relative, body[at..<(at + size)]))
            at += size
        }
        return files
    }
}

/// A batch body that is not one.
package struct DeployFileBatchError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
