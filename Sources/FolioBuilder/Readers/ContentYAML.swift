import Foundation
import FolioPlist
import Yams

/// YAML content files, one document, read with the YAML 1.2 core schema through Yams.
package enum ContentYAML {
    /// Tags plain `<<` keys as merge keys; resolves nothing else (Yams resolves only keys, to check duplicates).
    static let resolver = Resolver.basic.appending(.merge)

    /// How many values a document of `size` bytes may expand to through aliases, against alias bombs
    /// (a value takes at least two bytes, so only aliases can reach this).
    static func expansionBudget(size: Int) -> Int { 100_000 + 4 * size }

    /// Reads a YAML document.
    static func read(_ bytes: [UInt8], nulls: NullPolicy = .default) throws(ReadError) -> PlistValue {
        // The common flat shape without a node tree (and without nulls); Yams for everything else
        // (and every error).
        if TextPosition.firstInvalidUTF8(bytes) == nil, let simple = SimpleYAML.mapping(bytes) { return .dict(simple) }
        return try readWithYams(bytes, nulls: nulls)
    }

    /// Reads a YAML document through Yams alone: the general reader, which ``SimpleYAML`` is checked against.
    package static func readWithYams(_ bytes: [UInt8], nulls: NullPolicy = .default) throws(ReadError) -> PlistValue {
        try value(of: compose(bytes), size: bytes.count, nulls: nulls)
    }

    /// The value of a composed document.
    static func value(of root: Node, size: Int, nulls: NullPolicy) throws(ReadError) -> PlistValue {
        var converter = YAMLConverter(budget: expansionBudget(size: size), nulls: nulls)
        var path: [String] = []
        return try converter.value(root, path: &path, depth: 0)
    }

    /// Where the value at `tokens` starts, or nil.
    static func locate(_ tokens: [String], in bytes: [UInt8]) -> SourceLocation? {
        guard var node = try? compose(bytes) else { return nil }
        for token in tokens {
            switch node {
            case .mapping(let mapping):
                guard let pair = mapping.first(where: { $0.key.scalar?.string == token }) else { return nil }
                node = pair.value
            case .sequence(let sequence):
                guard let index = Int(token), sequence.indices.contains(index) else { return nil }
                node = sequence[index]
            default: return nil
            }
        }
        return node.mark.map { SourceLocation(line: $0.line, column: $0.column) }
    }

    /// The one document of `bytes` as Yams nodes, aliases resolved.
    static func compose(_ bytes: [UInt8]) throws(ReadError) -> Node {
        guard let root = try composeIfAny(bytes) else {
            throw ReadError(line: 1, column: 1, message: "the file holds no YAML document; write a mapping such as `title: Hello`")
        }
        return root
    }

    /// The one document of `bytes` as Yams nodes, or nil when the text holds none (only blanks or comments).
    static func composeIfAny(_ bytes: [UInt8]) throws(ReadError) -> Node? {
        let text = try TextPosition.text(bytes, format: "YAML")
        let utf8 = Array(text.utf8)
        if let deep = nestingLimitOffset(utf8) {
            throw ReadError(TextPosition.location(of: deep, in: utf8), "values nest deeper than \(StructuredReader.maxDepth) levels; flatten the data")
        }
        do {
            // The encoding is given: Yams's default reads the whole environment on every parse.
            let parser = try Parser(yaml: text, resolver: resolver, encoding: .utf8)
            return try parser.singleRoot()
        } catch let error as ReadError {
            throw error
        } catch let error as YamlError {
            throw mapped(error, utf8)
        } catch {
            throw ReadError(line: 1, column: 1, message: "YAML could not be read: \(error)")
        }
    }

    /// A Yams error as a read error at the file's line and column.
    static func mapped(_ error: YamlError, _ utf8: [UInt8]) -> ReadError {
        func syntax(_ context: YamlError.Context?, _ problem: String, _ mark: Mark) -> ReadError {
            if problem == "but found another document" {
                return ReadError(line: mark.line, column: mark.column, message: "several YAML documents in one file; keep one (split them into files)")
            }
            let during = context.map { " (\($0.text) from line \($0.mark.line))" } ?? ""
            return ReadError(line: mark.line, column: mark.column, message: "\(problem)\(during); fix the YAML syntax here")
        }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            return syntax(context, problem, mark)
        case .reader(let problem, let offset, _, _):
            return ReadError(TextPosition.location(of: offset ?? 0, in: utf8), "\(problem); save the file as plain UTF-8 text")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let key = duplicates.first ?? ""
            let at = SourceLocation(line: max(context.mark.line, 1), column: max(context.mark.column, 1))
            return ReadError(at, "the key \"\(key)\" appears more than once in this mapping; keep one")
        default:
            return ReadError(line: 1, column: 1, message: "YAML could not be read: \(error)")
        }
    }

    /// The offset where the text might nest deeper than allowed (a cheap upper bound, so Yams never recurses too deep).
    static func nestingLimitOffset(_ bytes: [UInt8]) -> Int? {
        var flow = 0, indent = 0, indicators = 0, lineStart = true
        for (offset, b) in bytes.enumerated() {
            switch b {
            case 0x0A: indent = 0; indicators = 0; lineStart = true; continue
            case 0x20 where lineStart: indent += 1
            case UInt8(ascii: "["), UInt8(ascii: "{"): flow += 1; lineStart = false
            case UInt8(ascii: "]"), UInt8(ascii: "}"): flow = max(0, flow - 1); lineStart = false
            case UInt8(ascii: "-"), UInt8(ascii: "?"), UInt8(ascii: ":"):
                let next = offset + 1 < bytes.count ? bytes[offset + 1] : 0x0A
                if next == 0x20 || next == 0x09 || next == 0x0A || next == 0x0D { indicators += 1 }
                lineStart = false
            default: lineStart = false
            }
            if flow + indent + indicators >= StructuredReader.maxDepth { return offset }
        }
        return nil
    }
}

