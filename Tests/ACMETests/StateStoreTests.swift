@testable import FolioACME
import FolioTestSupport
import Foundation
import Testing

/// The state directory's certificate replacement: a crash at any point leaves a usable pair.
@Suite("ACME: state directory")
struct StateStoreTests {
    static func withStore(_ body: (ACMEStateStore) throws -> Void) throws {
        let dir = Harness.tempDir("acme-store")
        defer { Harness.cleanup(dir) }
        let store = ACMEStateStore(path: dir + "/state")
        try store.prepare()
        try body(store)
    }

    @Test("a saved pair loads back; the key file is 0600 from the start")
    func saveAndLoad() throws {
        try Self.withStore { store in
            let (chain, key) = try Fixtures.selfSigned()
            let saved = try store.saveCertificate(chain: Array(chain.utf8), key: key, domains: Fixtures.domains, now: Date())
            let loaded = try #require(store.loadCertificate(now: Date()))
            #expect(loaded.serialNumber == saved.serialNumber && loaded.chainPEM == Array(chain.utf8))
            #expect(PebbleTests.mode(store.certificateKeyPath) == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).sorted() == ["certificate.key", "certificate.pem"])
            #expect(store.loadCertificate(now: saved.notAfter + 1) == nil)
        }
    }

    @Test("a certificate for other names, or expired, is refused by save; the old pair stays")
    func refusesBadCertificates() throws {
        try Self.withStore { store in
            let (chain, key) = try Fixtures.selfSigned()
            let first = try store.saveCertificate(chain: Array(chain.utf8), key: key, domains: Fixtures.domains, now: Date())
            let (other, otherKey) = try Fixtures.selfSigned(["other.test"])
            #expect(throws: ACMEError.self) {
                try store.saveCertificate(chain: Array(other.utf8), key: otherKey, domains: Fixtures.domains, now: Date())
            }
            let (old, oldKey) = try Fixtures.selfSigned(notBefore: Date() - 7200, lifetime: 3600)
            #expect(throws: ACMEError.self) { try store.saveCertificate(chain: Array(old.utf8), key: oldKey, domains: Fixtures.domains, now: Date()) }
            #expect(store.loadCertificate(now: Date())?.serialNumber == first.serialNumber)
        }
    }

    @Test("a replacement that committed (the .new chain is there) is finished at load")
    func rollsForward() throws {
        try Self.withStore { store in
            let (chain, key) = try Fixtures.selfSigned()
            _ = try store.saveCertificate(chain: Array(chain.utf8), key: key, domains: Fixtures.domains, now: Date())
            let (next, nextKey) = try Fixtures.selfSigned()
            // Crashed after the key was renamed into place, before the chain was.
            try Fixtures.write(nextKey.pemRepresentation, store.certificateKeyPath, mode: 0o600)
            try Fixtures.write(next, store.certificatePath + ".new", mode: 0o644)
            #expect(store.loadCertificate(now: Date())?.chainPEM == Array(next.utf8))
            #expect(!FileManager.default.fileExists(atPath: store.certificatePath + ".new"))
        }
    }

    @Test("a replacement that never committed (only the .new key) is dropped at load")
    func rollsBack() throws {
        try Self.withStore { store in
            let (chain, key) = try Fixtures.selfSigned()
            _ = try store.saveCertificate(chain: Array(chain.utf8), key: key, domains: Fixtures.domains, now: Date())
            try Fixtures.write(try Fixtures.selfSigned().key.pemRepresentation, store.certificateKeyPath + ".new", mode: 0o600)
            #expect(store.loadCertificate(now: Date())?.chainPEM == Array(chain.utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).sorted() == ["certificate.key", "certificate.pem"])
        }
    }

    @Test("a second obtain into a locked directory is refused")
    func lock() throws {
        try Self.withStore { store in
            let fd = try store.lock()
            defer { close(fd) }
            #expect(throws: ACMEError.self) { try store.lock() }
        }
    }
}
