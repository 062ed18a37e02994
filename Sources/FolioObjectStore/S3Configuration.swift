import FolioSupport
import Foundation

/// How a bucket is named in a URL: `https://endpoint/bucket/key` or `https://bucket.endpoint/key`.
package enum S3Addressing: String, Sendable, CaseIterable {
    case path, virtual
}

/// An `s3://BUCKET/PREFIX` destination.
package struct S3Location: Sendable, Equatable {
    package var bucket: String
    /// The key prefix, without a leading or trailing `/` (empty for the bucket's root).
    package var prefix: String

    package init(bucket: String, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    /// Parses `s3://BUCKET[/PREFIX]`; the error says what is wrong.
    package init(parsing text: String) throws(ObjectStoreError) {
        guard text.hasPrefix("s3://") else {
            throw ObjectStoreError(.usage, "'\(text)' is not an s3:// URL: give s3://BUCKET or s3://BUCKET/PREFIX")
        }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        guard !bucket.isEmpty else { throw ObjectStoreError(.usage, "'\(text)' names no bucket: give s3://BUCKET or s3://BUCKET/PREFIX") }
        guard Self.isValidBucket(bucket) else {
            throw ObjectStoreError(.usage, "'\(bucket)' is not a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens")
        }
        let prefix = rest.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
        self.init(bucket: bucket, prefix: prefix)
    }

    /// `PREFIX/relative`, or `relative` at the bucket's root.
    package func key(_ relative: String) -> String { prefix.isEmpty ? relative : prefix + "/" + relative }

    /// S3's bucket naming rules (the general-purpose ones).
    package static func isValidBucket(_ b: String) -> Bool {
        (3...63).contains(b.utf8.count)
            && b.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D }
            && b.first != "." && b.first != "-" && b.last != "." && b.last != "-"
    }
}

/// Endpoint, region, credentials and addressing, from the AWS environment variables and files.
package struct S3Configuration: Sendable {
    package var endpoint: URL
    package var region: String
    package var credentials: AWSCredentials
    package var addressing: S3Addressing

    package init(endpoint: URL, region: String, credentials: AWSCredentials, addressing: S3Addressing) {
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.addressing = addressing
    }

    /// The configuration the AWS CLI would use: environment first, then the profile
    /// (`AWS_PROFILE`, else `default`) of the credentials file, then of the config file.
    /// `addressing` overrides the config file's `s3.addressing_style`.
    package static func load(environment env: [String: String], addressing: S3Addressing? = nil) throws(ObjectStoreError) -> S3Configuration {
        let home = env["HOME"] ?? NSHomeDirectory()
        let credentialsPath = env["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"
        let configPath = env["AWS_CONFIG_FILE"] ?? home + "/.aws/config"
        let profileName = env["AWS_PROFILE"] ?? env["AWS_DEFAULT_PROFILE"] ?? "default"
        let fromCredentials = readProfile(credentialsPath, profileName)
        let fromConfig = readProfile(configPath, profileName)
        func setting(_ key: String) -> String? { nonEmpty(fromCredentials[key]) ?? nonEmpty(fromConfig[key]) }
        let credentials = try resolveCredentials(env, setting, looked: [credentialsPath, configPath], profile: profileName)
        let endpointText = nonEmpty(env["AWS_ENDPOINT_URL_S3"]) ?? nonEmpty(env["AWS_ENDPOINT_URL"])
            ?? setting("s3.endpoint_url") ?? setting("endpoint_url")
        let region = nonEmpty(env["AWS_REGION"]) ?? nonEmpty(env["AWS_DEFAULT_REGION"]) ?? setting("region") ?? "us-east-1"
        let endpoint = try endpointURL(endpointText, region: region)
        let configured = try styleSetting(setting("s3.addressing_style"))
        let style = addressing ?? configured ?? (endpointText == nil ? .virtual : .path)
        return S3Configuration(endpoint: endpoint, region: region, credentials: credentials, addressing: style)
    }

    private static func resolveCredentials(
        _ env: [String: String], _ setting: (String) -> String?, looked: [String], profile: String
    ) throws(ObjectStoreError) -> AWSCredentials {
        if let id = nonEmpty(env["AWS_ACCESS_KEY_ID"]), let secret = nonEmpty(env["AWS_SECRET_ACCESS_KEY"]) {
            return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: nonEmpty(env["AWS_SESSION_TOKEN"]))
        }
        if let id = setting("aws_access_key_id"), let secret = setting("aws_secret_access_key") {
            return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: setting("aws_session_token"))
        }
        throw ObjectStoreError(
            .credentials,
            "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or aws_access_key_id and aws_secret_access_key "
                + "in profile '\(profile)' of \(looked.joined(separator: " or ")) (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE)")
    }

    private static func endpointURL(_ text: String?, region: String) throws(ObjectStoreError) -> URL {
        let value = text ?? "https://s3.\(region).amazonaws.com"
        guard let url = URL(string: value), url.scheme == "http" || url.scheme == "https", url.host?.isEmpty == false else {
            throw ObjectStoreError(.usage, "the endpoint '\(value)' (AWS_ENDPOINT_URL) is not an http or https URL")
        }
        return url
    }

    private static func styleSetting(_ text: String?) throws(ObjectStoreError) -> S3Addressing? {
        switch text {
        case nil, "auto": return nil
        case "path": return .path
        case "virtual": return .virtual
        case let other?: throw ObjectStoreError(.usage, "addressing_style '\(other)' in the AWS config file: use auto, path or virtual")
        }
    }

    private static func readProfile(_ path: String, _ name: String) -> [String: String] {
        guard let bytes = try? FileIO.read(path) else { return [:] }
        return AWSProfileFile(text: String(decoding: bytes, as: UTF8.self)).profiles[name] ?? [:]
    }

    private static func nonEmpty(_ s: String?) -> String? { s?.isEmpty == false ? s : nil }

    /// The URL of `key` in `bucket` (the key encoded, its slashes kept).
    package func url(bucket: String, key: String) -> URL {
        let encodedKey = SigV4Signer.uriEncode(key, keepSlash: true)
        var base = endpoint.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        switch addressing {
        case .path:
            return URL(string: "\(base)/\(bucket)" + (key.isEmpty ? "" : "/\(encodedKey)"))!
        case .virtual:
            var parts = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)!
            parts.host = "\(bucket).\(endpoint.host!)"
            parts.percentEncodedPath = "/" + encodedKey
            return parts.url!
        }
    }
}
