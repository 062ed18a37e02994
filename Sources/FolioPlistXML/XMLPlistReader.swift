import CLibXML2
import FolioPlist
import Foundation

/// libxml2's one-time set-up, shared by every reader that uses it: `xmlInitParser` must run once
/// before threads parse in parallel (the Builder reads catalogs on all cores), and libxml2 2.9 does
/// not guard against two threads calling it at once. A Swift static runs its initialiser once.
package enum LibXML2Setup {
    /// True once `xmlInitParser` has run.
    package static let initialised: Bool = {
        xmlInitParser()
        return true
    }()
}

extension XMLPlist {
    /// Decodes an XML plist; errors carry the line (and column where libxml2 knows it).
    public static func decode(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        _ = LibXML2Setup.initialised
        guard let ctxt = xmlNewParserCtxt() else {
            throw PlistError(.syntax, "xml: cannot create a parser")
        }
        defer { xmlFreeParserCtxt(ctxt) }
        // HUGE lifts libxml2's 256-level depth cap; our own limit (512) still applies below.
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_HUGE.rawValue)
        let doc: xmlDocPtr? = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { chars in
                xmlCtxtReadMemory(ctxt, chars.baseAddress, Int32(clamping: chars.count), nil, nil, options)
            }
        }
        guard let doc else {
            if let err = xmlCtxtGetLastError(ctxt) {
                let message = err.pointee.message.map { String(cString: $0) }?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "malformed XML"
                throw PlistError(.syntax, "xml: \(message)", line: Int(err.pointee.line), column: Int(err.pointee.int2))
            }
            throw PlistError(.syntax, "xml: malformed XML")
        }
        defer { xmlFreeDoc(doc) }
        guard let root = xmlDocGetRootElement(doc) else {
            throw PlistError(.syntax, "xml: document has no root element")
        }
        if name(root) == "plist" {
            let children = try elements(root)
            guard children.count == 1 else {
                throw PlistError(.badValue, "xml: <plist> must hold exactly one value, found \(children.count)", line: line(root))
            }
            return try value(children[0], depth: 0)
        }
        return try value(root, depth: 0)
    }

    private static func name(_ node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0) } ?? ""
    }

    private static func line(_ node: xmlNodePtr) -> Int {
        Int(xmlGetLineNo(node))
    }

    /// The element children of `node`; text other than whitespace between them is an error.
    private static func elements(_ node: xmlNodePtr) throws(PlistError) -> [xmlNodePtr] {
        var out: [xmlNodePtr] = []
        var child = node.pointee.children
        while let c = child {
            switch c.pointee.type {
            case XML_ELEMENT_NODE: out.append(c)
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                var p = c.pointee.content
                while let q = p, q.pointee != 0 {
                    guard q.pointee == 0x20 || q.pointee == 0x09 || q.pointee == 0x0A || q.pointee == 0x0D else {
                        throw PlistError(.badValue, "xml: unexpected text inside <\(name(node))>", line: line(c))
                    }
                    p = q + 1
                }
            default: break
            }
            child = c.pointee.next
        }
        return out
    }

    /// The concatenated text of `node`'s text and CDATA children.
    private static func text(_ node: xmlNodePtr) throws(PlistError) -> String {
        var bytes: [UInt8] = []
        var child = node.pointee.children
        while let c = child {
            switch c.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = c.pointee.content {
                    var p = content
                    while p.pointee != 0 { bytes.append(p.pointee); p += 1 }
                }
            case XML_COMMENT_NODE, XML_PI_NODE: break
            case XML_ENTITY_REF_NODE:
                throw PlistError(.unsupported, "xml: entity references are not supported in <\(name(node))>", line: line(node))
            default:
                throw PlistError(.badValue, "xml: <\(name(node))> must hold only text", line: line(node))
            }
            child = c.pointee.next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func value(_ node: xmlNodePtr, depth: Int) throws(PlistError) -> PlistValue {
        guard depth < BinaryPlist.maxDepth else {
            throw PlistError(.tooDeep, "xml: collections nest deeper than \(BinaryPlist.maxDepth)", line: line(node))
        }
        let tag = name(node)
        switch tag {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "string": return .string(try text(node))
        case "integer":
            let s = try text(node).trimmingCharacters(in: .whitespacesAndNewlines)
            if let i = Int64(s) { return .int(i) }
            if let u = UInt64(s) { return .uint(u) }
            if s.hasPrefix("0x"), let u = UInt64(s.dropFirst(2), radix: 16) { return .integer(u) }
            throw PlistError(.badNumber, "xml: <integer> \"\(s)\" is not a 64-bit integer", line: line(node))
        case "real":
            let s = try text(node).trimmingCharacters(in: .whitespacesAndNewlines)
            switch s.lowercased() {
            case "nan": return .real(.nan)
            case "inf", "+inf", "infinity", "+infinity": return .real(.infinity)
            case "-inf", "-infinity": return .real(-.infinity)
            default:
                if let d = Double(s) { return .real(d) }
                throw PlistError(.badNumber, "xml: <real> \"\(s)\" is not a number", line: line(node))
            }
        case "date":
            let s = try text(node).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let d = PlistDates.parseISO8601(s) else {
                throw PlistError(.badValue, "xml: <date> \"\(s)\" is not an ISO 8601 date like 2001-01-01T00:00:00Z", line: line(node))
            }
            return .date(d)
        case "data":
            let s = try text(node).filter { !$0.isWhitespace }
            guard let d = Data(base64Encoded: s) else {
                throw PlistError(.badValue, "xml: <data> is not valid base64", line: line(node))
            }
            return .data(d)
        case "array":
            var items: [PlistValue] = []
            for child in try elements(node) { items.append(try value(child, depth: depth + 1)) }
            return .array(items)
        case "dict":
            let children = try elements(node)
            guard children.count % 2 == 0 else {
                throw PlistError(.badValue, "xml: <dict> has a <key> without a value", line: line(node))
            }
            var dict: [String: PlistValue] = [:]
            dict.reserveCapacity(children.count / 2)
            var i = 0
            while i < children.count {
                let k = children[i]
                guard name(k) == "key" else {
                    throw PlistError(.badKey, "xml: expected <key> in <dict>, found <\(name(k))>", line: line(k))
                }
                let key = try text(k)
                let v = try value(children[i + 1], depth: depth + 1)
                if dict.updateValue(v, forKey: key) != nil {
                    throw PlistError(.duplicateKey, "xml: <dict> has the key \"\(key)\" twice", line: line(k))
                }
                i += 2
            }
            if dict.count == 1, case .int(let uid)? = dict["CF$UID"], uid >= 0 {
                return .uid(UInt64(uid))
            }
            return .dict(dict)
        default:
            throw PlistError(.badValue, "xml: unknown element <\(tag)>", line: line(node))
        }
    }
}

extension PlistValue {
    /// Decodes `bytes` in whichever format they are in: binary, XML or JSON (``PlistValue/decode(_:)``
    /// reads binary and JSON only).
    public static func decodeAnyFormat(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        PlistFormat.sniff(bytes) == .xml ? try XMLPlist.decode(bytes) : try decode(bytes)
    }
}
