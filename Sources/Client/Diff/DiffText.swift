import FolioPlist

/// `folio diff --format text`: a summary line, then one line per change, each naming its entry
/// (`~ sonnets/018.plist lines[3]: "…" → "…"`); an added or removed entry is one line with its
/// first values indented below it.
extension ContentDiff {
    func text() -> String {
        var out = "folio diff: \(header): " + (isEmpty && manifest.isEmpty && signing.isEmpty ? "no differences" : summary) + "\n"
        for f in manifest { out += "! \(f.words)\n" }
        for s in signing { out += "! signing: \(s)\n" }
        for r in releases { out += "r release \(r.id): \(r.old?.summary ?? "none") → \(r.new?.summary ?? "none")\n" }
        for p in added { out += Self.previewText("+", p) }
        for p in removed { out += Self.previewText("-", p) }
        for c in changed { out += Self.changedText(c) }
        return out
    }

    static func changedText(_ c: EntryChange) -> String {
        let entry = c.path + (c.isAsset ? " (asset, \(c.contentType))" : "")
        var out = ""
        for ch in c.metadata { out += line(ch, in: entry, metadata: true) + "\n" }
        for ch in c.changes { out += line(ch, in: entry) + "\n" }
        if c.truncated { out += "    … more changes in \(c.path) not shown (the first \(EntryChange.maxChanges) are)\n" }
        if c.approximate { out += "    (a long array in \(c.path) was aligned approximately)\n" }
        return out
    }

    static func previewText(_ sign: String, _ p: EntryPreview) -> String {
        var out = "\(sign) \(p.entry.path) (\(p.entry.kind ?? "entry"), \(p.entry.contentType), \(p.entry.size) bytes)\n"
        for leaf in p.leaves { out += "    \(sign) \(leaf.path): \(ValueText.short(leaf.value))\n" }
        if p.more > 0 { out += "    … \(p.more) more\n" }
        if let note = p.note { out += "    (\(note))\n" }
        return out
    }

    /// One change: `~ app/home.plist title: "a" → "b"`, `- app/settings.plist locales[1]: "cy"`,
    /// `> app/settings.plist menu[id=7]: moved from index 3 to 0`.
    static func line(_ ch: PlistChange, in entry: String, metadata: Bool = false) -> String {
        let at = entry + " " + (metadata ? "(\(ch.pathText))" : ch.pathText)
        switch ch.op {
        case .change:
            let (old, new) = ValueText.change(ch.old, ch.new)
            return "~ \(at): \(old) → \(new)"
        case .add: return "+ \(at): \(ValueText.short(ch.new))"
        case .remove: return "- \(at): \(ValueText.short(ch.old))"
        case .move: return "> \(at): moved from index \(ch.from ?? 0) to \(ch.to ?? 0)"
        }
    }
}
