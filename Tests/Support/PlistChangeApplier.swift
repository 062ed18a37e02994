import FolioPlist

/// Applies ``PlistChange``s (as `folio diff --format json` reports them) to an old value, to
/// check that a diff is complete and exact: the result must be the new value.
package enum PlistChangeApplier {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package static func apply(_ changes: [PlistChange], to value: PlistValue) throws -> PlistValue {
        var v = value
        var i = 0
        while i < changes.count {
            let c = changes[i]
            guard isArrayItem(c) else {
                v = try applyOne(c, to: v)
                i += 1
                continue
            }
            let container = Array(c.path.dropLast())
            var j = i
            while j < changes.count, isArrayItem(changes[j]), Array(changes[j].path.dropLast()) == container { j += 1 }
            let batch = Array(changes[i..<j])
            v = try update(v, container[...]) { array in try rebuild(array, batch) }
            i = j
        }
        return v
    }

    static func isArrayItem(_ c: PlistChange) -> Bool {
        guard let last = c.path.last else { return false }
        if case .key = last { return false }
        return c.op != .change
    }

    static func applyOne(_ c: PlistChange, to v: PlistValue) throws -> PlistValue {
        switch c.op {
        case .change:
            guard let new = c.new else { throw Failure(description: "change at \(c.pathText) has no new value") }
            return try update(v, c.path[...]) { _ in new }
        case .add, .remove:
            guard case .key(let key)? = c.path.last else { throw Failure(description: "\(c.op) at \(c.pathText)") }
            return try update(v, c.path.dropLast()) { parent in
                guard case .dict(var d) = parent else { throw Failure(description: "\(c.pathText): parent is not a dictionary") }
                d[key] = c.op == .add ? c.new : nil
                return .dict(d)
            }
        case .move: throw Failure(description: "move at a key path \(c.pathText)")
        }
    }

    /// `f` applied to the value at `path` inside `v`.
    static func update(_ v: PlistValue, _ path: ArraySlice<PlistPathComponent>, _ f: (PlistValue) throws -> PlistValue) throws -> PlistValue {
        guard let first = path.first else { return try f(v) }
        let rest = path.dropFirst()
        switch (first, v) {
        case (.key(let k), .dict(var d)):
            guard let child = d[k] else { throw Failure(description: "no key \(k)") }
            d[k] = try update(child, rest, f)
            return .dict(d)
        case (.index(let i), .array(var a)):
            guard a.indices.contains(i) else { throw Failure(description: "no index \(i) in \(a.count) items") }
            a[i] = try update(a[i], rest, f)
            return .array(a)
        case (.match(let key, let value), .array(var a)):
            guard let i = a.firstIndex(where: { $0[key] == value }) else { throw Failure(description: "no item with \(key)=\(value)") }
            a[i] = try update(a[i], rest, f)
            return .array(a)
        default:
            throw Failure(description: "path step \(first.text) does not fit a \(v)")
        }
    }

    /// An array rebuilt from its removes (old indexes), adds (new indexes) and moves.
    static func rebuild(_ value: PlistValue, _ ops: [PlistChange]) throws -> PlistValue {
        guard let old = value.arrayValue else { throw Failure(description: "not an array: \(value)") }
        var gone = Set<Int>()
        var placed: [Int: PlistValue] = [:]
        for op in ops {
            switch op.op {
            case .remove: gone.insert(try op.index ?? missing(op))
            case .add: placed[try op.index ?? missing(op)] = try op.new ?? missing(op)
            case .move:
                let (from, to) = (try op.from ?? missing(op), try op.to ?? missing(op))
                gone.insert(from)
                placed[to] = old[from]
            case .change: break
            }
        }
        var rest = old.indices.filter { !gone.contains($0) }.map { old[$0] }[...]
        let count = rest.count + placed.count
        var out: [PlistValue] = []
        for j in 0..<count {
            if let v = placed[j] { out.append(v) } else if let v = rest.popFirst() { out.append(v) } else { throw Failure(description: "slot \(j) empty") }
        }
        return .array(out)
    }

    static func missing<T>(_ op: PlistChange) throws -> T { throw Failure(description: "\(op.op) at \(op.pathText) lacks a field") }
}
