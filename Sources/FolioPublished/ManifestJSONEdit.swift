import FolioPlist

/// A manifest's JSON mirror made from the mirror of a version it shares most entries with: the
/// entries written the same at the start and the end of both lists are copied from the old
/// mirror's text, the others written, and the rest of the document (a few keys) written anew.
/// It gives the bytes ``Manifest/jsonMirror(_:signed:)`` encoded by ``JSONPlist`` gives (tests
/// compare both on generated manifests and edits); at 10,000 entries a few milliseconds instead
/// of about twenty.
package enum ManifestJSONEdit {
    /// The mirror of `manifest` (published as `signed`) made from `old`, the mirror of
    /// `oldManifest`; nil when `old` is not laid out as that mirror (the caller encodes it whole).
    package static func mirror(of manifest: Manifest, signed: SignedManifest?, from old: [UInt8], of oldManifest: Manifest) -> [UInt8]? {
        var shell = manifest
        shell.entries = []
        guard let top = try? JSONPlist.encode(Manifest.jsonMirror(shell, signed: signed)),
            let slot = range(of: entriesKey + Array("[]".utf8), in: top),
            let elements = elements(old, count: oldManifest.entries.count)
        else { return nil }
        let (a, b) = (oldManifest.entries, manifest.entries)
        let shorter = min(a.count, b.count)
        var start = 0
        while start < shorter, a[start] == b[start] { start += 1 }
        var end = 0
        while end < shorter - start, a[a.count - 1 - end] == b[b.count - 1 - end] { end += 1 }
        var out = Array(top[..<(slot.upperBound - 1)])  // through "["
        out.reserveCapacity(old.count + 4096)
        for i in 0..<b.count {
            out.append(contentsOf: i == 0 ? firstElementStart : elementStart)
            if i < start {
                out.append(contentsOf: old[elements[i]])
            } else if i >= b.count - end {
                out.append(contentsOf: old[elements[a.count - (b.count - i)]])
            } else {
                guard let text = try? JSONPlist.encode(b[i].plist, indent: 2) else { return nil }
                out.append(contentsOf: text)
            }
        }
        if !b.isEmpty { out.append(contentsOf: Array("\n  ".utf8)) }
        out.append(contentsOf: top[(slot.upperBound - 1)...])  // "]" and what follows
        return out
    }

    /// `"entries": ` as the top level of a pretty mirror writes it (one level in).
    private static let entriesKey = Array("\n  \"entries\": ".utf8)
    /// What comes before each element of the entries array (the first: without the comma).
    private static let elementStart = Array(",\n    ".utf8)
    private static let firstElementStart = Array("\n    ".utf8)

    /// The byte ranges of the `count` elements of the mirror's entries array, each from its `{`
    /// to its `}`; nil when the array is not there or does not hold `count` objects.
    private static func elements(_ json: [UInt8], count: Int) -> [Range<Int>]? {
        guard let key = range(of: entriesKey + [UInt8(ascii: "[")], in: json) else { return nil }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(count)
        let open = Array("\n    {".utf8), close = Array("\n    }".utf8)
        var at = key.upperBound
        while ranges.count < count {
            guard json[at...].starts(with: ranges.isEmpty ? open : [UInt8(ascii: ",")] + open) else { return nil }
            let begin = at + (ranges.isEmpty ? 0 : 1) + open.count - 1
            guard let end = range(of: close, in: json, from: begin) else { return nil }
            ranges.append(begin..<end.upperBound)
            at = end.upperBound
        }
        let tail = count == 0 ? Array("]".utf8) : Array("\n  ]".utf8)
        return json[at...].starts(with: tail) ? ranges : nil
    }

    /// The first occurrence of `needle` in `bytes` at or after `from`.
    private static func range(of needle: [UInt8], in bytes: [UInt8], from: Int = 0) -> Range<Int>? {
        guard let first = needle.first, needle.count <= bytes.count - from else { return nil }
        return bytes.withUnsafeBufferPointer { hay -> Range<Int>? in
            var i = from
            let last = bytes.count - needle.count
            while i <= last {
                guard let found = hay[i...last].firstIndex(of: first) else { return nil }
                if hay[found..<found + needle.count].elementsEqual(needle) { return found..<found + needle.count }
                i = found + 1
            }
            return nil
        }
    }
}
