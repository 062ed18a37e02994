import FolioPlist
import Foundation

/// A compiled JSON Schema (a draft 2020-12 subset) that checks property-list values.
package struct JSONSchema: Sendable {
    let nodes: [SchemaNode]

    /// Compiles a schema document; `source` names its file in messages.
    package init(_ document: PlistValue, source: String) throws(SchemaError) {
        var compiler = SchemaCompiler(document: document, source: source)
        _ = try compiler.compile(document, at: [])
        try compiler.resolveReferences()
        nodes = compiler.nodes
    }

    /// Every violation of `value`, in document order, at most `limit`.
    package func validate(_ value: PlistValue, limit: Int = 100) -> [SchemaViolation] {
        guard limit > 0, !nodes.isEmpty else { return [] }
        var walk = SchemaWalk(nodes: nodes, limit: limit)
        _ = walk.eval(0, value, [], report: true)
        return walk.found.enumerated()
            .sorted { SchemaPath.precedes($0.element.path, $1.element.path, orElse: $0.offset < $1.offset) }
            .map(\.element.violation)
    }
}

/// One way an instance breaks its schema: where, which rule, and what to do.
package struct SchemaViolation: Sendable, Equatable, CustomStringConvertible {
    /// The RFC 6901 JSON pointer of the offending value in the instance ("" for the root).
    package var pointer: String
    /// The schema keyword that failed, e.g. `type` or `required`.
    package var keyword: String
    /// What was expected, what was found, and what to do.
    package var message: String

    /// Makes a violation.
    package init(pointer: String, keyword: String, message: String) {
        self.pointer = pointer
        self.keyword = keyword
        self.message = message
    }

    /// The violation as one line: pointer, message and keyword.
    package var description: String { "\(pointer.isEmpty ? "(root)" : pointer): \(message) [\(keyword)]" }
}

/// A schema that cannot be compiled: where in the schema, and why.
package struct SchemaError: Error, Sendable, CustomStringConvertible {
    /// The JSON pointer of the offending place in the schema document.
    package var pointer: String
    /// What is wrong there.
    package var message: String
    /// The schema file's name, as given to `JSONSchema.init`.
    package var source: String

    /// Makes an error.
    package init(pointer: String, message: String, source: String = "") {
        self.pointer = pointer
        self.message = message
        self.source = source
    }

    /// The error as one line: file, schema pointer and message.
    package var description: String {
        let place = pointer.isEmpty ? "(root)" : pointer
        return source.isEmpty ? "schema \(place): \(message)" : "\(source): schema \(place): \(message)"
    }
}

// MARK: - Compiled form

/// A compiled subschema: a boolean schema or a list of rules.
enum SchemaNode: Sendable {
    case always(Bool)
    case rules([SchemaRule])
}

/// One compiled keyword; subschemas are indices into `JSONSchema.nodes`.
enum SchemaRule: Sendable {
    case type([JSONType])
    case properties([String: Int])
    case patternProperties([SchemaPattern], [Int])
    case additionalProperties(Int, declared: Set<String>, patterns: [SchemaPattern])
    case required([String])
    case dependentRequired([String: [String]])
    case propertyNames(Int)
    case minProperties(Int), maxProperties(Int)
    case prefixItems([Int])
    case items(Int, after: Int)
    case contains(Int, min: Int, max: Int?)
    case minItems(Int), maxItems(Int), uniqueItems
    case enumeration([PlistValue], Set<PlistValue>)
    case const(PlistValue)
    case bound(BoundKind, SchemaNumber)
    case multipleOf(SchemaNumber)
    case minLength(Int), maxLength(Int)
    case pattern(SchemaPattern)
    case format(SchemaFormat)
    case ref(Int)
    case allOf([Int]), anyOf([Int]), oneOf([Int])
    case not(Int)
    case condition(if: Int, then: Int?, else: Int?)
}

/// The four numeric bounds.
enum BoundKind: String, Sendable {
    case minimum, maximum, exclusiveMinimum, exclusiveMaximum
}

/// JSON's type names, as `type` spells them.
enum JSONType: String, Sendable, CaseIterable {
    case null, boolean, integer, number, string, array, object
}

// MARK: - Compiler