/// Converts composed YAML nodes to property-list values, resolving plain scalars by the core schema.
struct YAMLConverter {
    /// How many more values may be made (aliases repeat values).
    var budget: Int
    let limit: Int
    /// What a null reads as.
    let nulls: NullPolicy

    init(budget: Int, nulls: NullPolicy = .default) {
        self.budget = budget
        limit = budget
        self.nulls = nulls
    }

    static func location(_ mark: Mark?) -> SourceLocation {
        SourceLocation(line: mark?.line ?? 1, column: mark?.column ?? 1)
    }

    /// `!!name` for a standard tag, the tag itself otherwise.
    static func shortTag(_ tag: String) -> String {
        let prefix = "tag:yaml.org,2002:"
        return tag.hasPrefix(prefix) ? "!!" + tag.dropFirst(prefix.count) : tag
    }

    mutating func value(_ node: Node, path: inout [String], depth: Int, inArray: Bool = false) throws(ReadError) -> PlistValue {
        let at = Self.location(node.mark)
        budget -= 1
        guard budget >= 0 else { throw ReadError(at, "aliases expand to more than \(limit) values; use fewer aliases") }
        guard depth < StructuredReader.maxDepth else {
            throw ReadError(at, "values nest deeper than \(StructuredReader.maxDepth) levels; flatten the data")
        }
        switch node {
        case .scalar(let scalar) where YAMLScalars.isNull(scalar): return try nulls.value(at: path, at, inArray: inArray)
        case .scalar(let scalar): return try YAMLScalars.value(scalar)
        case .sequence(let sequence):
            try Self.check(sequence.tag.rawValue, allowed: Tag.Name.seq.rawValue, kind: "sequence", at: at)
            var items: [PlistValue] = []
            for (index, item) in sequence.enumerated() {
                path.append(String(index))
                items.append(try value(item, path: &path, depth: depth + 1, inArray: true))
                path.removeLast()
            }
            return .array(items)
        case .mapping(let mapping):
            try Self.check(mapping.tag.rawValue, allowed: Tag.Name.map.rawValue, kind: "mapping", at: at)
            return .dict(try dictionary(mapping, path: &path, depth: depth))
        case .alias(let alias):
            throw ReadError(at, "the alias *\(alias.anchor.rawValue) is not defined; define the anchor &\(alias.anchor.rawValue) first")
        }
    }

    static func check(_ tag: String, allowed: String, kind: String, at: SourceLocation) throws(ReadError) {
        guard tag.isEmpty || tag == "!" || tag == allowed else {
            throw ReadError(at, "the tag \(shortTag(tag)) cannot apply to a \(kind); remove it")
        }
    }

    mutating func dictionary(_ mapping: Node.Mapping, path: inout [String], depth: Int) throws(ReadError) -> [String: PlistValue] {
        var dict: [String: PlistValue] = [:]
        var merged: [String: PlistValue] = [:]
        // Keys left out for their null (nulls = "omit"): still the mapping's own, over a merged value.
        var omitted = Set<String>()
        for (keyNode, valueNode) in mapping {
            guard case .scalar(let key) = keyNode else {
                let kind = keyNode.isMapping ? "mapping" : "sequence"
                throw ReadError(Self.location(keyNode.mark), "a mapping key must be plain text, not a \(kind); write the key as text")
            }
            path.append(key.string)
            defer { path.removeLast() }
            if key.string == "<<", key.style == .plain, key.tag.rawValue.isEmpty || key.tag.rawValue == Tag.Name.merge.rawValue {
                for source in try mergeSources(valueNode, path: &path, depth: depth) {
                    merged.merge(source) { earlier, _ in earlier }
                }
                continue
            }
            guard dict[key.string] == nil, !omitted.contains(key.string) else {
                throw ReadError(Self.location(key.mark), "the key \"\(key.string)\" appears twice in one mapping; keep one")
            }
            if nulls.omitsKeys, case .scalar(let scalar) = valueNode, YAMLScalars.isNull(scalar) {
                omitted.insert(key.string)
                continue
            }
            dict[key.string] = try value(valueNode, path: &path, depth: depth + 1)
        }
        return merged.filter { !omitted.contains($0.key) }.merging(dict) { _, own in own }
    }

    /// The mappings a merge key (`<<: *defaults`) brings in, in order of precedence.
    mutating func mergeSources(_ node: Node, path: inout [String], depth: Int) throws(ReadError) -> [[String: PlistValue]] {
        let items: [Node] = if case .sequence(let sequence) = node { Array(sequence) } else { [node] }
        var sources: [[String: PlistValue]] = []
        for item in items {
            guard case .mapping(let mapping) = item else {
                throw ReadError(Self.location(item.mark), "a merge key `<<` takes a mapping or a list of mappings; give it an alias of a mapping")
            }
            sources.append(try dictionary(mapping, path: &path, depth: depth + 1))
        }
        return sources
    }
}

extension Node {
    var isMapping: Bool { if case .mapping = self { true } else { false } }
}
