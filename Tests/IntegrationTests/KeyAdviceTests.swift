import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// Key files given in the wrong place get the right advice, and validity periods below the
/// clients' clock skew allowance are warned about (issue #29).
@Suite("key file advice", .serialized)
struct KeyAdviceTests {
    @Test("a public key where a secret one goes, and a secret key where a public one goes, are named as such")
    func keyMixUps() throws {
        let root = try ClientRoot.make("key-advice")
        defer { root.cleanup() }
        let keys = try SigningKeys.make(in: root.dir, ["root", "ci"])
        let list = try keys.authorize(["ci"], version: 1)
        // folio-build --signing-key keys/ci.pub: not "chmod 600".
        let build = try Harness.run(
            Harness.binary("folio-build"),
            ["--content", root.content, "--output", root.root, "--signing-key", keys.pub("ci"), "--key-list", list], env: ClientTest.buildEnv)
        #expect(build.status == 1, "\(build.stderr)")
        #expect(build.stderr.contains("--signing-key: \(keys.pub("ci")) is a public key; give the secret key (\(keys.key("ci")))"), "\(build.stderr)")
        #expect(!build.stderr.contains("chmod"), "\(build.stderr)")
        // --key-list given a key.
        let wrongList = try Harness.run(
            Harness.binary("folio-build"),
            ["--content", root.content, "--output", root.root, "--signing-key", keys.key("ci"), "--key-list", keys.pub("root")],
            env: ClientTest.buildEnv)
        #expect(wrongList.status == 1 && wrongList.stderr.contains("is a public key, not a key list"), "\(wrongList.stderr)")
        // folio keys show keys/root.key: a secret key, pointing to its .pub, printing nothing of it.
        let secretText = String(decoding: try FileIO.read(keys.key("root")), as: UTF8.self)
        let seed = secretText.split(separator: "\n").first { $0.hasPrefix("ed25519-seed:") }.map { String($0.dropFirst(14)) } ?? "?"
        let show = try Harness.run(ClientTest.folioPath, ["keys", "show", keys.key("root")])
        #expect(show.status == 1, "\(show.status) \(show.stderr)")
        #expect(show.stderr.contains("\(keys.key("root")) is a secret key"), "\(show.stderr)")
        #expect(show.stderr.contains("folio keys show \(keys.pub("root"))"), "\(show.stderr)")
        #expect(!show.stderr.contains("not a Folio public key"), "\(show.stderr)")
        #expect(!(show.stdout + show.stderr).contains(seed))
        // --trust keys/root.key (folio and folio-edge), --root keys/root.pub (folio keys authorize).
        let trust = try ClientTest.folio(["sync", "--trust", keys.key("root")], cache: root.dir + "/cache", edge: ClientTest.unreachableEdge)
        #expect(trust.status == 1, "\(trust.status) \(trust.stderr)")
        #expect(trust.stderr.contains("--trust: \(keys.key("root")) is a secret key; give its public half (\(keys.pub("root")))"), "\(trust.stderr)")
        let edge = try Harness.run(Harness.binary("folio-edge"), ["--root", root.root, "--port", "0", "--trust", keys.key("root")])
        #expect(edge.status == 1 && edge.stderr.contains("is a secret key; give its public half (\(keys.pub("root")))"), "\(edge.stderr)")
        let authorize = try Harness.run(
            ClientTest.folioPath, ["keys", "authorize", "--root", keys.pub("root"), keys.pub("ci"), "--output", root.dir + "/l.plist"])
        #expect(authorize.status == 1, "\(authorize.stderr)")
        #expect(authorize.stderr.contains("--root: \(keys.pub("root")) is a public key; give the secret key (\(keys.key("root")))"), "\(authorize.stderr)")
        for out in [build, wrongList, show, trust, edge, authorize] { ClientFailureTests.expectClean(out) }
    }

    @Test("a --valid-for below the 5 minutes of clock skew is a warning, and an error with --strict")
    func validityBelowClockSkew() throws {
        let root = try ClientRoot.make("key-validity")
        defer { root.cleanup() }
        let keys = try SigningKeys.make(in: root.dir, ["root", "ci"])
        let list = try keys.authorize(["ci"], version: 1)
        let args = ["--content", root.content, "--output", root.root, "--quiet"] + keys.buildArgs(["ci"], keyList: list, validFor: "1s")
        let strict = try Harness.run(Harness.binary("folio-build"), args + ["--strict"], env: ClientTest.buildEnv)
        #expect(strict.status == 1, "\(strict.status) \(strict.stderr)")
        #expect(strict.stderr.contains("error: --valid-for 1s is shorter than the 5 minutes of clock skew clients allow"), "\(strict.stderr)")
        let warned = try Harness.run(Harness.binary("folio-build"), args, env: ClientTest.buildEnv)
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.contains("warning: --valid-for 1s is shorter than the 5 minutes of clock skew"), "\(warned.stderr)")
        let fine = try Harness.run(
            Harness.binary("folio-build"), ["--content", root.content, "--output", root.root, "--quiet"] + keys.buildArgs(["ci"], keyList: list, validFor: "1h"),
            env: ClientTest.buildEnv)
        #expect(fine.status == 0 && !fine.stderr.contains("clock skew"), "\(fine.stderr)")
        // The key list's own --valid-for.
        let short = try Harness.run(
            ClientTest.folioPath,
            ["keys", "authorize", "--root", keys.key("root"), keys.pub("ci"), "--valid-for", "2m", "--output", root.dir + "/short.plist"])
        #expect(short.status == 0 && short.stderr.contains("warning: --valid-for 2m is shorter than the 5 minutes of clock skew"), "\(short.stderr)")
    }
}