/// Turns a schema document into nodes; `$ref`s are resolved once every subschema is in.
struct SchemaCompiler {
    let document: PlistValue
    let source: String
    var nodes: [SchemaNode] = []
    var byPointer: [String: Int] = [:]
    var pending: [(node: Int, rule: Int, ref: String, at: [String])] = []

    init(document: PlistValue, source: String) {
        self.document = document
        self.source = source
    }

    func error(_ at: [String], _ message: String) -> SchemaError {
        SchemaError(pointer: SchemaPath.pointer(at), message: message, source: source)
    }

    /// Compiles the subschema `value` found at `at`, once per location.
    mutating func compile(_ value: PlistValue, at: [String]) throws(SchemaError) -> Int {
        let key = SchemaPath.pointer(at)
        if let known = byPointer[key] { return known }
        let index = nodes.count
        byPointer[key] = index
        switch value {
        case .bool(let b): nodes.append(.always(b))
        case .dict(let d):
            nodes.append(.rules([]))
            let rules = try compileRules(d, at: at, node: index)
            nodes[index] = .rules(rules)
        default:
            throw error(at, "a schema is an object or a boolean, found \(SchemaText.typePhrase(value))")
        }
        return index
    }

    /// Resolves every `$ref` to a node, compiling targets outside the usual subschema places.
    mutating func resolveReferences() throws(SchemaError) {
        while let next = pending.popLast() {
            let target = try resolve(next.ref, at: next.at)
            guard case .rules(var rules) = nodes[next.node] else { continue }
            rules[next.rule] = .ref(target)
            nodes[next.node] = .rules(rules)
        }
    }

    mutating func resolve(_ ref: String, at: [String]) throws(SchemaError) -> Int {
        guard ref.hasPrefix("#") else {
            throw error(at, "the reference \"\(ref)\" is outside this document; only \"#...\" references are supported")
        }
        guard let fragment = String(ref.dropFirst()).removingPercentEncoding else {
            throw error(at, "the reference \"\(ref)\" has a bad percent-encoding")
        }
        guard fragment.isEmpty || fragment.hasPrefix("/") else {
            throw error(at, "the reference \"\(ref)\" names an anchor; use a JSON pointer such as \"#/$defs/name\"")
        }
        let parts = fragment.isEmpty ? [] : fragment.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") }
        var value = document
        for part in parts {
            if let d = value.dictValue, let next = d[part] {
                value = next
            } else if let a = value.arrayValue, let i = Int(part), i >= 0, i < a.count, String(i) == part {
                value = a[i]
            } else {
                throw error(at, "the reference \"\(ref)\" points at nothing in this document")
            }
        }
        return try compile(value, at: parts)
    }
}

// MARK: - Keywords

extension SchemaCompiler {
    /// The rules of one schema object, in a fixed order; unknown keywords are ignored.
    mutating func compileRules(_ d: [String: PlistValue], at: [String], node: Int) throws(SchemaError) -> [SchemaRule] {
        for defs in ["$defs", "definitions"] where d[defs] != nil {
            _ = try schemaMap(d, defs, at)
        }
        var rules: [SchemaRule] = []
        if let ref = d["$ref"] {
            guard let text = ref.stringValue else { throw error(at + ["$ref"], "$ref must be a string") }
            pending.append((node, rules.count, text, at + ["$ref"]))
            rules.append(.ref(-1))
        }
        if let t = d["type"] { rules.append(.type(try types(t, at + ["type"]))) }
        if let e = d["enum"] {
            guard let values = e.arrayValue else { throw error(at + ["enum"], "enum must be an array") }
            rules.append(.enumeration(values, Set(values.map(SchemaValue.canonical))))
        }
        if let c = d["const"] { rules.append(.const(SchemaValue.canonical(c))) }
        try compileNumeric(d, at, into: &rules)
        try compileString(d, at, into: &rules)
        try compileArray(d, at, into: &rules)
        try compileObject(d, at, into: &rules)
        try compileLogic(d, at, into: &rules)
        return rules
    }

    mutating func compileNumeric(_ d: [String: PlistValue], _ at: [String], into rules: inout [SchemaRule]) throws(SchemaError) {
        for kind in [BoundKind.minimum, .exclusiveMinimum, .maximum, .exclusiveMaximum] {
            if let n = try number(d, kind.rawValue, at) { rules.append(.bound(kind, n)) }
        }
        if let n = try number(d, "multipleOf", at) {
            guard n.isPositive else { throw error(at + ["multipleOf"], "multipleOf must be greater than 0") }
            rules.append(.multipleOf(n))
        }
    }

