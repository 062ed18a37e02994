import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// How a build signs what it publishes (`--signing-key`, `--key-list`, `--valid-for`).
package struct ReleaseSigning: Sendable {
    package var keys: [SecretKey]
    package var keyList: SignedKeyList
    /// Seconds from signing to a manifest's expiry.
    package var validFor: Int
    /// The signing time, from the clock (not `SOURCE_DATE_EPOCH`, which dates the content): a
    /// manifest expires `validFor` after it is signed.
    package var now: Date

    /// The default lifetime of a signed manifest: a week.
    package static let defaultValidFor = 7 * 86_400

    package init(keys: [SecretKey], keyList: SignedKeyList, validFor: Int, now: Date) {
        self.now = now
        self.keys = keys
        self.keyList = keyList
        self.validFor = validFor
    }

    /// Reads the keys and the key list and checks that they can sign at `now`: every key
    /// authorized, enough of them for the threshold, the list signed by its root and current.
    /// Secret keys are never read from the content or published directories.
    package static func load(
        keyFiles: [String], keyListFile: String, validFor: Int, now: Date, forbidden: [String]
    ) throws(BuildError) -> ReleaseSigning {
        for file in keyFiles {
            if let dir = forbidden.first(where: { FileIO.isInside(file, $0) }) {
                throw BuildError(
                    "the signing key \(file) is inside \(dir)/, which is compiled or published; keep secret keys outside both (e.g. ~/.config/folio/)")
            }
        }
        var keys: [SecretKey] = []
        for file in keyFiles {
            do { keys.append(try SecretKey(contentsOf: file)) } catch { throw BuildError("--signing-key: \(error)") }
        }
        let listBytes: [UInt8]
        do { listBytes = try FileIO.read(keyListFile) } catch { throw BuildError("--key-list: cannot read \(keyListFile): \(error)") }
        if let what = KeyFile.kind(of: listBytes) {
            throw BuildError("--key-list: \(keyListFile) is a \(what) key, not a key list; give the list folio keys authorize wrote (keylist.plist)")
        }
        let signed: SignedKeyList
        do { signed = try SignedKeyList(bytes: listBytes) } catch { throw BuildError("--key-list \(keyListFile): \(error)") }
        let list = signed.keyList
        guard signed.isSignedByItsRoot else {
            throw BuildError("--key-list \(keyListFile) is not signed by its root key \(list.root.keyID); make it again with folio keys authorize")
        }
        if now.timeIntervalSince(list.expiresAt) > 0 {
            throw BuildError(
                "--key-list \(keyListFile) (version \(list.version)) expired at \(PlistDates.formatISO8601(list.expiresAt)); clients would refuse what it signs: make a new one with folio keys authorize")
        }
        var seen = Set<String>()
        for (file, key) in zip(keyFiles, keys) {
            guard list.key(key.keyID) != nil else {
                let state = list.revoked.contains(key.keyID) ? "revokes it" : "does not authorize it"
                throw BuildError(
                    "the signing key \(file) (\(key.keyID)) cannot sign: key list \(keyListFile) \(state) (it authorizes \(list.keys.map(\.keyID).joined(separator: ", "))); authorize it with folio keys authorize")
            }
            guard seen.insert(key.keyID).inserted else { throw BuildError("the signing key \(file) (\(key.keyID)) is given twice") }
        }
        guard keys.count >= list.threshold else {
            throw BuildError(
                "key list \(keyListFile) requires \(list.threshold) signatures and \(keys.count) signing key\(keys.count == 1 ? " was" : "s were") given; pass \(list.threshold) --signing-key files")
        }
        return ReleaseSigning(keys: keys, keyList: signed, validFor: validFor, now: now)
    }

    /// The expiry of a manifest signed at `signedAt`.
    package func expiry(from signedAt: Date) -> Date { signedAt.addingTimeInterval(Double(validFor)) }

    /// Whether `current` (the bytes of the published manifest) must be signed again now: it is
    /// unsigned, signed under another key list or by other keys, past half its lifetime, or
    /// valid for longer than `validFor` from now (the lifetime was shortened).
    package func needsResigning(_ current: [UInt8]?) -> Bool {
        guard let current, let signed = try? SignedManifest.decode(current), let expiresAt = signed.manifest.expiresAt else { return true }
        if signed.keyList.bytes != keyList.bytes { return true }
        if Set(signed.signatures.map(\.keyID)) != Set(keys.map(\.keyID)) { return true }
        // Past half its life, or valid for longer than --valid-for now allows.
        return expiresAt.timeIntervalSince(now) < Double(validFor) / 2 || expiresAt > expiry(from: now)
    }

    /// The signed manifest file for `manifest`.
    package func sign(_ manifest: Manifest) -> SignedManifest {
        SignedManifest(signing: manifest.binaryPlist, manifest: manifest, keys: keys, keyList: keyList)
    }

    /// A warning when the key list expires before manifests signed now would.
    package var warning: String? {
        let list = keyList.keyList
        guard list.expiresAt < expiry(from: now) else { return nil }
        return "key list version \(list.version) expires at \(PlistDates.formatISO8601(list.expiresAt)), before this manifest (\(PlistDates.formatISO8601(expiry(from: now)))): clients refuse it from then on; have the root authorize a new one in time"
    }
}
