import CLibXML2
import FolioLocalization
import FolioPlist
import Foundation

/// XLIFF 1.2: `<file>`, `<group>`, `<trans-unit>` and its inline elements.
extension XLIFFReader {
    /// Reads every 1.2 `<file>`, adding its units to the section of its target-language.
    mutating func read12() {
        for file in children(root) where Self.name(file) == "file" {
            if sourceLanguage == nil { sourceLanguage = Self.nonEmpty(file, "source-language") }
            var units: [XLIFFRawUnit] = []
            var firstTarget: xmlNodePtr?
            let translate = Self.attribute(file, "translate") ?? "yes"
            for body in children(file) where Self.name(body) == "body" {
                group(body, version20: false, translate: translate, depth: 0, into: &units, firstTarget: &firstTarget)
            }
            if let locale = Self.nonEmpty(file, "target-language") {
                let i = sectionIndex(locale, at: position(ofAttribute: "target-language", on: file))
                sections[i].units += units
            } else if let target = firstTarget {
                error(file, "<file\(Self.attribute(file, "original").map { " original=\"\($0)\"" } ?? "")> has <target> elements (the first at line \(position(target).line)) but no target-language; add target-language=\"…\" (a BCP 47 tag such as \"es\" or \"pt-BR\") to the <file>")
            }
        }
    }

    /// Reads the units of a 1.2 `<body>` or 2.0 `<file>`, and of its `<group>`s at any depth
    /// (`<trans-unit>` in 1.2, `<unit>` in 2.0); `translate` is inherited.
    mutating func group(
        _ node: xmlNodePtr, version20: Bool, translate: String, depth: Int, into units: inout [XLIFFRawUnit],
        firstTarget: inout xmlNodePtr?
    ) {
        guard depth < Self.maxDepth else {
            error(node, "groups nest deeper than \(Self.maxDepth); flatten the <group>s")
            return
        }
        for child in children(node) {
            let inherited = Self.attribute(child, "translate") ?? translate
            switch (Self.name(child), version20) {
            case ("group", _):
                group(child, version20: version20, translate: inherited, depth: depth + 1, into: &units, firstTarget: &firstTarget)
            case ("trans-unit", false):
                if let unit = unit12(child, translate: inherited, firstTarget: &firstTarget) { units.append(unit) }
            case ("unit", true):
                if let unit = unit20(child, translate: inherited, firstTarget: &firstTarget) { units.append(unit) }
            default: break
            }
        }
    }

    /// One 1.2 `<trans-unit>`, or nil when it is skipped (translate="no") or broken (reported).
    mutating func unit12(_ node: xmlNodePtr, translate: String, firstTarget: inout xmlNodePtr?) -> XLIFFRawUnit? {
        if translate == "no" { return nil }
        guard let id = Self.nonEmpty(node, "id") else {
            error(node, "<trans-unit> without an id; add id=\"…\" (the message key) to it")
            return nil
        }
        let source = child(node, "source")
        let target = child(node, "target")
        if let target, firstTarget == nil { firstTarget = target }
        if target != nil, source == nil {
            error(node, "<trans-unit id=\"\(id)\"> has a <target> but no <source>; add the source text as <source>…</source> before the <target>")
            return nil
        }
        guard let split = splitKey(Self.nonEmpty(node, "resname") ?? id, unit: node) else { return nil }
        let state = target.flatMap { Self.attribute($0, "state") }
        var value: String?
        if let target, state != "new", state != "needs-translation" {
            let text = inline12(target, depth: 0)
            if !text.isEmpty { value = text }
        }
        let at = position(target ?? node)
        let unitAt = position(node)
        return XLIFFRawUnit(
            key: split.key, category: split.category, value: value, source: source.map { inline12($0, depth: 0) },
            notes: noteTexts(children(node).filter { Self.name($0) == "note" }), state: state,
            line: at.line, column: at.column, unitLine: unitAt.line, unitColumn: unitAt.column)
    }

    /// The text of an inline container: text and CDATA as written, each element by its
    /// version's rules (`inline12Element`, `inline20Element`), nested at most `maxDepth` deep.
    mutating func inline(_ node: xmlNodePtr, depth: Int, version20: Bool) -> String {
        guard depth < Self.maxDepth else {
            error(node, "inline elements nest deeper than \(Self.maxDepth)")
            return ""
        }
        var out = ""
        var child = node.pointee.children
        while let c = child {
            defer { child = c.pointee.next }
            switch c.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE: out += Self.content(c)
            case XML_ENTITY_REF_NODE:
                error(node, "the entity reference &\(Self.name(c)); is not supported; write the character out or use a character reference (&#NNNN;)")
            case XML_ELEMENT_NODE:
                out += version20 ? inline20Element(c, depth: depth) : inline12Element(c, depth: depth)
            default: break
            }
        }
        return out
    }

    /// The text of a 1.2 `<source>`/`<target>`: placeholders by their `equiv-text` (or native code),
    /// paired and marker elements by their content.
    mutating func inline12(_ node: xmlNodePtr, depth: Int) -> String {
        inline(node, depth: depth, version20: false)
    }

    /// The text one inline element of a 1.2 `<source>`/`<target>` stands for.
    mutating func inline12Element(_ c: xmlNodePtr, depth: Int) -> String {
        var out = ""
        let name = Self.name(c)
        switch name {
        case "x", "bx", "ex":
            if let equiv = Self.attribute(c, "equiv-text") {
                out += equiv
            } else {
                warning(c, "<\(name)\(Self.attribute(c, "id").map { " id=\"\($0)\"" } ?? "")/> has no equiv-text, so it contributes no text; add equiv-text=\"…\" with the original placeholder (e.g. %d)")
            }
        case "ph", "bpt", "ept", "it":
            out += Self.attribute(c, "equiv-text") ?? inline12(c, depth: depth + 1)
        default:  // g, mrk, sub and anything unknown: their content
            out += inline12(c, depth: depth + 1)
        }
        return out
    }
}
