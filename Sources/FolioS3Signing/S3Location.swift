/// How a bucket is named in a URL: `https://endpoint/bucket/key` or `https://bucket.endpoint/key`.
package enum S3Addressing: String, Sendable, CaseIterable {
    case path, virtual
}

/// An `s3://BUCKET/PREFIX` destination (a publish's) or origin (a tier's).
package struct S3Location: Sendable, Equatable {
    package var bucket: String
    /// The key prefix, without a leading or trailing `/` (empty for the bucket's root).
    package var prefix: String

    package init(bucket: String, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    /// Parses `s3://BUCKET[/PREFIX]`; the error says what is wrong.
    package init(parsing text: String) throws(S3SettingsError) {
        guard text.hasPrefix("s3://") else {
            throw S3SettingsError("'\(text)' is not an s3:// URL: give s3://BUCKET or s3://BUCKET/PREFIX")
        }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        guard !bucket.isEmpty else { throw S3SettingsError("'\(text)' names no bucket: give s3://BUCKET or s3://BUCKET/PREFIX") }
        guard Self.isValidBucket(bucket) else {
            throw S3SettingsError("'\(bucket)' is not a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens")
        }
        let prefix = rest.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
        guard !prefix.contains("?"), !prefix.contains("#") else {
            throw S3SettingsError("'\(text)' has a query or fragment: give s3://BUCKET or s3://BUCKET/PREFIX")
        }
        self.init(bucket: bucket, prefix: prefix)
    }

    /// `s3://BUCKET/PREFIX` (`s3://BUCKET` at the root).
    package var url: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/" + prefix) }

    /// `PREFIX/relative`, or `relative` at the bucket's root.
    package func key(_ relative: String) -> String { prefix.isEmpty ? relative : prefix + "/" + relative }

    /// S3's bucket naming rules (the general-purpose ones).
    package static func isValidBucket(_ b: String) -> Bool {
        (3...63).contains(b.utf8.count)
            && b.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D }
            && b.first != "." && b.first != "-" && b.last != "." && b.last != "-"
    }
}
