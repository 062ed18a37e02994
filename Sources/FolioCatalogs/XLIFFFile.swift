// XLIFF 1.2 and 2.0 translation files (OASIS XML Localisation Interchange File Format), read through
// libxml2 the way `XMLPlist` does: no network, no DTD loading, no entity expansion, libxml2's own
// depth limit. A file yields one `CatalogLocaleSection` per target language; Xcode's
// `KEY|==|plural.CATEGORY` units are folded into one plural message.
import CLibXML2
import FolioLocalization
import FolioPlist
import FolioPlistXML
import Foundation

/// A reader for XLIFF 1.2 (`urn:oasis:names:tc:xliff:document:1.2`) and XLIFF 2.0/2.1
/// (`urn:oasis:names:tc:xliff:document:2.0`) files.
package enum XLIFFFile {
    /// The XLIFF 1.2 namespace.
    package static let namespace12 = "urn:oasis:names:tc:xliff:document:1.2"
    /// The XLIFF 2.x core namespace (2.1 keeps the 2.0 core namespace).
    package static let namespace20 = "urn:oasis:names:tc:xliff:document:2.0"
    /// The `version` values of the 2.x core namespace that are read.
    package static let versions20: Set<String> = ["2.0", "2.1"]
    /// The text shown when a file is not a supported XLIFF.
    static let supported = "Folio reads XLIFF 1.2 (xmlns=\"\(namespace12)\" version=\"1.2\") and XLIFF 2.0 (xmlns=\"\(namespace20)\" version=\"2.0\", 2.1 accepted)"
    /// The separator Xcode 15+ puts between a key and its variation path in unit ids.
    static let variationSeparator = "|==|"

    /// Initialises libxml2 once, before the first parse.
    private static let initialised: Bool = LibXML2Setup.initialised

    /// Parses an XLIFF document: its source language, one section per target language (same-locale
    /// `<file>`s merged in order), and every problem found, each at a 1-based line and column.
    package static func parse(_ bytes: [UInt8]) -> ParsedCatalogFile {
        _ = initialised
        let tags = XLIFFTagScanner(bytes)
        if let offset = tags.entityDeclaration {
            let (line, column) = tags.position(ofOffset: offset)
            return ParsedCatalogFile(errors: [CatalogDiagnostic(line: line, column: column, message: entityMessage)])
        }
        guard let ctxt = xmlNewParserCtxt() else {
            return ParsedCatalogFile(errors: [CatalogDiagnostic(line: 1, column: 1, message: "cannot create an XML parser (out of memory?)")])
        }
        defer { xmlFreeParserCtxt(ctxt) }
        // No XML_PARSE_NOENT (entities are never substituted), no DTDLOAD (no external DTD), NONET (no
        // network); no XML_PARSE_HUGE, so libxml2 keeps its depth (256) and entity amplification limits.
        let options = Int32(
            XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
                | XML_PARSE_BIG_LINES.rawValue)
        let doc: xmlDocPtr? = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { chars in
                xmlCtxtReadMemory(ctxt, chars.baseAddress, Int32(clamping: chars.count), nil, nil, options)
            }
        }
        guard let doc else {
            var line = 1, column = 1
            var detail = "malformed XML"
            if let err = xmlCtxtGetLastError(ctxt) {
                detail = err.pointee.message.map { String(cString: $0) }?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? detail
                if detail.hasPrefix("Excessive depth in document") { detail = "elements nest deeper than 256 levels" }
                line = max(1, Int(err.pointee.line))
                column = max(1, Int(err.pointee.int2))
            }
            return ParsedCatalogFile(errors: [CatalogDiagnostic(
                line: line, column: column,
                message: "not well-formed XML: \(detail); fix the markup here (every tag closed and properly nested, attribute values quoted, '&' written as &amp; and '<' as &lt;)")])
        }
        defer { xmlFreeDoc(doc) }
        if let subset = doc.pointee.intSubset {
            var node = subset.pointee.children
            while let n = node {
                if n.pointee.type == XML_ENTITY_DECL {
                    return ParsedCatalogFile(errors: [CatalogDiagnostic(
                        line: 1, column: 1, message: entityMessage)])
                }
                node = n.pointee.next
            }
        }
        guard let root = xmlDocGetRootElement(doc) else {
            return ParsedCatalogFile(errors: [CatalogDiagnostic(
                line: 1, column: 1, message: "the document has no root element; an XLIFF file starts with <xliff>. \(supported)")])
        }
        var reader = XLIFFReader(root: root, tags: tags)
        reader.run()
        return reader.result()
    }

    /// The error for a DOCTYPE that declares entities.
    static let entityMessage =
        "the DOCTYPE declares entities (<!ENTITY …>), which Folio never expands; remove the DOCTYPE and write the text out (use &amp; &lt; &gt; &quot; &apos; or &#NNNN; character references)"
}

