import FolioPlist
import FolioSupport

/// One delta applied to a held version: the manifest it rebuilds and the objects its edits
/// rebuild, each checked. Shared by a client's sync and an edge taking a push deploy, so both
/// read a delta the same way.
package struct DeltaStep: Sendable {
    /// The target `manifest.plist`, byte for byte, and the manifest it holds.
    package var manifestBytes: [UInt8]
    package var manifest: Manifest
    /// The value `manifestBytes` encode (the next step's `sourceValue`: one that was not would
    /// make that step's digest check fail).
    package var value: PlistValue
    /// Objects rebuilt by the edits and checked against the target's entries, by SHA-256.
    package var objects: [String: [UInt8]]
    /// Edits whose source object was held but whose result the target does not name.
    package var failedEdits: Int

    /// Applies `bundle` to the manifest file `sourceBytes` (holding `source`); the result must
    /// hash to `targetSHA256`. An object edit applies to the source's entry at its path, whose
    /// bytes come from `rebuilt` (an earlier step's) or `object` (nil: not held, no edit tried).
    /// `source` names the objects held (an install's may have a release's entries in place of
    /// the defaults); `plain`, when given, is the manifest `sourceBytes` decode to, whose entries
    /// the target keeps where the edit copies them; `sourceValue`, when given, is what
    /// `sourceBytes` decode to (both kept from an earlier step, or an edge's served manifest).
    package static func apply(
        _ bundle: DeltaBundle, to sourceBytes: [UInt8], source: Manifest, plain: Manifest? = nil, sourceValue: PlistValue? = nil,
        targetSHA256: String, rebuilt: [String: [UInt8]] = [:], object: (Manifest.Entry) -> [UInt8]?
    ) throws(DeltaError) -> DeltaStep {
        let (value, decoded) = try DeltaBundle.patched(bundle.manifest, to: sourceBytes, decoded: sourceValue)
        let target: Manifest
        // The manifest of the value, the entries the edit copies taken from the plain source's.
        do {
            let patched = try plain.flatMap { plain throws(ManifestError) in
                try Manifest(patched: value, from: plain, sourceValue: decoded, edit: bundle.manifest)
            }
            target = try patched ?? Manifest(decoded: value)
        } catch { throw DeltaError("the delta rebuilds an unusable manifest: \(error)") }
        let bytes = try encoded(value, target, sha256: targetSHA256)
        var step = DeltaStep(manifestBytes: bytes, manifest: target, value: value, objects: [:], failedEdits: 0)
        for (path, edit) in bundle.objects {
            // The edit leads to the entry at its path of the defaults or of a release.
            guard let old = source.entry(path) else { continue }
            let targets = target.entries(at: path).filter { $0.sha256 != old.sha256 && step.objects[$0.sha256] == nil }
            guard !targets.isEmpty, let held = rebuilt[old.sha256] ?? object(old) else { continue }
            if let result = try? DeltaBundle.apply(edit, to: held), let new = targets.first(where: { $0.matches(result) }) {
                step.objects[new.sha256] = result
            } else {
                step.failedEdits += 1
            }
        }
        return step
    }

    /// The target's bytes: written from the manifest's fields (``Manifest/binaryPlist``, the
    /// same bytes as the value's encoding for a plain manifest they hold whole, without the
    /// value's dictionaries' keys sorted again) when those hash to the target's digest, else
    /// the value encoded; an error when neither does.
    private static func encoded(_ value: PlistValue, _ manifest: Manifest, sha256: String) throws(DeltaError) -> [UInt8] {
        if manifest.expiresAt == nil {
            let written = manifest.binaryPlist
            if ContentHash.sha256Hex(written) == sha256 { return written }
        }
        let bytes = BinaryPlist.encode(value)
        guard ContentHash.sha256Hex(bytes) == sha256 else { throw DeltaError("the delta does not rebuild the manifest it names") }
        return bytes
    }
}
