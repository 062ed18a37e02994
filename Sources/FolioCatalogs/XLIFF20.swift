import CLibXML2
import FolioLocalization
import FolioPlist
import Foundation

/// XLIFF 2.0: `<file>`, `<group>`, `<unit>`, `<segment>` and its inline codes.
extension XLIFFReader {
    /// Reads every 2.0 `<file>` into the section of `trgLang`.
    mutating func read20() {
        sourceLanguage = Self.nonEmpty(root, "srcLang")
        let locale = Self.nonEmpty(root, "trgLang")
        var units: [XLIFFRawUnit] = []
        var firstTarget: xmlNodePtr?
        for file in children(root) where Self.name(file) == "file" {
            group(
                file, version20: true, translate: Self.attribute(file, "translate") ?? "yes", depth: 0, into: &units,
                firstTarget: &firstTarget)
        }
        if let locale {
            let i = sectionIndex(locale, at: position(ofAttribute: "trgLang", on: root))
            sections[i].units += units
        } else if let target = firstTarget {
            error(root, "<xliff> has no trgLang but the file has <target> elements (the first at line \(position(target).line)); add trgLang=\"…\" (a BCP 47 tag such as \"pt-BR\") to <xliff>")
        }
    }

    /// One 2.0 `<unit>` (segments and ignorables concatenated), or nil when skipped or broken.
    mutating func unit20(_ node: xmlNodePtr, translate: String, firstTarget: inout xmlNodePtr?) -> XLIFFRawUnit? {
        if translate == "no" { return nil }
        guard let id = Self.nonEmpty(node, "id") else {
            error(node, "<unit> without an id; add id=\"…\" (the message key) to it")
            return nil
        }
        originalData = [:]
        if let data = child(node, "originalData") {
            for d in children(data) where Self.name(d) == "data" {
                if let dataID = Self.attribute(d, "id") { originalData[dataID] = inline20(d, depth: 0) }
            }
        }
        var sourceText = ""
        var targetText = ""
        var translated = true
        var sawSegment = false
        var states: [String] = []
        var firstUnitTarget: xmlNodePtr?
        for part in children(node) {
            let kind = Self.name(part)
            guard kind == "segment" || kind == "ignorable" else { continue }
            let source = child(part, "source")
            let target = child(part, "target")
            if let target {
                if firstTarget == nil { firstTarget = target }
                if firstUnitTarget == nil { firstUnitTarget = target }
            }
            if target != nil, source == nil {
                error(part, "<\(kind)> in <unit id=\"\(id)\"> has a <target> but no <source>; add the source text as <source>…</source> before the <target>")
                return nil
            }
            let sourcePart = source.map { inline20($0, depth: 0) } ?? ""
            sourceText += sourcePart
            if kind == "segment" {
                sawSegment = true
                if let state = Self.attribute(part, "state") { states.append(state) }
                if let target {
                    let text = inline20(target, depth: 0)
                    if text.isEmpty, !sourcePart.isEmpty { translated = false }
                    targetText += text
                } else {
                    translated = false
                }
            } else {
                // An ignorable without a target stands for its source text.
                targetText += target.map { inline20($0, depth: 0) } ?? sourcePart
            }
        }
        guard let split = splitKey(id, unit: node) else { return nil }
        let value = sawSegment && translated && !targetText.isEmpty ? targetText : nil
        let at = position(firstUnitTarget ?? node)
        let unitAt = position(node)
        var notes: [xmlNodePtr] = []
        if let container = child(node, "notes") { notes = children(container).filter { Self.name($0) == "note" } }
        return XLIFFRawUnit(
            key: split.key, category: split.category, value: value, source: sawSegment ? sourceText : nil, notes: noteTexts(notes),
            state: Self.combinedState(states), line: at.line, column: at.column, unitLine: unitAt.line,
            unitColumn: unitAt.column)
    }

    /// The text equivalent of a 2.0 inline code: `equiv`, else `disp`, else its original data.
    func code20(_ node: xmlNodePtr, equiv: String, disp: String, dataRef: String) -> String? {
        if let v = Self.attribute(node, equiv) { return v }
        if let v = Self.attribute(node, disp) { return v }
        if let ref = Self.attribute(node, dataRef), let v = originalData[ref] { return v }
        return nil
    }

    /// The text of a 2.0 `<source>`/`<target>`: codes by their `equiv`/`disp`/original data, `<pc>` and
    /// `<mrk>` by their content, `<cp hex>` decoded.
    mutating func inline20(_ node: xmlNodePtr, depth: Int) -> String {
        inline(node, depth: depth, version20: true)
    }

    /// The text one inline element of a 2.0 `<source>`/`<target>` stands for.
    mutating func inline20Element(_ c: xmlNodePtr, depth: Int) -> String {
        var out = ""
        let name = Self.name(c)
        switch name {
        case "ph", "sc", "ec":
            if let text = code20(c, equiv: "equiv", disp: "disp", dataRef: "dataRef") {
                out += text
            } else if name == "ph" {
                warning(c, "<ph\(Self.attribute(c, "id").map { " id=\"\($0)\"" } ?? "")/> has no equiv, disp or original data, so it contributes no text; add equiv=\"…\" with the original placeholder (e.g. %@)")
            }
        case "pc":
            out += code20(c, equiv: "equivStart", disp: "dispStart", dataRef: "dataRefStart") ?? ""
            out += inline20(c, depth: depth + 1)
            out += code20(c, equiv: "equivEnd", disp: "dispEnd", dataRef: "dataRefEnd") ?? ""
        case "cp":
            let hex = Self.attribute(c, "hex") ?? ""
            if hex.count <= 6, let v = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(v) {
                out.unicodeScalars.append(scalar)
            } else {
                error(c, "<cp hex=\"\(hex)\"/> is not a Unicode code point; write it in hexadecimal, e.g. <cp hex=\"0007\"/>")
            }
        case "sm", "em":
            break
        default:  // mrk and anything unknown: its content
            out += inline20(c, depth: depth + 1)
        }
        return out
    }
}