/// One translation unit as read, before plural grouping and duplicate checks.
struct XLIFFRawUnit {
    /// The message key (without a plural suffix).
    var key: String
    /// The plural category when the id is `KEY|==|plural.CATEGORY`.
    var category: PluralCategory?
    /// The translation, nil when untranslated.
    var value: String?
    /// The source text.
    var source: String?
    /// The non-empty notes, trimmed.
    var notes: [String]
    /// The state attribute.
    var state: String?
    /// The position of the value (target), or of the unit when there is no target.
    var line: Int
    /// The column of the value.
    var column: Int
    /// The position of the unit's start tag (for duplicate diagnostics).
    var unitLine: Int
    /// The column of the unit's start tag.
    var unitColumn: Int
}

/// The tree walk behind `XLIFFFile.parse`.
struct XLIFFReader {
    /// The section being collected for one target language.
    struct Section {
        /// The target language as written.
        var locale: String
        /// The line of the target language attribute.
        var line: Int
        /// The column of the target language attribute.
        var column: Int
        /// The units read for this language, in file order.
        var units: [XLIFFRawUnit] = []
    }

    /// The `<xliff>` element.
    let root: xmlNodePtr
    /// The byte-level start-tag positions.
    let tags: XLIFFTagScanner
    /// Start-tag positions by element, when the byte scan agrees with libxml2's tree.
    var positions: [xmlNodePtr: XLIFFTagScanner.Tag] = [:]
    /// The XLIFF namespace of the document (nil for an unqualified 1.2 document).
    var namespace: String?
    /// `source-language` of the first 1.2 `<file>`, or 2.0 `srcLang`.
    var sourceLanguage: String?
    /// The sections, in the order their languages first appear.
    var sections: [Section] = []
    /// Section index by locale.
    var localeIndex: [String: Int] = [:]
    /// Errors found so far.
    var errors: [CatalogDiagnostic] = []
    /// Warnings found so far.
    var warnings: [CatalogDiagnostic] = []
    /// `<originalData>` of the 2.0 unit being read, by `data` id.
    var originalData: [String: String] = [:]

    /// The deepest nesting of groups and inline elements followed.
    static let maxDepth = 256

    /// A reader of the document under `root`.
    init(root: xmlNodePtr, tags: XLIFFTagScanner) {
        self.root = root
        self.tags = tags
        mapPositions()
    }

    // MARK: Positions

    /// Pairs libxml2's elements (preorder) with the scanned start tags, if they agree line for line.
    private mutating func mapPositions() {
        var elements: [xmlNodePtr] = []
        /// Appends `node` and its descendant elements in document order.
        func collect(_ node: xmlNodePtr, _ depth: Int) {
            elements.append(node)
            guard depth < Self.maxDepth + 8 else { return }
            var child = node.pointee.children
            while let c = child {
                if c.pointee.type == XML_ELEMENT_NODE { collect(c, depth + 1) }
                child = c.pointee.next
            }
        }
        collect(root, 0)
        guard elements.count == tags.tags.count else { return }
        var map: [xmlNodePtr: XLIFFTagScanner.Tag] = [:]
        map.reserveCapacity(elements.count)
        for (node, tag) in zip(elements, tags.tags) {
            // libxml2 records the line on which the start tag ends.
            guard tags.line(ofOffset: tag.end) == Int(xmlGetLineNo(node)) else { return }
            map[node] = tag
        }
        positions = map
    }

