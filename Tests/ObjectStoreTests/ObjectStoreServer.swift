import FolioObjectStore
import FolioS3Signing
import FolioSupport
import FolioTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real S3-compatible store on 127.0.0.1 for the tests: `moto_server`, or SeaweedFS's
/// `weed server -s3` (optionally with an identities file, so signatures are checked). Each
/// runs under `Harness.guarded`, which ends it when the test process ends; `stop()` ends it by
/// its PID.
final class ObjectStoreServer: @unchecked Sendable {
    let name: String
    let port: Int
    let dir: String
    /// The store's key (moto's with IAM is made after it starts).
    private(set) var credentials: AWSCredentials
    private let process: Process

    var endpoint: String { "http://127.0.0.1:\(port)" }

    private init(name: String, port: Int, dir: String, credentials: AWSCredentials, process: Process) {
        self.name = name
        self.port = port
        self.dir = dir
        self.credentials = credentials
        self.process = process
    }

    /// The environment a `folio-build publish` to this store runs with (no AWS files).
    func environment(_ credentials: AWSCredentials? = nil) -> [String: String] {
        let c = credentials ?? self.credentials
        return [
            "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": c.accessKeyID,
            "AWS_SECRET_ACCESS_KEY": c.secretAccessKey, "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
            "AWS_SHARED_CREDENTIALS_FILE": dir + "/none", "AWS_CONFIG_FILE": dir + "/none", "AWS_ENDPOINT_URL_S3": "",
        ]
    }

    /// A client of `bucket` on this store (path-style).
    func client(_ bucket: String, retry: RetryPolicy = RetryPolicy()) -> S3Client {
        let config = S3Configuration(endpoint: URL(string: endpoint)!, region: "us-east-1", credentials: credentials, addressing: .path)
        return S3Client(configuration: config, bucket: bucket, retry: retry)
    }

    /// `moto_server` (it does not check signatures).
    static func moto() throws -> ObjectStoreServer {
        let port = try freePorts(1)[0]
        let dir = Harness.tempDir("moto")
        let creds = AWSCredentials(accessKeyID: "motokey", secretAccessKey: "motosecret")
        return try start("moto", dir: dir, port: port, credentials: creds, ["moto_server", "-H", "127.0.0.1", "-p", "\(port)"])
    }

    /// `moto_server` checking signatures against its IAM, with no anonymous read: the first
    /// four requests (the start probe, three IAM calls by boto3 that make a user allowed s3:*
    /// and its access key) go unchecked, every later one is checked. Its credentials are that key.
    static func motoWithIAM() throws -> ObjectStoreServer {
        let port = try freePorts(1)[0]
        let dir = Harness.tempDir("moto-iam")
        let server = try start(
            "moto", dir: dir, port: port, credentials: AWSCredentials(accessKeyID: "-", secretAccessKey: "-"),
            ["env", "INITIAL_NO_AUTH_ACTION_COUNT=4", "moto_server", "-H", "127.0.0.1", "-p", "\(port)"])
        let script = """
            import boto3, sys
            iam = boto3.client("iam", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
            iam.create_user(UserName="tier")
            iam.put_user_policy(UserName="tier", PolicyName="s3", PolicyDocument='{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}')
            key = iam.create_access_key(UserName="tier")["AccessKey"]
            print(key["AccessKeyId"], key["SecretAccessKey"])
            """
        let out = try Harness.run("/usr/bin/env", ["python3", "-c", script, server.endpoint])
        let words = out.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        guard out.status == 0, words.count == 2 else {
            server.stop()
            throw HarnessError("could not make moto's IAM user: \(out.stdout) \(out.stderr)")
        }
        server.credentials = AWSCredentials(accessKeyID: words[0], secretAccessKey: words[1])
        return server
    }

