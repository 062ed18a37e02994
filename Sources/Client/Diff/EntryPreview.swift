import FolioPlist
import FolioPlistXML
import FolioPublished

/// An added or removed entry with its content: the first key paths and values of a property
/// list, within ``maxLeaves`` and ``maxCharacters``; "… N more" counts the rest.
struct EntryPreview {
    struct Leaf {
        var path: String
        var value: PlistValue
    }

    var entry: Manifest.Entry
    var leaves: [Leaf] = []
    var more = 0
    /// Why the content is not shown, when it is not.
    var note: String?

    static let maxLeaves = 20
    static let maxCharacters = 2048

    static func make(_ e: Manifest.Entry, _ side: DiffSide) async -> EntryPreview {
        var p = EntryPreview(entry: e)
        guard e.isPlist else { return p }
        guard let bytes = try? await side.load(e) else {
            p.note = "content not available"
            return p
        }
        guard let value = try? PlistValue.decodeAnyFormat(bytes) else {
            p.note = "not a readable property list"
            return p
        }
        var first: [Leaf] = []
        var total = 0
        flatten(value, [], into: &first, total: &total)
        var used = 0
        for leaf in first {
            used += leaf.path.count + ValueText.short(leaf.value).count
            guard used <= maxCharacters else { break }
            p.leaves.append(leaf)
        }
        p.more = total - p.leaves.count
        return p
    }

    /// The first ``maxLeaves`` scalars (and empty containers) with their paths; `total` counts
    /// them all.
    static func flatten(_ v: PlistValue, _ path: [PlistPathComponent], into out: inout [Leaf], total: inout Int) {
        switch v {
        case .dict(let d) where !d.isEmpty:
            for key in d.keys.sorted() { flatten(d[key]!, path + [.key(key)], into: &out, total: &total) }
        case .array(let a) where !a.isEmpty, .set(let a) where !a.isEmpty:
            for (i, item) in a.enumerated() { flatten(item, path + [.index(i)], into: &out, total: &total) }
        default:
            total += 1
            if out.count < maxLeaves { out.append(Leaf(path: PlistPathComponent.text(path), value: v)) }
        }
    }
}