    mutating func compileString(_ d: [String: PlistValue], _ at: [String], into rules: inout [SchemaRule]) throws(SchemaError) {
        if let n = try count(d, "minLength", at) { rules.append(.minLength(n)) }
        if let n = try count(d, "maxLength", at) { rules.append(.maxLength(n)) }
        if let p = d["pattern"] { rules.append(.pattern(try pattern(p, at + ["pattern"]))) }
        if let f = d["format"] {
            guard let name = f.stringValue else { throw error(at + ["format"], "format must be a string") }
            if let format = SchemaFormat(rawValue: name) { rules.append(.format(format)) }
        }
    }

    mutating func compileArray(_ d: [String: PlistValue], _ at: [String], into rules: inout [SchemaRule]) throws(SchemaError) {
        var prefix = 0
        if let p = try schemaList(d, "prefixItems", at) {
            prefix = p.count
            rules.append(.prefixItems(p))
        }
        if let items = d["items"] {
            if items.arrayValue != nil {
                throw error(at + ["items"], "in draft 2020-12 items takes one schema; use prefixItems for a tuple")
            }
            rules.append(.items(try compile(items, at: at + ["items"]), after: prefix))
        }
        if let c = d["contains"] {
            let node = try compile(c, at: at + ["contains"])
            rules.append(.contains(node, min: try count(d, "minContains", at) ?? 1, max: try count(d, "maxContains", at)))
        }
        if let n = try count(d, "minItems", at) { rules.append(.minItems(n)) }
        if let n = try count(d, "maxItems", at) { rules.append(.maxItems(n)) }
        if let u = d["uniqueItems"] {
            guard let b = u.boolValue else { throw error(at + ["uniqueItems"], "uniqueItems must be true or false") }
            if b { rules.append(.uniqueItems) }
        }
    }

    mutating func compileObject(_ d: [String: PlistValue], _ at: [String], into rules: inout [SchemaRule]) throws(SchemaError) {
        if let r = d["required"] { rules.append(.required(try strings(r, at + ["required"]))) }
        let properties = try schemaMap(d, "properties", at) ?? [:]
        if !properties.isEmpty { rules.append(.properties(properties)) }
        var patterns: [SchemaPattern] = []
        if let map = d["patternProperties"]?.dictValue {
            let keys = map.keys.sorted()
            patterns = try keys.map { (k) throws(SchemaError) in try pattern(.string(k), at + ["patternProperties", k]) }
            let nodes = try schemaMap(d, "patternProperties", at) ?? [:]
            rules.append(.patternProperties(patterns, keys.map { nodes[$0] ?? 0 }))
        } else if d["patternProperties"] != nil {
            throw error(at + ["patternProperties"], "patternProperties must be an object")
        }
        if let extra = d["additionalProperties"] {
            let node = try compile(extra, at: at + ["additionalProperties"])
            rules.append(.additionalProperties(node, declared: Set(properties.keys), patterns: patterns))
        }
        if let dep = d["dependentRequired"] {
            guard let map = dep.dictValue else { throw error(at + ["dependentRequired"], "dependentRequired must be an object") }
            var out: [String: [String]] = [:]
            for (k, v) in map { out[k] = try strings(v, at + ["dependentRequired", k]) }
            rules.append(.dependentRequired(out))
        }
        if let names = d["propertyNames"] { rules.append(.propertyNames(try compile(names, at: at + ["propertyNames"]))) }
        if let n = try count(d, "minProperties", at) { rules.append(.minProperties(n)) }
        if let n = try count(d, "maxProperties", at) { rules.append(.maxProperties(n)) }
    }

