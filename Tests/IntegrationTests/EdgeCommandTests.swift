import FolioTestSupport
import Foundation
import Testing

/// `folio-edge`'s two modes take their own options: each refuses the other's, by name, before
/// anything starts.
@Suite("folio-edge options by mode")
struct EdgeCommandTests {
    static func start(_ args: [String]) throws -> Harness.Output {
        try Harness.run(Harness.binary("folio-edge"), ["--port", "0"] + args)
    }

    @Test(arguments: [
        (["--origin", "http://127.0.0.1:1", "--root", "public"], "--root is for serving a published directory"),
        (["--origin", "http://127.0.0.1:1", "--memory-budget", "1000"], "--memory-budget is for serving a published directory"),
        (["--origin", "http://127.0.0.1:1", "--manifest-max-age", "5"], "--manifest-max-age is for serving a published directory"),
        (["--cache-dir", "/tmp/x"], "--cache-dir is for a cache tier: add --origin URL, or remove --cache-dir"),
        (["--purge-origin"], "--purge-origin is for a cache tier"),
        (["--cache-size", "2G"], "--cache-size is for a cache tier"),
        (["--maintenance-file", "/tmp/m"], "--maintenance-file is for a cache tier"),
    ])
    func refusesTheOtherModesOptions(args: [String], message: String) throws {
        let r = try Self.start(args)
        #expect(r.status != 0 && r.stderr.contains(message), "\(args): exit \(r.status), \(r.stderr)")
        #expect(!r.stdout.contains("listening"))
    }
}
