import FolioPlist

extension Manifest {
    /// The manifest of `value`, which the ``PlistPatch`` `edit` made of `sourceValue`, the plist
    /// of `source`: the entries the edit copies are `source`'s own, and only those it inserts or
    /// edits are read, so it is `Manifest(decoded: value)` at the cost of the change (a delta's
    /// manifest at 10,000 entries was read whole in about 8 ms). Nil when the edit is not one it
    /// follows: a signed manifest, the entries or the manifest replaced whole, or a source whose
    /// entries are not in its plist's order. The caller then reads `value` whole.
    package init?(patched value: PlistValue, from source: Manifest, sourceValue: PlistValue, edit: PlistValue) throws(ManifestError) {
        guard case .dict(let root) = value, case .array(let list)? = root["entries"],
            case .dict(let sourceRoot) = sourceValue, case .array(let sourceList)? = sourceRoot["entries"],
            Manifest.inPlistOrder(source.entries, sourceList), case .dict(let forms) = edit,
            Set(forms.keys).isSubset(of: ["d", "x"]), forms["x"]?.arrayValue?.contains(.string("entries")) != true
        else { return nil }
        let entriesEdit = forms["d"]?.dictValue?["entries"]
        guard let entries = try Manifest.entries(list, copying: source.entries, by: entriesEdit) else { return nil }
        try self.init(plist: value, entries: entries)
    }

    /// Whether `entries` are the entries of `list`, in its order (a builder writes them sorted).
    private static func inPlistOrder(_ entries: [Entry], _ list: [PlistValue]) -> Bool {
        guard entries.count == list.count else { return false }
        return zip(entries, list).allSatisfy { entry, item in item.dictValue?["path"]?.stringValue == entry.path }
    }

    /// The entries of the new `list`: those the array edit `edit` copies taken from `source`,
    /// those it inserts or edits read from `list`; all of `source` when `edit` is nil. Nil when
    /// `edit` is not an array edit, or does not lead to `list`.
    private static func entries(_ list: [PlistValue], copying source: [Entry], by edit: PlistValue?) throws(ManifestError) -> [Entry]? {
        guard let edit else { return list.count == source.count ? source : nil }
        guard case .dict(let form) = edit, form.count == 1, case .array(let ops)? = form["a"] else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(list.count)
        var i = 0  // in source
        func read() throws(ManifestError) -> Bool {
            let t = entries.count
            guard t < list.count else { return false }
            entries.append(try Entry(plist: list[t], at: "manifest.entries[\(t)]"))
            return true
        }
        for op in ops {
            switch op {
            case .int(let n) where n > 0:
                guard n <= Int64(source.count - i) else { return nil }
                entries += source[i..<(i + Int(n))]
                i += Int(n)
            case .int(let n) where n < 0:
                guard -n <= Int64(source.count - i) else { return nil }
                i -= Int(n)
            case .array(let inserted):
                for _ in inserted { guard try read() else { return nil } }
            case .dict:
                guard i < source.count, try read() else { return nil }
                i += 1
            default:
                return nil
            }
        }
        entries += source[i...]
        return entries.count == list.count ? entries : nil
    }
}