    mutating func compileLogic(_ d: [String: PlistValue], _ at: [String], into rules: inout [SchemaRule]) throws(SchemaError) {
        if let list = try schemaList(d, "allOf", at) { rules.append(.allOf(list)) }
        if let list = try schemaList(d, "anyOf", at) { rules.append(.anyOf(list)) }
        if let list = try schemaList(d, "oneOf", at) { rules.append(.oneOf(list)) }
        if let n = d["not"] { rules.append(.not(try compile(n, at: at + ["not"]))) }
        let then = try d["then"].map { (s) throws(SchemaError) in try compile(s, at: at + ["then"]) }
        let otherwise = try d["else"].map { (s) throws(SchemaError) in try compile(s, at: at + ["else"]) }
        if let i = d["if"] {
            rules.append(.condition(if: try compile(i, at: at + ["if"]), then: then, else: otherwise))
        }
    }
}

// MARK: - Keyword values

extension SchemaCompiler {
    func types(_ value: PlistValue, _ at: [String]) throws(SchemaError) -> [JSONType] {
        let names = value.stringValue.map { [$0] } ?? value.arrayValue?.compactMap(\.stringValue)
        guard let names, names.count == (value.arrayValue?.count ?? 1), !names.isEmpty else {
            throw error(at, "type must be a type name or a non-empty array of them")
        }
        return try names.map { (name) throws(SchemaError) in
            guard let t = JSONType(rawValue: name) else {
                let known = JSONType.allCases.map(\.rawValue).joined(separator: ", ")
                throw error(at, "unknown type \"\(name)\"; use one of \(known)")
            }
            return t
        }
    }

    func strings(_ value: PlistValue, _ at: [String]) throws(SchemaError) -> [String] {
        guard let list = value.arrayValue, case let names = list.compactMap(\.stringValue), names.count == list.count else {
            throw error(at, "expected an array of strings")
        }
        return names
    }

    func number(_ d: [String: PlistValue], _ key: String, _ at: [String]) throws(SchemaError) -> SchemaNumber? {
        guard let value = d[key] else { return nil }
        guard let n = SchemaNumber(value) else { throw error(at + [key], "\(key) must be a number, found \(SchemaText.typePhrase(value))") }
        return n
    }

    func count(_ d: [String: PlistValue], _ key: String, _ at: [String]) throws(SchemaError) -> Int? {
        guard let value = d[key] else { return nil }
        let n: Int? = switch value {
        case .int(let i): Int(exactly: i)
        case .uint: Int.max
        case .real(let r) where r.isFinite && r == r.rounded(): r >= 9.0e18 ? Int.max : Int(exactly: r)
        default: nil
        }
        guard let n, n >= 0 else { throw error(at + [key], "\(key) must be a non-negative integer") }
        return n
    }

    func pattern(_ value: PlistValue, _ at: [String]) throws(SchemaError) -> SchemaPattern {
        guard let source = value.stringValue else { throw error(at, "a pattern must be a string") }
        guard let p = SchemaPattern(source) else { throw error(at, "the regular expression /\(source)/ does not compile") }
        return p
    }

    mutating func schemaList(_ d: [String: PlistValue], _ key: String, _ at: [String]) throws(SchemaError) -> [Int]? {
        guard let value = d[key] else { return nil }
        guard let list = value.arrayValue, !list.isEmpty else { throw error(at + [key], "\(key) must be a non-empty array of schemas") }
        var out: [Int] = []
        for (i, s) in list.enumerated() { out.append(try compile(s, at: at + [key, String(i)])) }
        return out
    }

    mutating func schemaMap(_ d: [String: PlistValue], _ key: String, _ at: [String]) throws(SchemaError) -> [String: Int]? {
        guard let value = d[key] else { return nil }
        guard let map = value.dictValue else { throw error(at + [key], "\(key) must be an object of schemas") }
        var out: [String: Int] = [:]
        for k in map.keys.sorted() {
            if let s = map[k] { out[k] = try compile(s, at: at + [key, k]) }
        }
        return out
    }
}


// MARK: - Walking an instance

/// One validation run: the violations so far, the `$ref` memo and cycle guards, and the regex budget.
struct SchemaWalk {
    struct RefKey: Hashable {
        var node: Int
        var path: [SchemaPath.Part]
    }

    let nodes: [SchemaNode]
    let limit: Int
    var found: [(path: [SchemaPath.Part], violation: SchemaViolation)] = []
    var memo: [RefKey: Bool] = [:]
    var checking: Set<RefKey> = []
    var reporting: Set<RefKey> = []
    var regexBudget = SchemaPattern.runBudget

