import FolioPlist
import FolioSupport
import Foundation

/// The bytes of `manifest.plist` in a signed publish: the manifest, its signatures and the key
/// list they are checked against, in one file, so that one response carries all three.
///
/// ```
/// { schemaVersion: 2, manifest: <data: the manifest plist>,
///   signatures: [{ keyID, signature }], keyList: <data: keylist.plist> }
/// ```
/// Each signing key signs `"folio-manifest-v1\n"` followed by the exact bytes of `manifest`.
package struct SignedManifest: Sendable {
    /// The signed bytes.
    package var manifestBytes: [UInt8]
    package var manifest: Manifest
    package var signatures: [Signature]
    package var keyList: SignedKeyList
    /// The whole file.
    package var bytes: [UInt8]
    /// The key IDs whose signatures ``Trust/verify(_:now:minimumKeyListVersion:)`` found valid,
    /// sorted (empty before verifying).
    package var verifiedSigners: [String] = []

    /// Signs `manifestBytes` (the binary plist of `manifest`) with each of `keys`.
    package init(signing manifestBytes: [UInt8], manifest: Manifest, keys: [SecretKey], keyList: SignedKeyList) {
        self.manifestBytes = manifestBytes
        self.manifest = manifest
        self.keyList = keyList
        signatures = keys.map { Signature(keyID: $0.keyID, bytes: $0.sign(SigningContext.manifest + manifestBytes)) }
        bytes = BinaryPlist.encode(
            .dict([
                "schemaVersion": .int(Int64(Manifest.signedSchemaVersion)), "manifest": .data(Data(manifestBytes)),
                "signatures": .array(signatures.map(\.plist)), "keyList": .data(Data(keyList.bytes)),
            ]))
    }

    /// Reads a signed manifest without checking anything but its shape; nil when `bytes` are a
    /// plain (unsigned) manifest.
    ///
    /// `parsed`, when given, must be `Manifest(bytes: bytes)`, already read by the caller: the
    /// manifest inside is then not parsed a second time (a sync parses it once).
    package static func decode(_ bytes: [UInt8], parsed: Manifest? = nil) throws(TrustError) -> SignedManifest? {
        let value: PlistValue
        do { value = try PlistValue.decode(bytes) } catch { throw TrustError(.badSignature, "the manifest is not a property list: \(error)") }
        let unwrapped: (bytes: [UInt8], manifest: Manifest)?
        do {
            if let parsed {
                unwrapped = try Manifest.signedBytes(value).map { ($0, parsed) }
            } else {
                unwrapped = try Manifest.unwrapSigned(value)
            }
        } catch { throw TrustError(.badSignature, "the signed manifest is unusable: \(error)") }
        guard let (inner, manifest) = unwrapped else { return nil }
        guard let list = value["keyList"]?.dataValue else { throw TrustError(.untrustedKeyList, "the signed manifest carries no key list") }
        return SignedManifest(
            manifestBytes: inner, manifest: manifest, signatures: try Signature.list(value["signatures"], "the manifest"),
            keyList: try SignedKeyList(bytes: Array(list)), bytes: bytes)
    }

    private init(manifestBytes: [UInt8], manifest: Manifest, signatures: [Signature], keyList: SignedKeyList, bytes: [UInt8]) {
        self.manifestBytes = manifestBytes
        self.manifest = manifest
        self.signatures = signatures
        self.keyList = keyList
        self.bytes = bytes
    }

    /// Key IDs of the signatures that verify under the carried key list (not checked against a root).
    package var validSigners: [String] {
        var seen = Set<String>()
        return signatures.compactMap { s in
            guard let key = keyList.keyList.key(s.keyID), !seen.contains(s.keyID),
                key.verifies(s.bytes, of: SigningContext.manifest + manifestBytes)
            else { return nil }
            seen.insert(s.keyID)
            return s.keyID
        }
    }
}