    /// The line and column of `node`'s start tag.
    func position(_ node: xmlNodePtr) -> (line: Int, column: Int) {
        if let tag = positions[node] { return tags.position(ofOffset: tag.start) }
        return (max(1, Int(xmlGetLineNo(node))), 1)
    }

    /// The line and column of attribute `name` on `node` (the start tag when it cannot be found).
    func position(ofAttribute name: String, on node: xmlNodePtr) -> (line: Int, column: Int) {
        if let tag = positions[node], let offset = tags.attributeOffset(name, in: tag) {
            return tags.position(ofOffset: offset)
        }
        return position(node)
    }

    /// Records an error at `node`'s start tag.
    mutating func error(_ node: xmlNodePtr, _ message: String) {
        let (line, column) = position(node)
        errors.append(CatalogDiagnostic(line: line, column: column, message: message))
    }

    /// Records a warning at `node`'s start tag.
    mutating func warning(_ node: xmlNodePtr, _ message: String) {
        let (line, column) = position(node)
        warnings.append(CatalogDiagnostic(line: line, column: column, message: message))
    }

    // MARK: Tree helpers

    /// The local name of an element.
    static func name(_ node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0) } ?? ""
    }

    /// The namespace URI of an element, if any.
    static func namespace(_ node: xmlNodePtr) -> String? {
        node.pointee.ns?.pointee.href.map { String(cString: $0) }
    }

    /// The value of the un-namespaced attribute `name`, if present.
    static func attribute(_ node: xmlNodePtr, _ name: String) -> String? {
        var attr = node.pointee.properties
        while let a = attr {
            if a.pointee.ns == nil, let n = a.pointee.name, String(cString: n) == name {
                var bytes: [UInt8] = []
                var child = a.pointee.children
                while let c = child {
                    if let content = c.pointee.content {
                        var p = content
                        while p.pointee != 0 { bytes.append(p.pointee); p += 1 }
                    }
                    child = c.pointee.next
                }
                return String(decoding: bytes, as: UTF8.self)
            }
            attr = a.pointee.next
        }
        return nil
    }

    /// The attribute's value when present and not empty.
    static func nonEmpty(_ node: xmlNodePtr, _ name: String) -> String? {
        guard let v = attribute(node, name), !v.isEmpty else { return nil }
        return v
    }

    /// `node`'s element children in the document's XLIFF namespace.
    func children(_ node: xmlNodePtr) -> [xmlNodePtr] {
        var out: [xmlNodePtr] = []
        var child = node.pointee.children
        while let c = child {
            if c.pointee.type == XML_ELEMENT_NODE, Self.namespace(c) == namespace { out.append(c) }
            child = c.pointee.next
        }
        return out
    }

    /// The first XLIFF child element called `name`.
    func child(_ node: xmlNodePtr, _ name: String) -> xmlNodePtr? {
        children(node).first { Self.name($0) == name }
    }

    /// The content of a text or CDATA node.
    static func content(_ node: xmlNodePtr) -> String {
        guard let content = node.pointee.content else { return "" }
        return String(cString: content)
    }

    // MARK: Driver

    /// Checks the root and version, then reads the 1.2 or 2.0 tree.
    mutating func run() {
        let rootName = Self.name(root)
        let ns = Self.namespace(root)
        let version = Self.attribute(root, "version")
        guard rootName == "xliff" else {
            error(root, "not an XLIFF file: the root element is <\(rootName)>, expected <xliff>. \(XLIFFFile.supported)")
            return
        }
        namespace = ns
        if ns == nil || ns == XLIFFFile.namespace12 {
            guard version == "1.2" || (ns != nil && version == nil) else {
                let what = version.map { "version \"\($0)\"" } ?? "no version attribute"
                error(root, "unsupported XLIFF: <xliff> has \(what)\(ns == nil ? " and no xmlns" : ""). \(XLIFFFile.supported)")
                return
            }
            read12()
        } else if ns == XLIFFFile.namespace20 {
            guard let version, XLIFFFile.versions20.contains(version) else {
                let what = version.map { "version \"\($0)\"" } ?? "no version attribute"
                error(root, "unsupported XLIFF: <xliff xmlns=\"\(XLIFFFile.namespace20)\"> has \(what). \(XLIFFFile.supported)")
                return
            }
            read20()
        } else {
            error(root, "unsupported XLIFF namespace \"\(ns ?? "")\"\(version.map { " (version \($0))" } ?? ""). \(XLIFFFile.supported); re-export the file in one of those")
        }
    }

    /// The finished result: plural grouping, duplicate checks, sorted diagnostics.
    mutating func result() -> ParsedCatalogFile {
        var out: [CatalogLocaleSection] = []
        for section in sections {
            out.append(CatalogLocaleSection(
                locale: section.locale, line: section.line, column: section.column, messages: messages(section)))
        }
        let order: (CatalogDiagnostic, CatalogDiagnostic) -> Bool = { ($0.line, $0.column) < ($1.line, $1.column) }
        return ParsedCatalogFile(
            sourceLanguage: sourceLanguage, sections: out, errors: errors.sorted(by: order),
            warnings: warnings.sorted(by: order))
    }

    /// The section for `locale`, created at the given position the first time it is named.
    mutating func sectionIndex(_ locale: String, at position: (line: Int, column: Int)) -> Int {
        if let i = localeIndex[locale] { return i }
        sections.append(Section(locale: locale, line: position.line, column: position.column))
        localeIndex[locale] = sections.count - 1
        return sections.count - 1
    }

    /// Splits Xcode's `KEY|==|plural.CATEGORY`; nil (after a diagnostic) when the unit must be dropped.
    mutating func splitKey(_ raw: String, unit: xmlNodePtr) -> (key: String, category: PluralCategory?)? {
        guard let range = raw.range(of: XLIFFFile.variationSeparator) else { return (raw, nil) }
        let key = String(raw[..<range.lowerBound])
        let path = String(raw[range.upperBound...])
        if path.hasPrefix("plural.") {
            let name = String(path.dropFirst("plural.".count))
            guard let category = PluralCategory(rawValue: name) else {
                error(unit, "unknown plural category \"\(name)\" in \"\(raw)\"; use one of zero, one, two, few, many, other (KEY|==|plural.CATEGORY)")
                return nil
            }
            return (key, category)
        }
        warning(unit, "the variation \"\(path)\" in \"\(raw)\" is not supported (only KEY|==|plural.CATEGORY is); the unit is ignored")
        return nil
    }

    /// Rank of a state from least to most finished, for choosing one state for several segments/variants.
    static func stateRank(_ state: String) -> Int {
        switch state {
        case "new": return 0
        case "needs-translation", "initial": return 1
        case "needs-l10n", "needs-adaptation": return 2
        case "needs-review-translation", "needs-review-l10n", "needs-review-adaptation": return 3
        case "translated": return 4
        case "reviewed": return 5
        case "final": return 6
        case "signed-off": return 7
        default: return -1
        }
    }

    /// One state for several: the common one, else the least finished.
    static func combinedState(_ states: [String]) -> String? {
        guard var best = states.first else { return nil }
        for s in states.dropFirst() where stateRank(s) < stateRank(best) { best = s }
        return best
    }

    /// The messages of a section: plural variants folded, duplicates reported.
    mutating func messages(_ section: Section) -> [CatalogMessage] {
        /// A message being assembled (plural variants arrive one unit at a time).
        struct Pending {
            /// The message with its key and position.
            var message: CatalogMessage
            /// Whether the message is made of plural variants.
            var plural: Bool
            /// The translated variants.
            var values: PluralVariants = [:]
            /// The source variants.
            var sources: PluralVariants = [:]
            /// The distinct notes of all variants.
            var notes: [String] = []
            /// The states of all variants.
            var states: [String] = []
            /// Unit line per category (plural) or of the unit (plain), for duplicate diagnostics.
            var lines: [PluralCategory: Int] = [:]
            /// The line of the first unit.
            var unitLine: Int
        }
        var pending: [Pending] = []
        var index: [String: Int] = [:]
        for unit in section.units {
            let here = unit.category.map { "\(unit.key)\(XLIFFFile.variationSeparator)plural.\($0.rawValue)" } ?? unit.key
            if let i = index[unit.key] {
                let existing = pending[i]
                if existing.plural != (unit.category != nil) {
                    errors.append(CatalogDiagnostic(
                        line: unit.unitLine, column: unit.unitColumn,
                        message: "duplicate key \"\(unit.key)\" for locale \(section.locale): line \(existing.unitLine) has it as \(existing.plural ? "plural variants" : "a plain string") and line \(unit.unitLine) as \(existing.plural ? "a plain string" : "a plural variant"); keep one of the two forms"))
                    continue
                }
                guard let category = unit.category else {
                    errors.append(CatalogDiagnostic(
                        line: unit.unitLine, column: unit.unitColumn,
                        message: "duplicate key \"\(here)\" for locale \(section.locale): first at line \(existing.unitLine), again at line \(unit.unitLine); remove one of the two units or give it another id"))
                    continue
                }
                if let first = existing.lines[category] {
                    errors.append(CatalogDiagnostic(
                        line: unit.unitLine, column: unit.unitColumn,
                        message: "duplicate key \"\(here)\" for locale \(section.locale): first at line \(first), again at line \(unit.unitLine); remove one of the two units or give it another id"))
                    continue
                }
                // Another variant of a plural already started.
                pending[i].lines[category] = unit.unitLine
                if let v = unit.value { pending[i].values[category] = v }
                if let s = unit.source { pending[i].sources[category] = s }
                for note in unit.notes where !pending[i].notes.contains(note) { pending[i].notes.append(note) }
                if let s = unit.state { pending[i].states.append(s) }
                continue
            }
            var p = Pending(
                message: CatalogMessage(key: unit.key, value: nil, line: unit.line, column: unit.column),
                plural: unit.category != nil, notes: unit.notes, unitLine: unit.unitLine)
            if let category = unit.category {
                p.lines[category] = unit.unitLine
                if let v = unit.value { p.values[category] = v }
                if let s = unit.source { p.sources[category] = s }
            } else {
                p.message.value = unit.value.map { .string($0) }
                p.message.source = unit.source.map { .string($0) }
            }
            if let s = unit.state { p.states.append(s) }
            index[unit.key] = pending.count
            pending.append(p)
        }
        return pending.map { p in
            var m = p.message
            if p.plural {
                m.value = p.values.isEmpty ? nil : .plural(p.values)
                m.source = p.sources.isEmpty ? nil : .plural(p.sources)
            }
            m.comment = p.notes.isEmpty ? nil : p.notes.joined(separator: "\n")
            m.state = Self.combinedState(p.states)
            return m
        }
    }

    /// The trimmed text of `notes`, empty ones dropped.
    func noteTexts(_ notes: [xmlNodePtr]) -> [String] {
        notes.compactMap { note in
            let text = plainText(note).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text
        }
    }

    /// All text below `node`, markup ignored.
    func plainText(_ node: xmlNodePtr) -> String {
        var out = ""
        var child = node.pointee.children
        while let c = child {
            switch c.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE: out += Self.content(c)
            case XML_ELEMENT_NODE: out += plainText(c)
            default: break
            }
            child = c.pointee.next
        }
        return out
    }
}
