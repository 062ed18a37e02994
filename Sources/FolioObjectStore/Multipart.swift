import FolioS3Signing
import Foundation

/// Multipart upload: create, upload parts (several at once), complete; abort on failure.
extension S3Client {
    /// Uploads `body` in parts of `partSize` bytes, at most `concurrency` at once.
    package func putMultipart(_ key: String, body: [UInt8], partSize: Int, headers: [(String, String)], concurrency: Int = 4) async throws {
        let created = try await send(S3Request(method: "POST", key: key, query: [("uploads", "")], headers: headers))
        try check(created, "start a multipart upload of s3://\(bucket)/\(key)")
        guard let uploadID = XMLText.first("UploadId", in: created.body) else {
            throw ObjectStoreError(.store, "could not start a multipart upload of s3://\(bucket)/\(key): the answer has no UploadId")
        }
        do {
            let etags = try await uploadParts(key, body: body, partSize: partSize, uploadID: uploadID, concurrency: concurrency)
            let parts = etags.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\($0.element)</ETag></Part>" }
            let xml = "<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>"
            let done = try await send(S3Request(method: "POST", key: key, query: [("uploadId", uploadID)], body: Array(xml.utf8)))
            try check(done, "complete the multipart upload of s3://\(bucket)/\(key)")
            // A completion can fail after a 200 (the error is in the body).
            if XMLText.first("Code", in: done.body) != nil, XMLText.first("ETag", in: done.body) == nil {
                throw ObjectStoreError(.store, "could not complete the multipart upload of s3://\(bucket)/\(key): \(explain(done))")
            }
        } catch {
            _ = try? await send(S3Request(method: "DELETE", key: key, query: [("uploadId", uploadID)]))
            throw error
        }
    }

    private func uploadParts(_ key: String, body: [UInt8], partSize: Int, uploadID: String, concurrency: Int) async throws -> [String] {
        // S3 takes at most 10,000 parts: larger parts for a file that would need more.
        let size = max(partSize, (body.count + 9_999) / 10_000)
        let ranges = stride(from: 0, to: body.count, by: size).map { $0..<min($0 + size, body.count) }
        var etags = [String](repeating: "", count: ranges.count)
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var next = 0
            func add() {
                let index = next
                next += 1
                let part = Array(body[ranges[index]])
                group.addTask {
                    let query = [("partNumber", String(index + 1)), ("uploadId", uploadID)]
                    let r = try await self.send(S3Request(method: "PUT", key: key, query: query, body: part))
                    try self.check(r, "upload part \(index + 1) of s3://\(self.bucket)/\(key)")
                    return (index, r.headers.first(name: "ETag") ?? "")
                }
            }
            while next < min(concurrency, ranges.count) { add() }
            while let (index, etag) = try await group.next() {
                etags[index] = etag
                if next < ranges.count { add() }
            }
        }
        return etags
    }
}
