import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// folio-edge as a systemd service: sockets held by a parent across restarts and upgrades, the
/// notify protocol, SIGHUP reloads of the config file, logs for the journal.
// Under the serialized EdgeIntegration: these tests wait on child processes, and run beside the
// other live-edge suites, not in parallel with them.
extension EdgeIntegration {
@Suite("folio-edge as a service")
struct EdgeServiceTests {
    @Test("a parent holding the socket restarts, upgrades and reloads the edge under load with no failed request")
    func socketParent() throws {
        let fixture = try EdgeFixture.make("socket-parent")
        defer { fixture.cleanup() }
        let script = Harness.repoRoot + "/Tests/IntegrationTests/socket_parent.py"
        let r = try Harness.run("/usr/bin/env", ["python3", script, Harness.binary("folio-edge"), fixture.root, "1.5"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout) \(r.stderr)")
        let requests = json["requests"] as? Int ?? 0
        #expect(json["failures"] as? Int == 0, "\(json["failureSamples"] ?? "") \(json["children"] ?? "")")
        #expect(requests > 500, "only \(requests) requests")
        for case let step as [Any] in json["steps"] as? [Any] ?? [] {
            let (name, outcome) = (step[0] as? String ?? "", step[1])
            #expect((outcome as? Bool) == true || (outcome as? Int) == 0, "\(name): \(outcome)")
        }
        let children = json["children"] as? [[String: Any]] ?? []
        #expect(children.count == 3)
        let messages = children.map { $0["messages"] as? [String] ?? [] }
        #expect(messages.allSatisfy { $0.contains { $0.hasPrefix("READY=1\nSTATUS=serving version") } }, "\(messages)")
        #expect(messages.allSatisfy { $0.contains { $0.hasPrefix("STOPPING=1") } }, "\(messages)")
        let reloading = messages.last?.first { $0.hasPrefix("RELOADING=1") } ?? ""
        #expect(reloading.range(of: #"MONOTONIC_USEC=\d+"#, options: .regularExpression) != nil, "\(messages.last ?? [])")
    }

    @Test("SIGHUP reads the config file again: a new certificate serves from the next handshake; a broken file or a new port keeps the old")
    func reload() async throws {
        let fixture = try EdgeFixture.make("config-reload")
        defer { fixture.cleanup() }
        let pki = try TestPKI(fixture.dir)
        let first = try pki.leaf("first.test")
        let second = try pki.leaf("second.test")
        let path = fixture.dir + "/edge.toml"
        func write(_ cert: (cert: String, key: String), extra: String = "") throws {
            let text = "root = \"\(fixture.root)\"\ntls-cert = \"\(cert.cert)\"\ntls-key = \"\(cert.key)\"\nlog-level = \"info\"\n" + extra
            try FileIO.writeAtomically(Array(text.utf8), to: path)
        }
        try write(first)
        let edge = try EdgeProcess.start(root: fixture.root, args: ["--config", path])
        defer { edge.stop() }
        #expect(try TestPKI.handshake(port: edge.port, ["-servername", "x.test"]).contains("subject=CN = first.test"))

        try write(second)
        edge.signal(SIGHUP)
        #expect(await edge.waitForLog("reloaded the configuration", timeout: 10), "\(edge.log)")
        #expect(try TestPKI.handshake(port: edge.port, ["-servername", "x.test"]).contains("subject=CN = second.test"))

        try FileIO.writeAtomically(Array("root = [\n".utf8), to: path)
        edge.signal(SIGHUP)
        #expect(await edge.waitForLog("configuration reload refused", timeout: 10), "\(edge.log)")
        #expect(try TestPKI.handshake(port: edge.port, ["-servername", "x.test"]).contains("subject=CN = second.test"))

        try write(first, extra: "host = \"127.0.0.2\"\n")
        edge.signal(SIGHUP)
        #expect(await edge.waitForLog("--host changed: a restart applies that", timeout: 10), "\(edge.log)")
        #expect(try TestPKI.handshake(port: edge.port, ["-servername", "x.test"]).contains("subject=CN = second.test"))
        #expect(edge.isAlive)
    }

    /// Starts the edge with stderr on a file that `$JOURNAL_STREAM` names (as systemd names the
    /// journal's stream), stops it with SIGTERM, and prints what it logged.
    static let journalRun = """
        import os, subprocess, sys, tempfile
        log = tempfile.NamedTemporaryFile(delete=False)
        st = os.fstat(log.fileno())
        env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st.st_dev, st.st_ino))
        p = subprocess.Popen([sys.argv[1], "--root", sys.argv[2], "--port", "0"], env=env, stdout=subprocess.PIPE, stderr=log)
        p.stdout.readline()
        p.terminate()
        p.wait(20)
        print(open(log.name).read())
        os.unlink(log.name)
        """

    @Test("with stderr going to the journal, log lines carry a priority and no timestamp of their own")
    func journal() throws {
        let fixture = try EdgeFixture.make("journal")
        defer { fixture.cleanup() }
        let r = try Harness.run("/usr/bin/env", ["python3", "-c", Self.journalRun, Harness.binary("folio-edge"), fixture.root])
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>folio.edge: serving ") && $0.contains(" version=") }, "\(r.stdout) \(r.stderr)")
        #expect(lines.contains { $0.hasPrefix("<6>folio.edge: draining connections") }, "\(r.stdout)")
        #expect(!lines.contains { $0.range(of: #"^\d{4}-\d{2}-\d{2}"#, options: .regularExpression) != nil }, "\(r.stdout)")
    }
}
}
