import FolioObjectStore
import FolioS3Signing
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

@Suite("AWS configuration: files, environment, destinations, addressing")
struct S3ConfigurationTests {
    @Test("profiles, [profile x] headers, comments, quotes and s3 sub-properties")
    func profileFile() {
        let text = """
            # a comment
            ; another
            [default]
            aws_access_key_id = AKDEFAULT   # inline comment after a space
            aws_secret_access_key=sec#ret
            region = "eu-west-1"

            [profile dev]
            aws_access_key_id = 'AKDEV'
            s3 =
              addressing_style = virtual
              endpoint_url = http://127.0.0.1:9000
            region = us-west-2
            [ spaced ]
            key = value ; comment
            """
        let file = AWSProfileFile(text: text)
        #expect(file.profiles["default"] == ["aws_access_key_id": "AKDEFAULT", "aws_secret_access_key": "sec#ret", "region": "eu-west-1"])
        #expect(file.profiles["dev"]?["aws_access_key_id"] == "AKDEV")
        #expect(file.profiles["dev"]?["s3.addressing_style"] == "virtual")
        #expect(file.profiles["dev"]?["s3.endpoint_url"] == "http://127.0.0.1:9000")
        #expect(file.profiles["dev"]?["region"] == "us-west-2")
        #expect(file.profiles["spaced"] == ["key": "value"])
    }

    @Test("environment first, then the credentials file, then the config file; AWS_PROFILE picks the profile")
    func resolution() throws {
        let dir = Harness.tempDir("aws-config")
        defer { Harness.cleanup(dir) }
        try FileIO.writeAtomically(
            Array("[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n[ci]\naws_access_key_id = CIKEY\naws_secret_access_key = CISECRET\naws_session_token = CITOKEN\n".utf8),
            to: dir + "/credentials")
        try FileIO.writeAtomically(
            Array("[default]\nregion = eu-north-1\n[profile ci]\nregion = ap-south-1\ns3 =\n  addressing_style = path\n".utf8), to: dir + "/config")
        let files = ["HOME": dir, "AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials", "AWS_CONFIG_FILE": dir + "/config"]
        let plain = try S3Configuration.load(environment: files)
        #expect(plain.credentials == AWSCredentials(accessKeyID: "FILEKEY", secretAccessKey: "FILESECRET"))
        #expect(plain.region == "eu-north-1")
        #expect(plain.endpoint.absoluteString == "https://s3.eu-north-1.amazonaws.com")
        #expect(plain.addressing == .virtual)
        let ci = try S3Configuration.load(environment: files.merging(["AWS_PROFILE": "ci"]) { $1 })
        #expect(ci.credentials == AWSCredentials(accessKeyID: "CIKEY", secretAccessKey: "CISECRET", sessionToken: "CITOKEN"))
        #expect(ci.region == "ap-south-1" && ci.addressing == .path)
        let env = try S3Configuration.load(
            environment: files.merging([
                "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "ENVSECRET", "AWS_SESSION_TOKEN": "ENVTOKEN",
                "AWS_DEFAULT_REGION": "us-west-1", "AWS_REGION": "us-east-2", "AWS_ENDPOINT_URL": "http://127.0.0.1:1/",
                "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000",
            ]) { $1 })
        #expect(env.credentials == AWSCredentials(accessKeyID: "ENVKEY", secretAccessKey: "ENVSECRET", sessionToken: "ENVTOKEN"))
        #expect(env.region == "us-east-2" && env.endpoint.absoluteString == "http://127.0.0.1:9000" && env.addressing == .path)
        let forced = try S3Configuration.load(environment: env0(files, endpoint: "http://localhost:9000"), addressing: .virtual)
        #expect(forced.addressing == .virtual)
    }

    private func env0(_ files: [String: String], endpoint: String) -> [String: String] {
        files.merging(["AWS_ENDPOINT_URL": endpoint]) { $1 }
    }