    /// SeaweedFS master, volume, filer and S3 gateway in one process, every port (and the gRPC
    /// ones) chosen free; with `requireSignature`, an identities file admits our key, and
    /// anyone to read when `anonymousRead`.
    static func seaweed(requireSignature: Bool, anonymousRead: Bool = true) throws -> ObjectStoreServer {
        let p = try freePorts(8)
        let dir = Harness.tempDir("seaweed")
        let creds = AWSCredentials(accessKeyID: "folio-test-key", secretAccessKey: "folio/test+secret")
        var args = [
            "weed", "server", "-dir=\(dir)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.port=\(p[0])", "-master.port.grpc=\(p[1])",
            "-volume.port=\(p[2])", "-volume.port.grpc=\(p[3])", "-filer", "-filer.port=\(p[4])", "-filer.port.grpc=\(p[5])", "-s3",
            "-s3.port=\(p[6])", "-s3.port.grpc=\(p[7])", "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.volumeSizeLimitMB=64",
        ]
        try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
        if requireSignature {
            let anonymous = anonymousRead ? ",\n {\"name\": \"anonymous\", \"actions\": [\"Read\"]}" : ""
            let config = """
                {"identities": [{"name": "folio", "credentials": [{"accessKey": "\(creds.accessKeyID)", "secretKey": "\(creds.secretAccessKey)"}],
                  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}\(anonymous)]}
                """
            try FileIO.writeAtomically(Array(config.utf8), to: dir + "/s3.json")
            args.append("-s3.config=\(dir)/s3.json")
        }
        return try start("seaweedfs", dir: dir, port: p[6], credentials: creds, args)
    }

    private static func start(
        _ name: String, dir: String, port: Int, credentials: AWSCredentials, _ command: [String]
    ) throws -> ObjectStoreServer {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = Harness.guarded(command)
        _ = FileManager.default.createFile(atPath: dir + "/log", contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: dir + "/log")!
        p.standardError = FileHandle(forWritingAtPath: dir + "/log")!
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let server = ObjectStoreServer(name: name, port: port, dir: dir, credentials: credentials, process: p)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if !p.isRunning { break }
            if let out = try? Harness.run("/usr/bin/env", ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "2", server.endpoint + "/"]),
                let code = Int(out.stdout), code > 0
            {
                return server
            }
            usleep(200_000)
        }
        let log = String(decoding: (try? FileIO.read(dir + "/log")) ?? [], as: UTF8.self)
        server.stop()
        throw HarnessError("\(name) did not start on port \(port): \(log.suffix(2000))")
    }

    /// Creates `bucket`, retrying while the store is still coming up (SeaweedFS's filer), and
    /// with `publicRead` lets anyone read its objects (as a public bucket behind a CDN or a tier
    /// is), by a bucket policy on moto (SeaweedFS: the `anonymous` identity, or no identities at all).
    func createBucket(_ bucket: String, publicRead: Bool = true) async throws {
        let client = client(bucket, retry: RetryPolicy(attempts: 2))
        defer { Task { await client.shutdown() } }
        var lastError: Error?
        for _ in 0..<40 {
            do {
                try await client.createBucket()
                if name == "moto", publicRead {
                    let answer = try await client.send(Self.publicRead(bucket))
                    try client.check(answer, "set the bucket policy")
                }
                return
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(250))
            }
        }
        throw lastError!
    }

    /// `PUT ?policy`: GetObject for everyone.
    static func publicRead(_ bucket: String) -> S3Request {
        let policy = """
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::\(bucket)/*"}]}
            """
        return S3Request(method: "PUT", key: "", query: [("policy", "")], body: Array(policy.utf8))
    }

    /// SIGKILL to the process group the guard leads (it and the store; a child of the test
    /// runner may have SIGTERM ignored), then waits. Safe to call twice.
    func stop() {
        Harness.killGuarded(process)
        Harness.cleanup(dir)
    }

    /// `n` distinct ports free on 127.0.0.1 now (bound together, then released).
    static func freePorts(_ n: Int) throws -> [Int] {
        var fds: [Int32] = []
        defer { fds.forEach { close($0) } }
        var ports: [Int] = []
        for _ in 0..<n {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            fds.append(fd)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
            }
            guard ok else { throw HarnessError("cannot bind a free port") }
            ports.append(Int(UInt16(bigEndian: addr.sin_port)))
        }
        return ports
    }
}
