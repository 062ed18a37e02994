import FolioS3Signing
import Foundation

/// The S3 operations the publisher uses, over ``S3Client/send(_:)``.
extension S3Client {
    /// Every key under `prefix` and its size (ListObjectsV2, all pages).
    package func list(prefix: String) async throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("max-keys", "1000")]
            if !prefix.isEmpty { query.append(("prefix", prefix)) }
            if let token { query.append(("continuation-token", token)) }
            let r = try await send(S3Request(method: "GET", key: "", query: query))
            try check(r, "list the keys under s3://\(bucket)/\(prefix)")
            let text = String(decoding: r.body, as: UTF8.self)
            for item in XMLText.all("Contents", in: text) {
                guard let key = XMLText.all("Key", in: item).first, let size = XMLText.all("Size", in: item).first.flatMap({ Int($0) }) else { continue }
                sizes[key] = size
            }
            let truncated = XMLText.all("IsTruncated", in: text).first == "true"
            token = truncated ? XMLText.all("NextContinuationToken", in: text).first : nil
        } while token != nil
        return sizes
    }

    /// The object's bytes, or nil when there is no such key.
    package func get(_ key: String) async throws -> [UInt8]? {
        let r = try await send(S3Request(method: "GET", key: key))
        if r.status == 404, r.errorCode != "NoSuchBucket" { return nil }
        try check(r, "read s3://\(bucket)/\(key)")
        return r.body
    }

    /// Whether the key exists (HEAD).
    package func exists(_ key: String) async throws -> Bool {
        let r = try await send(S3Request(method: "HEAD", key: key))
        if r.status == 404 { return false }
        try check(r, "look up s3://\(bucket)/\(key)")
        return true
    }

    /// Stores `body` at `key` with `headers`.
    package func put(_ key: String, body: [UInt8], headers: [(String, String)] = []) async throws {
        let r = try await send(S3Request(method: "PUT", key: key, headers: headers, body: body))
        try check(r, "upload s3://\(bucket)/\(key)")
    }

    /// Stores `body` at `key` only when no object is there (`If-None-Match: *`): false when one is.
    package func putIfAbsent(_ key: String, body: [UInt8], headers: [(String, String)] = []) async throws -> Bool {
        let r = try await send(S3Request(method: "PUT", key: key, headers: headers + [("If-None-Match", "*")], body: body))
        if r.status == 412 || r.status == 409 { return false }
        try check(r, "upload s3://\(bucket)/\(key)")
        return true
    }

    /// Removes `key` (no error when it is not there).
    package func delete(_ key: String) async throws {
        let r = try await send(S3Request(method: "DELETE", key: key))
        if r.status == 404 { return }
        try check(r, "delete s3://\(bucket)/\(key)")
    }

    /// Creates the bucket (tests and first setups); no error when this account already has it.
    package func createBucket() async throws {
        var body: [UInt8] = []
        if configuration.region != "us-east-1" {
            body = Array(
                "<CreateBucketConfiguration><LocationConstraint>\(configuration.region)</LocationConstraint></CreateBucketConfiguration>".utf8)
        }
        let r = try await send(S3Request(method: "PUT", key: "", body: body))
        if r.errorCode == "BucketAlreadyOwnedByYou" { return }
        try check(r, "create bucket \(bucket)")
    }

    /// Throws an ``ObjectStoreError`` saying in words why a non-2xx answer failed `what`.
    package func check(_ r: S3Response, _ what: String) throws(ObjectStoreError) {
        guard !(200..<300).contains(r.status) else { return }
        throw ObjectStoreError(.store, "could not \(what): \(explain(r))")
    }

    /// The store's answer in words.
    package func explain(_ r: S3Response) -> String {
        let message = XMLText.first("Message", in: r.body).map { " (\($0))" } ?? ""
        switch r.errorCode {
        case "NoSuchBucket":
            return "there is no bucket '\(bucket)' at \(configuration.endpoint.absoluteString): create it first (e.g. aws s3 mb s3://\(bucket))"
        case "SignatureDoesNotMatch":
            return "the store says the request signature does not match (SignatureDoesNotMatch): check AWS_SECRET_ACCESS_KEY and the region (\(configuration.region))"
        case "InvalidAccessKeyId":
            return "the store does not know the access key '\(configuration.credentials?.accessKeyID ?? "(none)")' (InvalidAccessKeyId)"
        case "AccessDenied":
            return "access denied (AccessDenied): the credentials of '\(configuration.credentials?.accessKeyID ?? "(none)")' may not write to bucket '\(bucket)'"
        case let code?:
            return "HTTP \(r.status) \(code)\(message)"
        case nil:
            if r.status == 403 { return "HTTP 403 forbidden: access denied, or the signature does not match the store's (check the credentials and region)" }
            if r.status == 404 { return "HTTP 404: no bucket '\(bucket)' at \(configuration.endpoint.absoluteString)? Create it first" }
            return "HTTP \(r.status)"
        }
    }
}
