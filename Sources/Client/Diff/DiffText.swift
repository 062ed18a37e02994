import FolioPlist

/// `folio diff --format text`: a summary line, then one line per change.
extension ContentDiff {
    func text() -> String {
        var out = "folio diff: \(header): " + (isEmpty && manifest.isEmpty && signing.isEmpty ? "no differences" : summary) + "\n"
        for f in manifest { out += "! \(f.words)\n" }
        for s in signing { out += "! signing: \(s)\n" }
        for r in releases { out += "r release \(r.id): \(r.old?.summary ?? "none") → \(r.new?.summary ?? "none")\n" }
        for p in added { out += Self.previewText("+", p) }
        for p in removed { out += Self.previewText("-", p) }
        for c in changed {
            out += "~ \(c.path)" + (c.isAsset ? " (asset, \(c.contentType))" : "") + "\n"
            for ch in c.metadata { out += "    " + Self.line(ch, metadata: true) + "\n" }
            for ch in c.changes { out += "    " + Self.line(ch) + "\n" }
            if c.truncated { out += "    … more changes not shown (the first \(EntryChange.maxChanges) are)\n" }
            if c.approximate { out += "    (a long array was aligned approximately)\n" }
        }
        return out
    }

    static func previewText(_ sign: String, _ p: EntryPreview) -> String {
        var out = "\(sign) \(p.entry.path) (\(p.entry.kind ?? "entry"), \(p.entry.contentType), \(p.entry.size) bytes)\n"
        for leaf in p.leaves { out += "    \(sign) \(leaf.path): \(ValueText.short(leaf.value))\n" }
        if p.more > 0 { out += "    … \(p.more) more\n" }
        if let note = p.note { out += "    (\(note))\n" }
        return out
    }

    /// One change: `~ title: "a" → "b"`, `- locales[1]: "cy"`, `> items[id=7]: moved from 3 to 0`.
    static func line(_ ch: PlistChange, metadata: Bool = false) -> String {
        let at = metadata ? "(\(ch.pathText))" : ch.pathText
        switch ch.op {
        case .change: return "~ \(at): \(ValueText.short(ch.old)) → \(ValueText.short(ch.new))"
        case .add: return "+ \(at): \(ValueText.short(ch.new))"
        case .remove: return "- \(at): \(ValueText.short(ch.old))"
        case .move: return "> \(at): moved from index \(ch.from ?? 0) to \(ch.to ?? 0)"
        }
    }
}
