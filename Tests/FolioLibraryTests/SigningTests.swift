import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// The signing model: key files, key lists, signed manifests and every way `Trust` refuses one.
@Suite("signing")
struct SigningTests {
    let root = SecretKey.generate()
    let signerA = SecretKey.generate()
    let signerB = SecretKey.generate()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func keyList(
        version: Int = 1, keys: [SecretKey]? = nil, threshold: Int = 1, revoked: [String] = [], expiresIn: Double = 86_400 * 365,
        root: SecretKey? = nil
    ) -> SignedKeyList {
        let root = root ?? self.root
        let list = KeyList(
            version: version, createdAt: now, expiresAt: now.addingTimeInterval(expiresIn), threshold: threshold,
            root: root.publicKey, keys: (keys ?? [signerA]).map(\.publicKey), revoked: revoked)
        return SignedKeyList(signing: list, with: root)
    }

    func manifest(version: Int = 3, expiresIn: Double = 7 * 86_400, created: Date? = nil) -> Manifest {
        let created = created ?? now
        return Manifest(
            version: version, createdAt: created, history: "h1", expiresAt: created.addingTimeInterval(expiresIn),
            entries: [Manifest.Entry(path: "sonnets/018.plist", sha256: String(repeating: "ab", count: 32), size: 10, gzipSize: nil, contentType: Manifest.plistContentType)])
    }

    func signed(_ m: Manifest? = nil, by keys: [SecretKey]? = nil, list: SignedKeyList? = nil) -> [UInt8] {
        let m = m ?? manifest()
        return SignedManifest(signing: BinaryPlist.encode(m.plist), manifest: m, keys: keys ?? [signerA], keyList: list ?? keyList()).bytes
    }

    var trust: Trust { Trust(roots: [root.publicKey]) }

    func refusal(_ bytes: [UInt8], minimumKeyListVersion: Int? = nil, at: Date? = nil) -> TrustError? {
        do {
            _ = try trust.verify(bytes, now: at ?? now, minimumKeyListVersion: minimumKeyListVersion)
            return nil
        } catch { return error }
    }

    @Test("a manifest signed under a root-signed key list verifies, and reads as a plain Manifest too")
    func verifies() throws {
        let bytes = signed()
        let verified = try trust.verify(bytes, now: now)
        #expect(verified.manifest == manifest())
        #expect(verified.validSigners == [signerA.keyID])
        #expect(verified.verifiedSigners == [signerA.keyID])
        #expect(try Manifest(bytes: bytes) == manifest())
        #expect(try Manifest(bytes: bytes).schemaVersion == Manifest.signedSchemaVersion)
        // Deterministic: the same inputs sign to the same bytes (reproducible publishes).
        #expect(signed() == bytes)
    }

    @Test("every refusal has its own kind")
    func refusals() throws {
        // Unsigned.
        #expect(refusal(BinaryPlist.encode(Manifest(version: 3, createdAt: now, entries: []).plist))?.kind == .unsigned)
        // Tampered: the signed bytes changed after signing.
        let good = signed()
        guard case .dict(var envelope) = try BinaryPlist.decode(good) else { throw TestFailure("not a dict") }
        var altered = manifest()
        altered.entries[0].sha256 = String(repeating: "cd", count: 32)
        envelope["manifest"] = .data(Data(BinaryPlist.encode(altered.plist)))
        #expect(refusal(BinaryPlist.encode(.dict(envelope)))?.kind == .badSignature)
        // A signature over other bytes (another version's), attached to this one.
        let other = try #require(try SignedManifest.decode(signed(manifest(version: 2))))
        envelope["manifest"] = .data(Data(BinaryPlist.encode(manifest().plist)))
        envelope["signatures"] = .array(other.signatures.map { .dict(["keyID": .string($0.keyID), "signature": .data(Data($0.bytes))]) })
        #expect(refusal(BinaryPlist.encode(.dict(envelope)))?.kind == .badSignature)
        // Unknown key, revoked key, too few signatures.
        #expect(refusal(signed(by: [signerB]))?.kind == .unknownSigner)
        #expect(refusal(signed(by: [signerB], list: keyList(revoked: [signerB.keyID])))?.kind == .revokedSigner)
        let twoOfTwo = keyList(keys: [signerA, signerB], threshold: 2)
        #expect(refusal(signed(by: [signerA], list: twoOfTwo))?.kind == .tooFewSignatures)
        #expect(refusal(signed(by: [signerA, signerA], list: twoOfTwo))?.kind == .tooFewSignatures, "one key signing twice counts once")
        #expect(refusal(signed(by: [signerA, signerB], list: twoOfTwo)) == nil)
        // Expired manifest, expired key list, with the clock-skew allowance.
        let expired = signed(manifest(expiresIn: 3600))
        #expect(refusal(expired, at: now.addingTimeInterval(3600 + Trust.clockSkewAllowance - 1)) == nil)
        #expect(refusal(expired, at: now.addingTimeInterval(3600 + Trust.clockSkewAllowance + 1))?.kind == .expired)
        #expect(refusal(signed(list: keyList(expiresIn: 60)), at: now.addingTimeInterval(60 + Trust.clockSkewAllowance + 1))?.kind == .expired)
        // A key list by another root, or one whose root signature does not cover its bytes.
        let rogue = SecretKey.generate()
        #expect(refusal(signed(list: keyList(root: rogue)))?.kind == .untrustedKeyList)
        var forged = keyList(keys: [signerA])
        let widened = KeyList(
            version: 1, createdAt: now, expiresAt: now.addingTimeInterval(86_400), threshold: 1, root: root.publicKey,
            keys: [signerA.publicKey, signerB.publicKey])
        forged.listBytes = BinaryPlist.encode(widened.plist)
        forged.bytes = BinaryPlist.encode(
            .dict(["keyList": .data(Data(forged.listBytes)), "signatures": .array(forged.signatures.map { .dict(["keyID": .string($0.keyID), "signature": .data(Data($0.bytes))]) })]))
        #expect(refusal(signed(by: [signerB], list: forged))?.kind == .untrustedKeyList)
        // A key list older than one already verified (a replay of a list from before a revocation).
        #expect(refusal(signed(list: keyList(version: 1)), minimumKeyListVersion: 2)?.kind == .rollback)
        #expect(refusal(signed(list: keyList(version: 2)), minimumKeyListVersion: 2) == nil)
    }