    init(nodes: [SchemaNode], limit: Int) {
        self.nodes = nodes
        self.limit = limit
    }

    var full: Bool { found.count >= limit }

    /// Whether `v` at `path` satisfies node `n`; with `report`, records why not.
    mutating func eval(_ n: Int, _ v: PlistValue, _ path: [SchemaPath.Part], report: Bool) -> Bool {
        guard nodes.indices.contains(n) else { return true }
        switch nodes[n] {
        case .always(let b):
            return b || fail(path, "false", "no value is allowed here (the schema is false); remove it", report)
        case .rules(let rules):
            var ok = true
            for rule in rules where !apply(rule, v, path, report) {
                ok = false
                if !report || full { return false }
            }
            return ok
        }
    }

    /// Records a violation when reporting; always false.
    mutating func fail(_ path: [SchemaPath.Part], _ keyword: String, _ message: @autoclosure () -> String, _ report: Bool) -> Bool {
        if report, !full {
            found.append((path, SchemaViolation(pointer: SchemaPath.pointer(path), keyword: keyword, message: message())))
        }
        return false
    }

    mutating func apply(_ rule: SchemaRule, _ v: PlistValue, _ path: [SchemaPath.Part], _ report: Bool) -> Bool {
        switch rule {
        case .type(let types):
            if types.contains(where: { SchemaValue.matches($0, v) }) { return true }
            let wanted = SchemaText.list(types.map(SchemaText.article), conjunction: "or")
            return fail(path, "type", "expected \(wanted), found \(SchemaText.describe(v))", report)
        case .enumeration(let values, let set):
            if set.contains(SchemaValue.canonical(v)) { return true }
            let allowed = SchemaText.list(values.prefix(8).map(SchemaText.render), conjunction: "or")
            let more = values.count > 8 ? " (or \(values.count - 8) more)" : ""
            return fail(path, "enum", "expected \(allowed)\(more), found \(SchemaText.render(v)); use one of the allowed values", report)
        case .const(let c):
            if SchemaValue.canonical(v) == c { return true }
            return fail(path, "const", "expected exactly \(SchemaText.render(c)), found \(SchemaText.render(v))", report)
        case .ref(let target):
            return evalRef(target, v, path, report)
        case .allOf, .anyOf, .oneOf, .not, .condition:
            return applyLogic(rule, v, path, report)
        case .bound, .multipleOf:
            return applyNumber(rule, v, path, report)
        case .minLength, .maxLength, .pattern, .format:
            return applyString(rule, v, path, report)
        case .prefixItems, .items, .contains, .minItems, .maxItems, .uniqueItems:
            return applyArray(rule, v, path, report)
        default:
            return applyObject(rule, v, path, report)
        }
    }

    /// A `$ref`: memoised per (target, location); re-entering one still in progress (a cycle that consumed no input) passes.
    mutating func evalRef(_ target: Int, _ v: PlistValue, _ path: [SchemaPath.Part], _ report: Bool) -> Bool {
        let key = RefKey(node: target, path: path)
        if checking.contains(key) { return true }
        let valid: Bool
        if let known = memo[key] {
            valid = known
        } else {
            checking.insert(key)
            valid = eval(target, v, path, report: false)
            checking.remove(key)
            memo[key] = valid
        }
        guard report, !valid, !reporting.contains(key) else { return valid }
        reporting.insert(key)
        _ = eval(target, v, path, report: true)
        reporting.remove(key)
        return false
    }

    mutating func applyLogic(_ rule: SchemaRule, _ v: PlistValue, _ path: [SchemaPath.Part], _ report: Bool) -> Bool {
        switch rule {
        case .allOf(let list):
            var ok = true
            for n in list where !eval(n, v, path, report: report) {
                ok = false
                if !report || full { return false }
            }
            return ok
        case .anyOf(let list):
            for n in list where eval(n, v, path, report: false) { return true }
            return fail(path, "anyOf", "matches none of the \(list.count) alternatives under anyOf; change it to match one", report)
        case .oneOf(let list):
            var matched: [Int] = []
            for (i, n) in list.enumerated() where eval(n, v, path, report: false) {
                matched.append(i)
                if matched.count == 2 { break }
            }
            if matched.count == 1 { return true }
            if matched.isEmpty {
                return fail(path, "oneOf", "matches none of the \(list.count) alternatives under oneOf; change it to match exactly one", report)
            }
            return fail(path, "oneOf", "matches alternatives \(matched[0]) and \(matched[1]) under oneOf, but exactly one may match", report)
        case .not(let n):
            if !eval(n, v, path, report: false) { return true }
            return fail(path, "not", "matches the schema under not, which it must not", report)
        case .condition(let test, let then, let otherwise):
            guard let branch = eval(test, v, path, report: false) ? then : otherwise else { return true }
            return eval(branch, v, path, report: report)
        default:
            return true
        }
    }