/// The root keys a client (or an edge) trusts, and the checks a signed manifest must pass.
package struct Trust: Sendable {
    package var roots: [PublicKey]
    /// How far a clock may be behind: a manifest or key list is refused only once it has been
    /// expired for longer than this.
    package static let clockSkewAllowance: TimeInterval = 300
    /// This trust's allowance (``clockSkewAllowance``; tests set less).
    package var skew: TimeInterval = Trust.clockSkewAllowance

    package init(roots: [PublicKey]) { self.roots = roots }

    /// Reads root public keys from `.pub` files.
    package init(files: [String]) throws(KeyFileError) {
        var roots: [PublicKey] = []
        for f in files { roots.append(try PublicKey(contentsOf: f)) }
        self.init(roots: roots)
    }

    /// The key IDs trusted, for messages.
    package var rootIDs: String { roots.map(\.keyID).joined(separator: ", ") }

    /// Checks served manifest bytes: a key list signed by a trusted root, not expired and not
    /// older than `minimumKeyListVersion`; at least `threshold` valid signatures by its keys
    /// over the exact manifest bytes; a manifest not expired at `now`.
    /// `parsed`: see ``SignedManifest/decode(_:parsed:)``.
    package func verify(
        _ bytes: [UInt8], now: Date = Date(), minimumKeyListVersion: Int? = nil, parsed: Manifest? = nil
    ) throws(TrustError) -> SignedManifest {
        guard let signed = try SignedManifest.decode(bytes, parsed: parsed) else {
            throw TrustError(.unsigned, "the manifest is not signed, and this client trusts root key \(rootIDs): unsigned content is refused")
        }
        let list = signed.keyList.keyList
        guard let root = roots.first(where: { $0 == list.root }) else {
            throw TrustError(
                .untrustedKeyList,
                "the key list names root key \(list.root.keyID), which is not trusted here (trusted: \(rootIDs)); it was not authorized by your root")
        }
        guard signed.keyList.signatures.contains(where: { $0.keyID == root.keyID && root.verifies($0.bytes, of: SigningContext.keyList + signed.keyList.listBytes) })
        else {
            throw TrustError(.untrustedKeyList, "the key list's signature by root key \(root.keyID) does not verify: the key list was altered or not signed by the root")
        }
        let late = now.timeIntervalSince(list.expiresAt)
        if late > skew {
            throw TrustError(
                .expired, "the key list (version \(list.version)) expired at \(PlistDates.formatISO8601(list.expiresAt)); the root must authorize a new one (folio keys authorize)")
        }
        if let minimum = minimumKeyListVersion, list.version < minimum {
            throw TrustError(
                .rollback, "the key list is version \(list.version), older than version \(minimum) already verified here (a replayed key list)")
        }
        let message = SigningContext.manifest + signed.manifestBytes
        var valid = Set<String>()
        var bad: [String] = []
        var revoked: [String] = []
        var unknown: [String] = []
        for s in signed.signatures {
            if let key = list.key(s.keyID) {
                if key.verifies(s.bytes, of: message) { valid.insert(s.keyID) } else { bad.append(s.keyID) }
            } else if list.revoked.contains(s.keyID) {
                revoked.append(s.keyID)
            } else {
                unknown.append(s.keyID)
            }
        }
        if valid.count < list.threshold {
            let have = "\(valid.count) valid signature\(valid.count == 1 ? "" : "s"), key list version \(list.version) requires \(list.threshold)"
            if !bad.isEmpty {
                throw TrustError(
                    .badSignature,
                    "the signature by key \(bad.joined(separator: ", ")) does not verify over the manifest's bytes: the manifest was altered, or the signature was made over other bytes (\(have))")
            }
            if !revoked.isEmpty {
                throw TrustError(.revokedSigner, "the manifest is signed by key \(revoked.joined(separator: ", ")), which key list version \(list.version) revokes (\(have))")
            }
            if !unknown.isEmpty {
                throw TrustError(.unknownSigner, "the manifest is signed by key \(unknown.joined(separator: ", ")), which key list version \(list.version) does not authorize (\(have))")
            }
            throw TrustError(.tooFewSignatures, "the manifest has too few signatures: \(have)")
        }
        guard let expiresAt = signed.manifest.expiresAt else {
            throw TrustError(.expired, "the signed manifest (version \(signed.manifest.version)) has no expiresAt")
        }
        if now.timeIntervalSince(expiresAt) > skew {
            throw TrustError(
                .expired,
                "version \(signed.manifest.version) expired at \(PlistDates.formatISO8601(expiresAt)); the publisher has not signed a newer one (a frozen or stale edge?)")
        }
        var verified = signed
        verified.verifiedSigners = valid.sorted()
        return verified
    }
}

/// Why a manifest was refused by a ``Trust``.
package struct TrustError: Error, CustomStringConvertible, Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        /// Not signed at all.
        case unsigned
        /// A signature does not verify over the bytes (tampered, or signed over other bytes).
        case badSignature
        /// Signed by a key the key list does not name.
        case unknownSigner
        /// Signed by a key the key list revokes.
        case revokedSigner
        /// Fewer valid signatures than the key list's threshold.
        case tooFewSignatures
        /// The manifest or key list is past its expiry.
        case expired
        /// The key list is not signed by a trusted root.
        case untrustedKeyList
        /// Older than what was already verified.
        case rollback
    }

    package var kind: Kind
    package var description: String

    package init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

extension Manifest {
    /// What `manifest.json` shows for served manifest bytes: the manifest and, when signed, a
    /// `signing` summary (key IDs that signed, the key list's version, root, threshold, expiry).
    package static func jsonMirror(_ bytes: [UInt8]) throws(ManifestError) -> PlistValue {
        jsonMirror(try Manifest(bytes: bytes), signed: try? SignedManifest.decode(bytes))
    }

    /// The JSON mirror of served manifest `bytes` already parsed as `manifest`: only one with an
    /// expiry is signed, so no other is decoded again.
    package static func jsonMirror(_ bytes: [UInt8], parsed manifest: Manifest) -> PlistValue {
        jsonMirror(manifest, signed: manifest.expiresAt == nil ? nil : try? SignedManifest.decode(bytes))
    }

    /// The JSON mirror of `manifest`, published as `signed` when it is signed.
    package static func jsonMirror(_ manifest: Manifest, signed: SignedManifest?) -> PlistValue {
        jsonMirror(manifest.plist, signed: signed)
    }

    /// The JSON mirror of a manifest's property list (``Manifest/plist``), published as `signed` when it is signed.
    package static func jsonMirror(_ plist: PlistValue, signed: SignedManifest?) -> PlistValue {
        guard case .dict(var d) = plist else { return plist }
        if let signed { d["signing"] = signed.summary }
        return .dict(d)
    }
}

extension SignedManifest {
    /// Who signed, under which key list (for people: nothing here is verified).
    package var summary: PlistValue {
        let list = keyList.keyList
        return .dict([
            "signedBy": .array(signatures.map { .string($0.keyID) }),
            "keyList": .dict([
                "version": .int(Int64(list.version)), "root": .string(list.root.keyID), "threshold": .int(Int64(list.threshold)),
                "keys": .array(list.keys.map { .string($0.keyID) }), "expiresAt": .date(list.expiresAt),
            ]),
        ])
    }
}
