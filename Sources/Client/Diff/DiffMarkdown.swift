import FolioPlist

/// `folio diff --format markdown`: for a pull request comment, capped at ``markdownLimit``.
extension ContentDiff {
    static let markdownLimit = 60_000

    func markdown() -> String {
        var head = "### Folio content diff\n\n**" + (isEmpty && manifest.isEmpty && signing.isEmpty ? "No differences." : summary) + "**\n\n"
        head += "`\(from.label)` → `\(to.label)`\n\n"
        head += manifestTable()
        return Self.capped(head, blocks: releaseBlock() + previewBlocks() + changed.map(Self.changedBlock))
    }

    func manifestTable() -> String {
        guard !manifest.isEmpty || !signing.isEmpty else { return "" }
        var t = "| manifest | before | after |\n|---|---|---|\n"
        for f in manifest {
            let cache = f.field.hasPrefix("cacheHints.")
            let (x, y) = cache ? (FieldChange.cacheControl(f.old), FieldChange.cacheControl(f.new)) : (ValueText.short(f.old), ValueText.short(f.new))
            t += "| \(f.label)\(f.significant ? "" : " (informational)") | \(Self.cell(x)) | \(Self.cell(y)) |\n"
        }
        for s in signing { t += "| signing | | \(Self.cell(s)) |\n" }
        return t + "\n"
    }

    func releaseBlock() -> [String] {
        guard !releases.isEmpty else { return [] }
        return ["**Releases:**\n\n| release | before | after |\n|---|---|---|\n"
            + releases.map { "| \($0.id) | \(Self.cell($0.old?.summary ?? "none")) | \(Self.cell($0.new?.summary ?? "none")) |\n" }.joined() + "\n"]
    }

    func previewBlocks() -> [String] {
        added.map { Self.previewBlock("Added", $0) } + removed.map { Self.previewBlock("Removed", $0) }
    }

    static func previewBlock(_ what: String, _ p: EntryPreview) -> String {
        var b = "<details><summary>\(what) <code>\(p.entry.path)</code> (\(p.entry.kind ?? "entry"), \(p.entry.size) bytes)</summary>\n\n"
        if !p.leaves.isEmpty {
            b += "| key path | value |\n|---|---|\n"
            for leaf in p.leaves { b += "| `\(cell(leaf.path))` | \(cell(ValueText.short(leaf.value))) |\n" }
        }
        if p.more > 0 { b += "\n… \(p.more) more\n" }
        if let note = p.note { b += "\n(\(note))\n" }
        return b + "\n</details>\n\n"
    }

    static func changedBlock(_ c: EntryChange) -> String {
        let count = c.metadata.count + c.changes.count
        var b = "<details><summary><code>\(c.path)</code>" + (c.isAsset ? " (asset, \(c.contentType))" : "")
        b += ": \(count) change\(count == 1 ? "" : "s")</summary>\n\n| | key path | before | after |\n|---|---|---|---|\n"
        for ch in c.metadata { b += row(ch, metadata: true) }
        for ch in c.changes { b += row(ch) }
        if c.truncated { b += "\n…more changes not shown.\n" }
        if c.approximate { b += "\n(a long array was aligned approximately)\n" }
        return b + "\n</details>\n\n"
    }

    static func row(_ ch: PlistChange, metadata: Bool = false) -> String {
        let at = "`" + cell(metadata ? "(\(ch.pathText))" : ch.pathText) + "`"
        switch ch.op {
        case .change:
            let (old, new) = ValueText.change(ch.old, ch.new)
            return "| ~ | \(at) | \(cell(old)) | \(cell(new)) |\n"
        case .add: return "| + | \(at) | | \(cell(ValueText.short(ch.new))) |\n"
        case .remove: return "| - | \(at) | \(cell(ValueText.short(ch.old))) | |\n"
        case .move: return "| > | \(at) | index \(ch.from ?? 0) | index \(ch.to ?? 0) |\n"
        }
    }

    /// `head` and as many blocks as fit in ``markdownLimit``, with a note for the rest.
    static func capped(_ head: String, blocks: [String]) -> String {
        var out = head
        func note(_ remaining: Int) -> String {
            "\n> \(remaining) more section(s) not shown: output capped at \(markdownLimit) characters; run `folio diff` locally for the rest.\n"
        }
        let reserve = note(blocks.count).count  // the longest note there can be
        for (i, b) in blocks.enumerated() {
            let isLast = i == blocks.count - 1
            if out.count + b.count + (isLast ? 0 : reserve) > markdownLimit { return out + note(blocks.count - i) }
            out += b
        }
        return out
    }

    static func cell(_ s: String) -> String {
        s.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