    mutating func applyNumber(_ rule: SchemaRule, _ v: PlistValue, _ path: [SchemaPath.Part], _ report: Bool) -> Bool {
        guard let x = SchemaNumber(v) else { return true }
        switch rule {
        case .bound(let kind, let limit):
            let order = SchemaNumber.compare(x, limit)
            let (ok, phrase) = switch kind {
            case .minimum: (order >= 0, "at least")
            case .maximum: (order <= 0, "at most")
            case .exclusiveMinimum: (order > 0, "more than")
            case .exclusiveMaximum: (order < 0, "less than")
            }
            return ok || fail(path, kind.rawValue, "expected a number \(phrase) \(limit), found \(x)", report)
        case .multipleOf(let divisor):
            return x.isMultiple(of: divisor) || fail(path, "multipleOf", "expected a multiple of \(divisor), found \(x)", report)
        default:
            return true
        }
    }

    mutating func applyString(_ rule: SchemaRule, _ v: PlistValue, _ path: [SchemaPath.Part], _ report: Bool) -> Bool {
        guard let s = SchemaValue.stringView(v) else { return true }
        switch rule {
        case .minLength(let n):
            let count = s.unicodeScalars.count
            return count >= n || fail(path, "minLength", "expected at least \(SchemaText.count(n, "character")), found \(count) (\(SchemaText.render(v)))", report)
        case .maxLength(let n):
            let count = s.unicodeScalars.count
            return count <= n || fail(path, "maxLength", "expected at most \(SchemaText.count(n, "character")), found \(count) (\(SchemaText.render(v)))", report)
        case .pattern(let p):
            switch p.search(s, budget: &regexBudget) {
            case true?: return true
            case false?: return fail(path, "pattern", "expected a string matching /\(p.source)/, found \(SchemaText.render(v))", report)
            case nil: return fail(path, "pattern", "gave up matching /\(p.source)/ (too costly); simplify the pattern", report)
            }
        case .format(let f):
            if case .date = v, f == .dateTime { return true }
            return f.accepts(s) || fail(path, "format", "expected \(f.expectation), found \(SchemaText.render(v))", report)
        default:
            return true
        }
    }

    mutating func applyArray(_ rule: SchemaRule, _ v: PlistValue, _ path: [SchemaPath.Part], _ report: Bool) -> Bool {
        guard let a = v.arrayValue else { return true }
        switch rule {
        case .prefixItems(let list):
            return eachItem(a, path, report) { i in i < list.count ? list[i] : nil }
        case .items(let n, let after):
            if case .always(false) = nodes[n] {
                return a.count <= after || fail(path, "items", "expected at most \(SchemaText.count(after, "item")) (items is false), found \(a.count); remove the rest", report)
            }
            return eachItem(a, path, report) { i in i >= after ? n : nil }
        case .contains(let n, let min, let max):
            var hits = 0
            for (i, item) in a.enumerated() where eval(n, item, path + [.index(i)], report: false) { hits += 1 }
            if hits < min { return fail(path, "contains", "expected at least \(SchemaText.count(min, "matching item")) under contains, found \(hits)", report) }
            if let max, hits > max { return fail(path, "maxContains", "expected at most \(SchemaText.count(max, "matching item")) under contains, found \(hits)", report) }
            return true
        case .minItems(let n):
            return a.count >= n || fail(path, "minItems", "expected at least \(SchemaText.count(n, "item")), found \(a.count); add items", report)
        case .maxItems(let n):
            return a.count <= n || fail(path, "maxItems", "expected at most \(SchemaText.count(n, "item")), found \(a.count); remove items", report)
        case .uniqueItems:
            var seen: [PlistValue: Int] = [:]
            for (i, item) in a.enumerated() {
                if let j = seen.updateValue(i, forKey: SchemaValue.canonical(item)) {
                    return fail(path, "uniqueItems", "items \(j) and \(i) are equal; remove the duplicate", report)
                }
            }
            return true
        default:
            return true
        }
    }

