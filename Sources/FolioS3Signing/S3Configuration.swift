import Foundation

/// Endpoint, region, credentials and addressing, from the AWS environment variables and files:
/// what `folio-build publish` uploads with and a tier's `s3://` origin reads with.
package struct S3Configuration: Sendable, Equatable {
    package var endpoint: URL
    package var region: String
    /// nil: requests go unsigned (anonymous, as `aws --no-sign-request` sends them).
    package var credentials: AWSCredentials?
    package var addressing: S3Addressing
    /// Where the credentials came from, in words and without the secret: "AWS_ACCESS_KEY_ID and
    /// AWS_SECRET_ACCESS_KEY in the environment", "profile 'ci' of /home/u/.aws/credentials".
    package var credentialSource: String?

    package init(endpoint: URL, region: String, credentials: AWSCredentials?, addressing: S3Addressing, credentialSource: String? = nil) {
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.addressing = addressing
        self.credentialSource = credentialSource
    }

    /// The configuration the AWS CLI would use: environment first, then the profile
    /// (`AWS_PROFILE`, else `default`) of the credentials file, then of the config file.
    /// `addressing` overrides the config file's `s3.addressing_style`. No credentials is an error.
    package static func load(environment env: [String: String], addressing: S3Addressing? = nil) throws(S3SettingsError) -> S3Configuration {
        let found = try loadAllowingAnonymous(environment: env, addressing: addressing)
        guard found.credentials != nil else { throw noCredentials(AWSSharedFiles(environment: env)) }
        return found
    }

    /// As `load`, but without credentials the requests go unsigned (a public bucket reads so).
    package static func loadAllowingAnonymous(environment env: [String: String], addressing: S3Addressing? = nil) throws(S3SettingsError) -> S3Configuration {
        let files = AWSSharedFiles(environment: env)
        let endpointText = nonEmpty(env["AWS_ENDPOINT_URL_S3"]) ?? nonEmpty(env["AWS_ENDPOINT_URL"])
            ?? files.value("s3.endpoint_url") ?? files.value("endpoint_url")
        let region = try checkedRegion(env, files, forAWS: endpointText == nil)
        let endpoint = try endpointURL(endpointText, region: region)
        let configured = try styleSetting(files.value("s3.addressing_style"))
        let style = addressing ?? configured ?? (endpointText == nil ? .virtual : .path)
        let (credentials, source) = resolveCredentials(env, files)
        return S3Configuration(endpoint: endpoint, region: region, credentials: credentials, addressing: style, credentialSource: source)
    }

    private static func resolveCredentials(_ env: [String: String], _ files: AWSSharedFiles) -> (AWSCredentials?, String?) {
        if let id = nonEmpty(env["AWS_ACCESS_KEY_ID"]), let secret = nonEmpty(env["AWS_SECRET_ACCESS_KEY"]) {
            let token = nonEmpty(env["AWS_SESSION_TOKEN"])
            let names = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" + (token == nil ? "" : " (and AWS_SESSION_TOKEN)")
            return (AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token), names + " in the environment")
        }
        if let id = files.value("aws_access_key_id"), let secret = files.value("aws_secret_access_key") {
            let credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: files.value("aws_session_token"))
            return (credentials, files.source(of: "aws_access_key_id"))
        }
        return (nil, nil)
    }

    private static func noCredentials(_ files: AWSSharedFiles) -> S3SettingsError {
        S3SettingsError(
            "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or aws_access_key_id and aws_secret_access_key "
                + "in profile '\(files.profile)' of \(files.credentialsPath) or \(files.configPath) (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE)")
    }

    /// The region (AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else us-east-1); for
    /// AWS itself (no endpoint set) one shaped like an AWS region, since it names the endpoint.
    private static func checkedRegion(_ env: [String: String], _ files: AWSSharedFiles, forAWS: Bool) throws(S3SettingsError) -> String {
        let given: (String, String)? =
            nonEmpty(env["AWS_REGION"]).map { ($0, "AWS_REGION") } ?? nonEmpty(env["AWS_DEFAULT_REGION"]).map { ($0, "AWS_DEFAULT_REGION") }
            ?? files.value("region").map { ($0, "region in " + (files.source(of: "region") ?? "the AWS config")) }
        guard let (region, origin) = given else { return "us-east-1" }
        let word = region.utf8.allSatisfy { $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        guard word, region.utf8.count <= 64 else {
            throw S3SettingsError("the region '\(region)' (\(origin)) is not a region name: letters, digits and hyphens, like us-east-1")
        }
        guard !forAWS || isAWSRegion(region) else {
            throw S3SettingsError(
                "the region '\(region)' (\(origin)) is not an AWS region like us-east-1 or eu-west-3: fix it, "
                    + "or set AWS_ENDPOINT_URL to reach another S3-compatible store")
        }
        return region
    }

    /// `us-east-1`, `us-gov-west-1`, `ap-southeast-3`: two letters, words, a number.
    package static func isAWSRegion(_ region: String) -> Bool {
        let parts = region.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].count == 2, let last = parts.last, !last.isEmpty, last.allSatisfy(\.isASCII), last.allSatisfy(\.isNumber) else {
            return false
        }
        return parts.dropLast().allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x61...0x7A).contains($0) } }
    }

    private static func endpointURL(_ text: String?, region: String) throws(S3SettingsError) -> URL {
        let value = text ?? "https://s3.\(region).amazonaws.com"
        guard let url = URL(string: value), url.scheme == "http" || url.scheme == "https", url.host?.isEmpty == false else {
            throw S3SettingsError("the endpoint '\(value)' (AWS_ENDPOINT_URL) is not an http or https URL")
        }
        return url
    }

    private static func styleSetting(_ text: String?) throws(S3SettingsError) -> S3Addressing? {
        switch text {
        case nil, "auto": return nil
        case "path": return .path
        case "virtual": return .virtual
        case let other?: throw S3SettingsError("addressing_style '\(other)' in the AWS config file: use auto, path or virtual")
        }
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
