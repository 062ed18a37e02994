import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// What verifying a signed manifest adds to a sync: the sync's own steps for a signed manifest
/// (`Manifest(bytes:)`, then `Trust.verify` with that parse: the envelope, the key list, the
/// root's signature on it, the signing key's on the manifest, expiry) against the parse of the
/// unsigned manifest, which every sync does anyway. The published manifest is signed here with a
/// fresh key (one signature, threshold 1), as `folio-build --signing-key` signs it.
func signingBenchmark(root: String, iterations: Int) throws {
    let served = try FileIO.read(root + "/manifest.plist")
    let manifest = try Manifest(bytes: served)
    let plain = BinaryPlist.encode(manifest.plist)
    let rootKey = SecretKey.generate()
    let signer = SecretKey.generate()
    let now = Date()
    let list = SignedKeyList(
        signing: KeyList(
            version: 1, createdAt: now, expiresAt: now.addingTimeInterval(86_400), threshold: 1, root: rootKey.publicKey,
            keys: [signer.publicKey]),
        with: rootKey)
    var signedManifest = manifest
    signedManifest.expiresAt = now.addingTimeInterval(86_400)
    signedManifest.schemaVersion = Manifest.signedSchemaVersion
    let inner = BinaryPlist.encode(signedManifest.plist)
    let signed = SignedManifest(signing: inner, manifest: signedManifest, keys: [signer], keyList: list).bytes
    let trust = Trust(roots: [rootKey.publicKey])
    var versions = 0
    let parse = try measure(iterations) { versions &+= try Manifest(bytes: plain).version }
    let verify = try measure(iterations) {
        let parsed = try Manifest(bytes: signed)
        versions &+= try trust.verify(signed, parsed: parsed).manifest.version
    }
    let added = verify.median - parse.median
    print("signing: manifest of \(manifest.entries.count) entries, \(plain.count) bytes unsigned, \(signed.count) signed; median of \(iterations) runs")
    print("  parse (unsigned)  \(fmt(parse.median)) / \(fmt(parse.best))")
    print("  verify + parse    \(fmt(verify.median)) / \(fmt(verify.best))")
    print("  added by verifying \(fmt(added))   (target < 1 ms: \(added < 1 ? "met" : "MISSED"))")
    if versions == 42 { print("") }
}
