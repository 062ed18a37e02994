import FolioPlist

extension Manifest {
    /// The manifest as a binary property list: the bytes `BinaryPlist.encode(plist)` gives,
    /// written from the entries' fields without a ``PlistValue`` tree of them (20,000 entries'
    /// dictionaries built, their keys sorted, then torn down). Tests compare both encodings on
    /// generated manifests.
    package var binaryPlist: [UInt8] {
        var shell = self
        shell.entries = []
        guard case .dict(var root) = shell.plist else { preconditionFailure("a manifest's plist is a dictionary") }
        root["entries"] = nil
        let keys = (Array(root.keys) + ["entries"]).sorted()
        var b = BinaryPlist.Builder()
        b.reserve(bytes: 64 + entries.count * 140, objects: 32 + entries.count * 5)
        let (_, slots) = b.dictionary(count: keys.count)
        for (i, key) in keys.enumerated() {
            let ref = b.string(key)
            b.setKey(slots, i, ref)
        }
        for (i, key) in keys.enumerated() {
            let ref = key == "entries" ? Self.encodeEntries(entries, into: &b) : b.value(root[key]!)
            b.setValue(slots, i, ref)
        }
        return b.finish()
    }

    /// An entry's keys in the order the writer sorts them (``Entry/plist``'s keys).
    package static let entryKeys = ["brSize", "cache", "contentType", "gzipSize", "kind", "locale", "minimumAppVersion", "path", "sha256", "size"]

    private static func encodeEntries(_ entries: [Entry], into b: inout BinaryPlist.Builder) -> Int {
        let (index, slots) = b.array(count: entries.count)
        // A key is one object: interned once, its index kept.
        var keyRefs = [Int](repeating: -1, count: entryKeys.count)
        for (i, e) in entries.enumerated() {
            // contentType, path, sha256 and size are always there.
            var mask = 1 << 2 | 1 << 7 | 1 << 8 | 1 << 9
            if e.brSize != nil { mask |= 1 << 0 }
            if e.cache != nil { mask |= 1 << 1 }
            if e.gzipSize != nil { mask |= 1 << 3 }
            if e.kind != nil { mask |= 1 << 4 }
            if e.locale != nil { mask |= 1 << 5 }
            if e.minimumAppVersion != nil { mask |= 1 << 6 }
            let (ref, entrySlots) = b.dictionary(count: mask.nonzeroBitCount)
            var j = 0
            for bit in 0..<entryKeys.count where mask & (1 << bit) != 0 {
                if keyRefs[bit] < 0 { keyRefs[bit] = b.string(entryKeys[bit]) }
                b.setKey(entrySlots, j, keyRefs[bit])
                j += 1
            }
            j = 0
            for bit in 0..<entryKeys.count where mask & (1 << bit) != 0 {
                let value: Int
                switch bit {
                case 0: value = b.int(Int64(e.brSize!))
                case 1: value = b.value(e.cache!.plist)
                case 2: value = b.string(e.contentType)
                case 3: value = b.int(Int64(e.gzipSize!))
                case 4: value = b.string(e.kind!)
                case 5: value = b.string(e.locale!)
                case 6: value = b.string(e.minimumAppVersion!)
                case 7: value = b.string(e.path)
                case 8: value = b.string(e.sha256)
                default: value = b.int(Int64(e.size))
                }
                b.setValue(entrySlots, j, value)
                j += 1
            }
            b.setElement(slots, i, ref)
        }
        return index
    }
}
