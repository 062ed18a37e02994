import FolioPlist
import FolioSupport
import Foundation

/// One Ed25519 signature and the key ID of the key that made it.
package struct Signature: Sendable, Equatable {
    package var keyID: String
    package var bytes: [UInt8]

    package init(keyID: String, bytes: [UInt8]) {
        self.keyID = keyID
        self.bytes = bytes
    }

    var plist: PlistValue { .dict(["keyID": .string(keyID), "signature": .data(Data(bytes))]) }

    static func list(_ value: PlistValue?, _ at: String) throws(TrustError) -> [Signature] {
        guard let items = value?.arrayValue else { throw TrustError(.badSignature, "\(at) has no signatures array") }
        var out: [Signature] = []
        for (i, item) in items.enumerated() {
            guard let id = item["keyID"]?.stringValue, let bytes = item["signature"]?.dataValue.map(Array.init) else {
                throw TrustError(.badSignature, "\(at).signatures[\(i)] needs a keyID string and signature data")
            }
            out.append(Signature(keyID: id, bytes: bytes))
        }
        return out
    }
}

/// What the messages that are signed start with, so a signature made for one kind of document
/// can never pass for another (a root key that also signs manifests, say).
package enum SigningContext {
    package static let manifest = Array("folio-manifest-v1\n".utf8)
    package static let keyList = Array("folio-key-list-v1\n".utf8)
}

/// The signing keys a root authorizes: which keys may sign manifests, until when, and how many
/// of them must sign each one. Signed by the root key as a ``SignedKeyList``.
package struct KeyList: Sendable, Equatable {
    /// Increases with each list a root signs; a client refuses a list older than one it has seen.
    package var version: Int
    package var createdAt: Date
    package var expiresAt: Date
    /// Signatures by distinct listed keys a manifest needs.
    package var threshold: Int
    /// The root whose signature makes this list valid.
    package var root: PublicKey
    /// The authorized signing keys.
    package var keys: [PublicKey]
    /// Key IDs no longer authorized, named so that their signatures are refused as revoked.
    package var revoked: [String]

    package init(
        version: Int, createdAt: Date, expiresAt: Date, threshold: Int, root: PublicKey, keys: [PublicKey], revoked: [String] = []
    ) {
        self.version = version
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.threshold = threshold
        self.root = root
        self.keys = keys
        self.revoked = revoked
    }

    package func key(_ keyID: String) -> PublicKey? { keys.first { $0.keyID == keyID } }

    package var plist: PlistValue {
        func key(_ k: PublicKey) -> PlistValue { .dict(["keyID": .string(k.keyID), "ed25519": .data(Data(k.raw))]) }
        return .dict([
            "kind": .string("folio-key-list"), "version": .int(Int64(version)),
            "createdAt": .date(createdAt), "expiresAt": .date(expiresAt), "threshold": .int(Int64(threshold)),
            "root": key(root), "keys": .array(keys.map(key)), "revoked": .array(revoked.map { .string($0) }),
        ])
    }

    package init(plist: PlistValue) throws(TrustError) {
        func fail(_ why: String) -> TrustError { TrustError(.untrustedKeyList, "the key list is malformed: \(why)") }
        func key(_ value: PlistValue?, _ at: String) throws(TrustError) -> PublicKey {
            guard let raw = value?["ed25519"]?.dataValue.map(Array.init), let id = value?["keyID"]?.stringValue else {
                throw fail("\(at) needs keyID and ed25519")
            }
            let k: PublicKey
            do { k = try PublicKey(raw: raw) } catch { throw fail("\(at): \(error)") }
            guard k.keyID == id else { throw fail("\(at).keyID \(id) does not match its key (\(k.keyID))") }
            return k
        }
        guard plist["kind"]?.stringValue == "folio-key-list" else { throw fail("it is not a folio-key-list") }
        guard let version = plist["version"]?.intValue, version >= 1 else { throw fail("no version of at least 1") }
        guard let created = plist["createdAt"]?.dateValue, let expires = plist["expiresAt"]?.dateValue else {
            throw fail("no createdAt and expiresAt dates")
        }
        guard let items = plist["keys"]?.arrayValue, !items.isEmpty else { throw fail("no keys") }
        var keys: [PublicKey] = []
        for (i, item) in items.enumerated() { keys.append(try key(item, "keys[\(i)]")) }
        guard Set(keys).count == keys.count else { throw fail("a key is listed twice") }
        guard let threshold = plist["threshold"]?.intValue, threshold >= 1, threshold <= keys.count else {
            throw fail("threshold must be from 1 to the number of keys (\(keys.count))")
        }
        let revoked = try (plist["revoked"]?.arrayValue ?? []).map { (v: PlistValue) throws(TrustError) -> String in
            guard let s = v.stringValue else { throw fail("revoked holds a \(v.typeName)") }
            return s
        }
        self.init(
            version: version, createdAt: created, expiresAt: expires, threshold: threshold, root: try key(plist["root"], "root"),
            keys: keys, revoked: revoked)
    }
}

/// A key list with its root signature: the bytes of `keylist.plist`, and of the key list that
/// travels inside every signed manifest.
///
/// ```
/// { keyList: <data: the KeyList plist>, signatures: [{ keyID, signature }] }
/// ```
/// The root signs `"folio-key-list-v1\n"` followed by the exact bytes of `keyList`.
package struct SignedKeyList: Sendable, Equatable {
    /// The signed bytes (a binary plist of ``KeyList``).
    package var listBytes: [UInt8]
    package var keyList: KeyList
    package var signatures: [Signature]
    /// The whole file.
    package var bytes: [UInt8]

    /// Signs `list` with `root` (whose public key must be `list.root`).
    package init(signing list: KeyList, with root: SecretKey) {
        listBytes = BinaryPlist.encode(list.plist)
        keyList = list
        signatures = [Signature(keyID: root.keyID, bytes: root.sign(SigningContext.keyList + listBytes))]
        bytes = BinaryPlist.encode(.dict(["keyList": .data(Data(listBytes)), "signatures": .array(signatures.map(\.plist))]))
    }

    /// Reads a key list file without checking its signature.
    package init(bytes: [UInt8]) throws(TrustError) {
        let value: PlistValue
        do { value = try PlistValue.decode(bytes) } catch {
            throw TrustError(.untrustedKeyList, "the key list is not a property list: \(error)")
        }
        guard let list = value["keyList"]?.dataValue.map(Array.init) else {
            throw TrustError(.untrustedKeyList, "the key list file has no keyList data (folio keys authorize writes one)")
        }
        let inner: PlistValue
        do { inner = try BinaryPlist.decode(list) } catch {
            throw TrustError(.untrustedKeyList, "the key list's keyList is not a binary plist: \(error)")
        }
        self.listBytes = list
        self.keyList = try KeyList(plist: inner)
        self.signatures = try Signature.list(value["signatures"], "the key list")
        self.bytes = bytes
    }

    /// Whether the list's own root signed it (says nothing about whether that root is trusted).
    package var isSignedByItsRoot: Bool {
        signatures.contains { $0.keyID == keyList.root.keyID && keyList.root.verifies($0.bytes, of: SigningContext.keyList + listBytes) }
    }
}
