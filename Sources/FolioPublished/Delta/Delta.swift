import FolioPlist
import FolioSupport
import Foundation

/// One delta: everything a client at one version needs to reach another, except the objects
/// it carries no edit for (new paths, and edits that would not be smaller than the object).
///
/// Published at `deltas/<from>-<to>.plist` (the SHA-256s of the two `manifest.plist` files),
/// immutable like an object. It holds an edit of the manifest file's plist (``PlistPatch``) and,
/// by logical path, an edit of each changed object of the source version. Every result is
/// re-encoded by the binary writer and must hash to what the target manifest says.
package struct DeltaBundle: Sendable, Equatable {
    /// The layout of a delta this code reads and writes.
    package static let format = 1

    /// The edit of `manifest.plist`'s value.
    package var manifest: PlistValue
    /// Edits of objects, by logical path: the source version's object at that path to the target's.
    package var objects: [String: PlistValue]

    package init(manifest: PlistValue, objects: [String: PlistValue]) {
        self.manifest = manifest
        self.objects = objects
    }

    package var plist: PlistValue {
        .dict(["format": .int(Int64(Self.format)), "manifest": manifest, "objects": .dict(objects)])
    }

    /// The delta's bytes as published.
    package var bytes: [UInt8] { BinaryPlist.encode(plist) }

    /// Reads a delta, checking its layout (the edits are checked when applied).
    package init(bytes: [UInt8]) throws(DeltaError) {
        let value: PlistValue
        do { value = try BinaryPlist.decode(bytes) } catch { throw DeltaError("the delta is not a binary plist: \(error)") }
        guard value["format"]?.intValue == Self.format else { throw DeltaError("the delta is not format \(Self.format)") }
        guard let manifest = value["manifest"], case .dict(let objects)? = value["objects"] else {
            throw DeltaError("the delta has no manifest edit or objects dictionary")
        }
        self.init(manifest: manifest, objects: objects)
    }

    /// The binary plist `bytes` with `edit` applied, re-encoded.
    package static func apply(_ edit: PlistValue, to bytes: [UInt8]) throws(DeltaError) -> [UInt8] {
        BinaryPlist.encode(try patched(edit, to: bytes).value)
    }

    /// `edit` applied to the binary plist `bytes` (which decode to `decoded`, when given): the
    /// result, and the value `bytes` decode to.
    package static func patched(
        _ edit: PlistValue, to bytes: [UInt8], decoded: PlistValue? = nil
    ) throws(DeltaError) -> (value: PlistValue, source: PlistValue) {
        let source: PlistValue
        do { source = try decoded ?? BinaryPlist.decode(bytes) } catch { throw DeltaError("the source is not a binary plist: \(error)") }
        do { return (try PlistPatch.apply(edit, to: source), source) } catch { throw DeltaError("\(error)") }
    }

    /// The edit from the binary plist `source` to `target` when applying it gives exactly
    /// `target` again; nil when they are equal or the writer would not reproduce `target`.
    package static func edit(from source: [UInt8], to target: [UInt8]) -> PlistValue? {
        guard source != target, let a = try? BinaryPlist.decode(source), let b = try? BinaryPlist.decode(target) else { return nil }
        return edit(from: a, to: b, targetBytes: target)
    }

    /// The edit from `source` to `target` (decoded from `targetBytes`) when applying it to
    /// `source` and encoding gives exactly `targetBytes`.
    package static func edit(from source: PlistValue, to target: PlistValue, targetBytes: [UInt8]) -> PlistValue? {
        guard let edit = PlistPatch.diff(source, target), let rebuilt = try? PlistPatch.apply(edit, to: source),
            BinaryPlist.encode(rebuilt) == targetBytes
        else { return nil }
        return edit
    }
}

/// `head.plist`: the current version in about 200 bytes, and which deltas lead to it, so a
/// synced client learns what changed without fetching the manifest. (A client of another
/// publish history finds no delta named after its manifest and fetches the manifest.)
///
/// Mutable like `manifest.plist`, and written just before it: it never names a version whose
/// objects and deltas are not on disk.
package struct DeltaHead: Sendable, Equatable {
    package var version: Int
    /// The SHA-256 (hex) of the version's `manifest.plist` file.
    package var sha256: String
    package var size: Int
    /// The size of `manifest.plist.gz`, for the bytes a delta saves.
    package var gzipSize: Int?
    /// How many versions back deltas are written from (`--delta-history`).
    package var deltaHistory: Int
    /// The versions with a delta into this one.
    package var deltasFrom: [Int]
    /// The oldest of those and its manifest's SHA-256: a client too far behind for a direct
    /// delta reaches the current version through it, in two deltas.
    package var waypoint: (version: Int, sha256: String)?

    package init(
        version: Int, sha256: String, size: Int, gzipSize: Int?, deltaHistory: Int, deltasFrom: [Int],
        waypoint: (version: Int, sha256: String)?
    ) {
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.gzipSize = gzipSize
        self.deltaHistory = deltaHistory
        self.deltasFrom = deltasFrom.sorted()
        self.waypoint = waypoint
    }

    package static func == (a: DeltaHead, b: DeltaHead) -> Bool {
        a.plist == b.plist
    }

    package var plist: PlistValue {
        var d: [String: PlistValue] = [
            "version": .int(Int64(version)), "sha256": .data(Data(ContentHash.bytes(hex: sha256) ?? [])), "size": .int(Int64(size)),
            "deltaHistory": .int(Int64(deltaHistory)), "deltasFrom": .array(deltasFrom.map { .int(Int64($0)) }),
        ]
        if let gzipSize { d["gzipSize"] = .int(Int64(gzipSize)) }
        if let waypoint { d["waypoint"] = .array([.int(Int64(waypoint.version)), .data(Data(ContentHash.bytes(hex: waypoint.sha256) ?? []))]) }
        return .dict(d)
    }

    package var bytes: [UInt8] { BinaryPlist.encode(plist) }

    package init(bytes: [UInt8]) throws(DeltaError) {
        let value: PlistValue
        do { value = try PlistValue.decode(bytes) } catch { throw DeltaError("head.plist is not a property list: \(error)") }
        func sha(_ v: PlistValue?) -> String? {
            guard let d = v?.dataValue, d.count == 32 else { return nil }
            return ContentHash.hex(d)
        }
        guard let version = value["version"]?.intValue, version >= 1, let sha256 = sha(value["sha256"]),
            let size = value["size"]?.intValue, size >= 0
        else { throw DeltaError("head.plist lacks a version, sha256 or size") }
        let from = value["deltasFrom"]?.arrayValue?.compactMap(\.intValue) ?? []
        var waypoint: (Int, String)?
        if let w = value["waypoint"]?.arrayValue, w.count == 2, let v = w[0].intValue, let s = sha(w[1]) { waypoint = (v, s) }
        self.init(
            version: version, sha256: sha256, size: size, gzipSize: value["gzipSize"]?.intValue,
            deltaHistory: max(0, value["deltaHistory"]?.intValue ?? 0),
            deltasFrom: from, waypoint: waypoint)
    }
}

/// A delta or head that cannot be read or applied.
package struct DeltaError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}