    @Test("no credentials: the error names the variables and the files looked at")
    func missingCredentials() {
        let env = ["HOME": "/nonexistent-home", "AWS_PROFILE": "nobody"]
        #expect {
            try S3Configuration.load(environment: env)
        } throws: { error in
            let text = "\(error)"
            return text.contains("AWS_ACCESS_KEY_ID") && text.contains("/nonexistent-home/.aws/credentials")
                && text.contains("/nonexistent-home/.aws/config") && text.contains("'nobody'")
        }
    }

    @Test("s3:// destinations: bucket and prefix, and what is wrong with a bad one")
    func destinations() throws {
        #expect(try S3Location(parsing: "s3://bucket") == S3Location(bucket: "bucket", prefix: ""))
        #expect(try S3Location(parsing: "s3://bucket/site/v1/") == S3Location(bucket: "bucket", prefix: "site/v1"))
        #expect(try S3Location(parsing: "s3://bucket//a//b").key("manifest.plist") == "a/b/manifest.plist")
        for (bad, says) in [("s3:/x", "not an s3:// URL"), ("s3://", "names no bucket"), ("s3:///p", "names no bucket"), ("s3://Bad_Bucket/p", "not a bucket name")] {
            #expect { try S3Location(parsing: bad) } throws: { "\($0)".contains(says) }
        }
    }

    @Test("path-style and virtual-host-style URLs, keys encoded with their slashes kept")
    func addressing() {
        let creds = AWSCredentials(accessKeyID: "a", secretAccessKey: "b")
        let local = S3Configuration(endpoint: URL(string: "http://127.0.0.1:9000/")!, region: "us-east-1", credentials: creds, addressing: .path)
        #expect(local.url(bucket: "b1", key: "objects/a b.plist").absoluteString == "http://127.0.0.1:9000/b1/objects/a%20b.plist")
        #expect(local.url(bucket: "b1", key: "").absoluteString == "http://127.0.0.1:9000/b1")
        let aws = S3Configuration(endpoint: URL(string: "https://s3.eu-west-1.amazonaws.com")!, region: "eu-west-1", credentials: creds, addressing: .virtual)
        #expect(aws.url(bucket: "b1", key: "p/manifest.plist").absoluteString == "https://b1.s3.eu-west-1.amazonaws.com/p/manifest.plist")
        #expect(aws.url(bucket: "b1", key: "").absoluteString == "https://b1.s3.eu-west-1.amazonaws.com/")
        let ported = S3Configuration(endpoint: URL(string: "http://minio.test:9000")!, region: "us-east-1", credentials: creds, addressing: .virtual)
        #expect(ported.url(bucket: "b1", key: "k+1").absoluteString == "http://b1.minio.test:9000/k%2B1")
    }

    @Test("where the credentials came from, in words; none: publish refuses, a tier's origin reads unsigned")
    func credentialSources() throws {
        let dir = Harness.tempDir("aws-sources")
        defer { Harness.cleanup(dir) }
        try FileIO.writeAtomically(Array("[tier]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n".utf8), to: dir + "/credentials")
        let files = ["HOME": dir, "AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials", "AWS_CONFIG_FILE": dir + "/config"]
        let fromFile = try S3Configuration.load(environment: files.merging(["AWS_PROFILE": "tier"]) { $1 })
        #expect(fromFile.credentialSource == "profile 'tier' of \(dir)/credentials")
        let fromEnv = try S3Configuration.load(
            environment: files.merging(["AWS_ACCESS_KEY_ID": "K", "AWS_SECRET_ACCESS_KEY": "S", "AWS_SESSION_TOKEN": "T"]) { $1 })
        #expect(fromEnv.credentialSource == "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in the environment")
        let anonymous = try S3Configuration.loadAllowingAnonymous(environment: files)
        #expect(anonymous.credentials == nil && anonymous.credentialSource == nil && anonymous.region == "us-east-1")
        #expect { try S3Configuration.load(environment: files) } throws: { "\($0)".contains("no credentials") }
        // Printed, the configuration keeps its secrets.
        #expect(!"\(fromEnv)".contains("S,") && "\(fromEnv)".contains("secretAccessKey: <redacted>, sessionToken: <redacted>"), "\(fromEnv)")
    }

    @Test("the region: AWS's own endpoints take an AWS region; another store any name; the error names where it came from")
    func regions() throws {
        let base = ["HOME": "/nonexistent-home", "AWS_ACCESS_KEY_ID": "K", "AWS_SECRET_ACCESS_KEY": "S"]
        #expect(try S3Configuration.load(environment: base.merging(["AWS_REGION": "us-gov-west-1"]) { $1 }).endpoint.host == "s3.us-gov-west-1.amazonaws.com")
        #expect(try S3Configuration.load(environment: base.merging(["AWS_REGION": "garage", "AWS_ENDPOINT_URL": "http://127.0.0.1:3900"]) { $1 }).region == "garage")
        for (env, says) in [
            (["AWS_REGION": "useast1"], "the region 'useast1' (AWS_REGION) is not an AWS region like us-east-1"),
            (["AWS_DEFAULT_REGION": "EU-WEST-1"], "(AWS_DEFAULT_REGION) is not an AWS region"),
            (["AWS_REGION": "us-east-1/x", "AWS_ENDPOINT_URL": "http://127.0.0.1:1"], "the region 'us-east-1/x' (AWS_REGION) is not a region name"),
        ] {
            #expect { try S3Configuration.loadAllowingAnonymous(environment: base.merging(env) { $1 }) } throws: { "\($0)".contains(says) }
        }
        #expect(S3Configuration.isAWSRegion("ap-southeast-3") && S3Configuration.isAWSRegion("cn-north-1"))
        #expect(!S3Configuration.isAWSRegion("us-east") && !S3Configuration.isAWSRegion("auto") && !S3Configuration.isAWSRegion("u-east-1"))
    }

    @Test("an s3:// URL with a query or fragment is refused")
    func queryRefused() {
        #expect { try S3Location(parsing: "s3://bucket/p?versionId=3") } throws: { "\($0)".contains("has a query or fragment") }
        #expect(S3Location(bucket: "b", prefix: "p/q").url == "s3://b/p/q" && S3Location(bucket: "b", prefix: "").url == "s3://b")
    }
}
