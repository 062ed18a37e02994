import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// docs/deploy.md, "Host Folio on a VM", run as written by scripts/guide-test.sh: `make install`
/// of the built programs, the config, the service started as systemd would start it (its
/// credential, its socket units' ports on loopback) on an empty root, a certificate from pebble,
/// a first push deploy and the next ones, the metrics and the access log through goaccess.
@Suite("docs/deploy.md runs as written", .serialized)
struct DeployGuideTests {
    @Test("every command of the guide succeeds, and the edge serves what the guide says")
    func guide() throws {
        try Pebble.requireInstalled()
        // The guide's edge listens on 127.0.0.1's ports 80, 443 and 9090, as its socket units say:
        // if another program holds one, systemd-socket-activate says so in the output.
        let dir = Harness.tempDir("deploy-guide")
        defer { Harness.cleanup(dir) }
        let pebble = try Pebble.start(httpPort: 80, tlsALPNPort: 443)
        defer { pebble.stop() }
        let issuing = dir + "/pebble-issuing-root.pem"
        try FileIO.writeAtomically(Array(try pebble.issuingRoot().serializeAsPEM().pemString.utf8), to: issuing)
        let domain = EdgeACMETests.domain
        let r = try Harness.run(
            "/bin/bash", [Harness.repoRoot + "/scripts/guide-test.sh", Harness.repoRoot + "/docs/deploy.md"],
            env: [
                "DOMAIN": domain, "EMAIL": "ops@folio.test", "ACME_DIRECTORY": pebble.directoryURL, "INSTALL_FROM": Harness.binDir,
                "GUIDE_HOSTS": "127.0.0.1 \(domain)", "GUIDE_CA": "\(pebble.tlsRootPath) \(issuing)",
            ])
        let out = r.stdout + r.stderr
        #expect(r.status == 0, "\(out.suffix(4000))")
        #expect(out.contains("configuration OK"), "\(out.suffix(2000))")
        #expect(out.contains("holds no manifest.plist yet"), "validate notes the empty root: \(out.suffix(2000))")
        #expect(out.contains("no content deployed yet: deploy with folio-build publish DIR https://HOST:ADMIN\n503\n"), "started empty: \(out.suffix(2000))")
        #expect(out.contains("deployed version 1"), "the first deploy: \(out.suffix(2000))")
        #expect(out.contains("ok version 1"), "the edge served the first version over https: \(out.suffix(2000))")
        #expect(out.contains("200 2\n"), "HTTP/2 over https: \(out.suffix(2000))")
        #expect(out.contains("308 https://\(domain)/manifest.plist"), "\(out.suffix(2000))")
        #expect(out.contains("0 files uploaded"), "an unchanged deploy uploads nothing: \(out.suffix(2000))")
        #expect(out.contains("deployed version 2"), "\(out.suffix(2000))")
        #expect(out.contains("ok version 2"), "\(out.suffix(2000))")
        #expect(out.contains("folio_edge_loaded_version 2"), "\(out.suffix(2000))")
    }
}