    @Test("the signing context keeps a key list signature from passing as a manifest signature")
    func domainSeparation() throws {
        // The root also listed as a signing key: its key list signature is over other bytes.
        let list = keyList(keys: [root])
        let m = manifest()
        let bytes = BinaryPlist.encode(m.plist)
        let forged = root.sign(SigningContext.keyList + bytes)
        let envelope: PlistValue = .dict([
            "schemaVersion": .int(2), "manifest": .data(Data(bytes)), "keyList": .data(Data(list.bytes)),
            "signatures": .array([.dict(["keyID": .string(root.keyID), "signature": .data(Data(forged))])]),
        ])
        #expect(refusal(BinaryPlist.encode(envelope))?.kind == .badSignature)
    }

    @Test("the verifier and the plain reader accept exactly the same signed files (a fuzzer found an outer schemaVersion only one checked)")
    func oneReader() throws {
        guard case .dict(var envelope) = try BinaryPlist.decode(signed()) else { throw TestFailure("not a dict") }
        for version: PlistValue in [.int(64), .int(1), .string("2")] {
            envelope["schemaVersion"] = version
            let bytes = BinaryPlist.encode(.dict(envelope))
            #expect(refusal(bytes) != nil, "\(version)")
            #expect(throws: ManifestError.self) { try Manifest(bytes: bytes) }
        }
        // A signed manifest inside a signed manifest is not a manifest either way.
        let nested = SignedManifest(signing: signed(), manifest: manifest(), keys: [signerA], keyList: keyList()).bytes
        #expect(refusal(nested) != nil)
        #expect(throws: ManifestError.self) { try Manifest(bytes: nested) }
    }

    @Test("key files round-trip, and damaged or swapped ones are refused with the reason")
    func keyFiles() throws {
        let key = SecretKey.generate()
        let again = try SecretKey(fileText: key.fileText, path: "k.key")
        #expect(again.keyID == key.keyID)
        #expect(again.sign([1, 2, 3]) == key.sign([1, 2, 3]))
        #expect(try PublicKey(fileText: key.publicKey.fileText, path: "k.pub") == key.publicKey)
        func problem(_ body: () throws -> Void) -> String {
            do { try body() } catch { return "\(error)" }
            return ""
        }
        #expect(problem { _ = try PublicKey(fileText: key.fileText, path: "k.key") }.contains("is a secret key"))
        #expect(problem { _ = try SecretKey(fileText: key.publicKey.fileText, path: "k.pub") }.contains("is a public key"))
        #expect(problem { _ = try PublicKey(fileText: "hello\n", path: "x") }.contains("not a Folio key file"))
        let otherID = key.publicKey.fileText.replacingOccurrences(of: key.keyID, with: "0000000000000000")
        #expect(problem { _ = try PublicKey(fileText: otherID, path: "k.pub") }.contains("does not match"))
        let short = "\(KeyFile.publicHeader)\nkey-id: \(key.keyID)\ned25519: AAAA\n"
        #expect(problem { _ = try PublicKey(fileText: short, path: "k.pub") }.contains("not 32 bytes"))
        #expect(problem { _ = try PublicKey(fileText: "# comment\n" + key.publicKey.fileText, path: "k.pub") } == "")
    }

    @Test("durations")
    func durations() {
        #expect(DurationText.seconds("90s") == 90)
        #expect(DurationText.seconds("12h") == 43_200)
        #expect(DurationText.seconds("7d") == 604_800)
        #expect(DurationText.seconds("2w") == 1_209_600)
        for bad in ["", "7", "d", "0d", "-1d", "1y", "7 d", "99999999999999999d"] { #expect(DurationText.seconds(bad) == nil, "\(bad)") }
    }

    @Test("malformed signed manifests and key lists are errors, never crashes")
    func malformed() throws {
        let good = signed()
        var rng = SplitMix64(seed: 16)
        for _ in 0..<300 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...4, using: &rng) { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng) }
            if let refused = refusal(bytes) {
                #expect(!refused.description.isEmpty)
            } else {
                // A flipped bit the signature does not cover (the envelope's own bytes) may pass;
                // what verifies is still exactly the signed manifest.
                #expect(try trust.verify(bytes, now: now).manifest == manifest())
            }
        }
        for shape: PlistValue in [
            .dict(["manifest": .data(Data([1, 2, 3])), "signatures": .array([])]),
            .dict(["manifest": .data(Data(BinaryPlist.encode(manifest().plist))), "signatures": .string("x"), "keyList": .data(Data())]),
            .dict(["manifest": .data(Data(BinaryPlist.encode(manifest().plist))), "signatures": .array([.int(1)]), "keyList": .data(Data(keyList().bytes))]),
        ] {
            #expect(refusal(BinaryPlist.encode(shape)) != nil)
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