    /// Applies the node `pick(i)` (if any) to each item.
    mutating func eachItem(_ a: [PlistValue], _ path: [SchemaPath.Part], _ report: Bool, _ pick: (Int) -> Int?) -> Bool {
        var ok = true
        for (i, item) in a.enumerated() {
            guard let n = pick(i) else { continue }
            if !eval(n, item, path + [.index(i)], report: report) {
                ok = false
                if !report || full { return false }
            }
        }
        return ok
    }

    mutating func applyObject(_ rule: SchemaRule, _ v: PlistValue, _ path: [SchemaPath.Part], _ report: Bool) -> Bool {
        guard let d = v.dictValue else { return true }
        switch rule {
        case .properties(let map):
            return eachMember(d, path, report) { _, key in map[key].map { [$0] } ?? [] }
        case .patternProperties(let patterns, let targets):
            return eachMember(d, path, report) { walk, key in
                patterns.indices.filter { patterns[$0].search(key, budget: &walk.regexBudget) == true }.map { targets[$0] }
            }
        case .additionalProperties(let n, let declared, let patterns):
            return applyAdditional(n, declared, patterns, d, path, report)
        case .required(let keys):
            return eachRequirement(keys.filter { d[$0] == nil }, path, report) { "\"\($0)\" is required; add it" }
        case .dependentRequired(let map):
            var ok = true
            for (key, needs) in map.sorted(by: { $0.key < $1.key }) where d[key] != nil {
                ok = eachRequirement(needs.filter { d[$0] == nil }, path, report) { "\"\($0)\" is required when \"\(key)\" is present; add it" } && ok
                if !ok, !report || full { return false }
            }
            return ok
        case .propertyNames(let n):
            for key in d.keys.sorted() where !eval(n, .string(key), path, report: false) {
                return fail(path, "propertyNames", "the property name \"\(key)\" does not satisfy propertyNames; rename it", report)
            }
            return true
        case .minProperties(let n):
            return d.count >= n || fail(path, "minProperties", "expected at least \(SchemaText.count(n, "property")), found \(d.count)", report)
        case .maxProperties(let n):
            return d.count <= n || fail(path, "maxProperties", "expected at most \(SchemaText.count(n, "property")), found \(d.count)", report)
        default:
            return true
        }
    }

    mutating func applyAdditional(
        _ n: Int, _ declared: Set<String>, _ patterns: [SchemaPattern], _ d: [String: PlistValue], _ path: [SchemaPath.Part], _ report: Bool
    ) -> Bool {
        let forbidden = if case .always(false) = nodes[n] { true } else { false }
        return eachMember(d, path, report) { walk, key in
            if declared.contains(key) || patterns.contains(where: { $0.search(key, budget: &walk.regexBudget) == true }) { return [] }
            return [n]
        } onFalse: { key in
            forbidden ? "\"\(key)\" is not allowed here; remove it or declare it under properties" : nil
        }
    }

    /// Applies `pick(key)`'s nodes to each member, in key order; `onFalse` reports a forbidden member at the object instead.
    mutating func eachMember(
        _ d: [String: PlistValue], _ path: [SchemaPath.Part], _ report: Bool,
        _ pick: (inout SchemaWalk, String) -> [Int], onFalse: (String) -> String? = { _ in nil }
    ) -> Bool {
        var ok = true
        for key in d.keys.sorted() {
            guard let value = d[key] else { continue }
            for n in pick(&self, key) {
                let passed = if let message = onFalse(key) { fail(path, "additionalProperties", message, report) }
                    else { eval(n, value, path + [.key(key)], report: report) }
                if !passed {
                    ok = false
                    if !report || full { return false }
                }
            }
        }
        return ok
    }

    mutating func eachRequirement(_ missing: [String], _ path: [SchemaPath.Part], _ report: Bool, _ message: (String) -> String) -> Bool {
        for key in missing {
            _ = fail(path, "required", message(key), report)
            if !report || full { return false }
        }
        return missing.isEmpty
    }
}
