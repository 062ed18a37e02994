import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `folio-edge --config FILE` and `folio-edge validate`: every long option is a key of the same
/// name, the command line overrides the file, and every problem is reported at FILE:LINE:COL.
// Under the serialized EdgeIntegration: these tests wait on child processes, and run beside the
// other live-edge suites, not in parallel with them.
extension EdgeIntegration {
@Suite("folio-edge config file and validate")
struct EdgeConfigFileTests {
    static func edge(_ args: [String]) throws -> Harness.Output { try Harness.run(Harness.binary("folio-edge"), args) }

    /// Writes `text` as `name` in `dir`; its path.
    static func write(_ text: String, _ dir: String, _ name: String = "edge.toml") throws -> String {
        let path = dir + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("an edge started from a config file serves, and the command line overrides the file")
    func servesFromFile() throws {
        let fixture = try EdgeFixture.make("config-serve")
        defer { fixture.cleanup() }
        // The file's port is taken by nothing sensible; --port 0 on the command line wins.
        let file = try Self.write(
            "# a production edge, shortened\nroot = \"\(fixture.root)\"\nport = 1\nrequest-timeout = 5\naccess-log = false\nmax-header-bytes = 8192\n",
            fixture.dir)
        let edge = try EdgeProcess.start(root: fixture.root, args: ["--config", file])
        defer { edge.stop() }
        #expect(try RawHTTPConnection.fetch(port: edge.port, "/manifest.plist").status == 200)
        let ok = try Self.edge(["validate", "--config", file, "--port", "0"])
        #expect(ok.status == 0 && ok.stdout == "configuration OK\n", "\(ok.stdout) \(ok.stderr)")
    }

    @Test(
        "each broken config file is an error at FILE:LINE:COL naming the key",
        arguments: [
            ("port = 0\nroots = \"x\"\n", ":2:1: unknown key 'roots'"),
            ("port = \"eighty\"\n", ":1:1: 'port' takes an integer, got the string \"eighty\""),
            ("port = 0\n\ntrust = [1, 2]\n", ":3:1: 'trust' takes a list of strings"),
            ("port = 0\nhttp2 = \"yes\"\n", ":2:1: 'http2' takes true or false"),
            ("port = 0\n[server]\nport = 1\n", "[server] tables are not options"),
            ("port = = 0\n", ":1:"),
            ("port = 0\nconfig = \"other.toml\"\n", ":2:1: 'config' cannot be set in a config file"),
        ])
    func brokenFiles(text: String, message: String) throws {
        let dir = Harness.tempDir("config-broken")
        defer { Harness.cleanup(dir) }
        let file = try Self.write(text, dir)
        for command in [["validate"], []] {
            let r = try Self.edge(command + ["--config", file])
            #expect(r.status == 1 && r.stderr.contains(file + message.prefix { $0 != "'" && $0 != "[" }) && r.stderr.contains(message), "\(command): \(r.stderr)")
            #expect(!r.stdout.contains("listening") && !r.stdout.contains("configuration OK"))
        }
    }

    @Test("every error of a file at once, and the problems a start would meet, each at its key")
    func everyError() throws {
        let fixture = try EdgeFixture.make("config-every")
        defer { fixture.cleanup() }
        let two = try Self.write("port = 0\nbogus = 1\nalso-bogus = 2\n", fixture.dir, "two.toml")
        let r = try Self.edge(["validate", "--config", two])
        #expect(r.status == 1 && r.stderr.contains("two.toml:2:1: unknown key 'bogus'") && r.stderr.contains("two.toml:3:1: unknown key 'also-bogus'"), "\(r.stderr)")

        // The other mode's option, at its line.
        let mode = try Self.write("root = \"\(fixture.root)\"\nport = 0\ncache-dir = \"/tmp/x\"\n", fixture.dir, "mode.toml")
        let m = try Self.edge(["validate", "--config", mode])
        #expect(m.status == 1 && m.stderr.contains("mode.toml:3:1: cache-dir: --cache-dir is for a cache tier"), "\(m.stderr)")

        // A missing certificate, a world-readable key, a taken port: found by validate without listening.
        let pki = try TestPKI(fixture.dir)
        let leaf = try pki.leaf("localhost")
        chmod(leaf.key, 0o644)
        let taken = try EdgeProcess.start(root: fixture.root)
        defer { taken.stop() }
        let start = try Self.write(
            "root = \"\(fixture.root)\"\nport = \(taken.port)\ntls-cert = [\"\(leaf.cert)\", \"\(fixture.dir)/missing.pem\"]\ntls-key = [\"\(leaf.key)\", \"\(leaf.key)\"]\n",
            fixture.dir, "start.toml")
        let s = try Self.edge(["validate", "--config", start])
        #expect(s.status == 1, "\(s.stderr)")
        let lines = s.stderr.split(separator: "\n")
        #expect(lines.contains { $0.contains("start.toml:3:1: tls-cert:") && $0.contains("readable") }, "\(s.stderr)")
        #expect(lines.contains { $0.contains("start.toml:3:1: tls-cert:") && $0.contains("missing.pem") }, "\(s.stderr)")
        #expect(lines.contains { $0.contains("start.toml:2:1: port:") && $0.contains("in use") }, "\(s.stderr)")
    }

    @Test("validate takes plain options too, and checks the manifest a start would load")
    func validateOptions() throws {
        let dir = Harness.tempDir("config-validate")
        defer { Harness.cleanup(dir) }
        let r = try Self.edge(["validate", "--root", dir, "--port", "0"])
        #expect(r.status == 1 && r.stderr.contains("manifest.plist not found"), "\(r.stderr)")
        let tier = try Self.edge(["validate", "--origin", "http://127.0.0.1:1", "--port", "0"])
        #expect(tier.status == 0 && tier.stdout.contains("configuration OK"), "\(tier.stderr)")
    }

    @Test("every option of folio-edge run is a key of the file")
    func everyOptionIsAKey() throws {
        let help = try Self.edge(["run", "--help"]).stdout
        let names = help.matches(of: /--([a-z0-9][a-z0-9-]*)/).map { String($0.output.1) }
        let options = Set(names.filter { !$0.hasPrefix("no-") }).subtracting(["help", "config", "version"])
        #expect(options.count > 35, "\(options)")
        let dir = Harness.tempDir("config-keys")
        defer { Harness.cleanup(dir) }
        // A value of the wrong kind for every key, in one file: each error names its key (so the
        // key is known) at its own line.
        let keys = options.sorted()
        let file = try Self.write(keys.map { "\($0) = { a = 1 }\n" }.joined(), dir)
        let r = try Self.edge(["validate", "--config", file])
        #expect(r.status == 1)
        for (i, key) in keys.enumerated() {
            #expect(r.stderr.contains("edge.toml:\(i + 1):1: '\(key)' takes"), "\(key): \(r.stderr)")
        }
    }
}
}
