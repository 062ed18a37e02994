import FolioPlist
import Foundation

/// A structural edit of a property list value: applied to its source value, it gives the target
/// value, which the deterministic binary writer turns into the target's exact bytes.
///
/// An edit is itself a property list, a dictionary with one of these keys:
///
/// ```
/// {v: value}                        replace with value
/// {d: {key: edit, …}, x: [key, …]}  dictionary: edit or add (with {v:}) keys, remove keys
/// {a: [op, …]}                      array: ops build the target from the source's elements in
///                                   order (n > 0 copies n, n < 0 skips -n, [values] inserts,
///                                   an edit edits the next one); the rest is copied
/// {s: [prefix, suffix, middle]}     string: keep `prefix` and `suffix` Unicode scalars
/// {b: [prefix, suffix, data]}       data: keep `prefix` and `suffix` bytes
/// {p: edit}                         data holding a binary plist: edit the value it encodes
/// ```
///
/// Binary plists move every offset after a string that grows, so a byte delta of the encoding
/// is several kilobytes where this edit is a few dozen bytes.
package enum PlistPatch {
    /// An edit that does not apply to the value it was given.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    /// Edits nest no deeper than this (the plist readers' own limit).
    package static let maxDepth = BinaryPlist.maxDepth

    // MARK: Diff

    /// The edit that turns `source` into `target`, the smallest of the forms tried; nil when the
    /// two are identical (byte for byte in their strings and data).
    package static func diff(_ source: PlistValue, _ target: PlistValue) -> PlistValue? {
        diff(source, target, depth: 0)
    }

    private static func diff(_ a: PlistValue, _ b: PlistValue, depth: Int) -> PlistValue? {
        if identical(a, b) { return nil }
        let replace = PlistValue.dict(["v": b])
        guard depth < maxDepth / 2 else { return replace }
        let candidate: PlistValue?
        switch (a, b) {
        case (.dict(let x), .dict(let y)): candidate = dictEdit(x, y, depth: depth)
        case (.array(let x), .array(let y)): candidate = arrayEdit(x, y, depth: depth)
        case (.string(let x), .string(let y)): candidate = stringEdit(x, y)
        case (.data(let x), .data(let y)): candidate = dataEdit(x, y, depth: depth)
        default: candidate = nil
        }
        if let candidate, cost(candidate) < cost(replace) { return candidate }
        return replace
    }

    private static func dictEdit(_ x: [String: PlistValue], _ y: [String: PlistValue], depth: Int) -> PlistValue? {
        var edits: [String: PlistValue] = [:]
        var removed: [String] = []
        for (key, value) in y {
            if let i = x.index(forKey: key) {
                // Swift finds canonically equivalent keys; only the same bytes are the same key.
                if x[i].key.utf8.elementsEqual(key.utf8) {
                    if let e = diff(x[i].value, value, depth: depth + 1) { edits[key] = e }
                    continue
                }
                removed.append(x[i].key)
            }
            edits[key] = .dict(["v": value])
        }
        removed += x.keys.filter { y.index(forKey: $0) == nil }
        guard !edits.isEmpty || !removed.isEmpty else { return nil }
        var d: [String: PlistValue] = [:]
        if !edits.isEmpty { d["d"] = .dict(edits) }
        if !removed.isEmpty { d["x"] = .array(removed.sorted().map { .string($0) }) }
        return .dict(d)
    }

    /// Ops as described on the type; runs of copies, skips and inserts are merged, and the
    /// trailing copy is left implicit.
    struct ArrayOps {
        var ops: [PlistValue] = []
        /// Values to insert at this point, gathered into one op.
        var inserts: [PlistValue] = []

        mutating func flush() {
            guard !inserts.isEmpty else { return }
            ops.append(.array(inserts))
            inserts = []
        }

        mutating func copy(_ n: Int) {
            guard n > 0 else { return }
            flush()
            if case .int(let last)? = ops.last, last > 0 { ops[ops.count - 1] = .int(last + Int64(n)) } else { ops.append(.int(Int64(n))) }
        }

        /// Skips produce nothing and inserts consume nothing, so a skip goes before the inserts
        /// gathered so far: skip, insert, skip, insert becomes one skip and one insert.
        mutating func skip(_ n: Int) {
            guard n > 0 else { return }
            if case .int(let last)? = ops.last, last < 0 { ops[ops.count - 1] = .int(last - Int64(n)) } else { ops.append(.int(-Int64(n))) }
        }

        mutating func insert(_ value: PlistValue) { inserts.append(value) }

        mutating func edit(_ e: PlistValue) {
            flush()
            ops.append(e)
        }

        mutating func finish() -> PlistValue {
            flush()
            if case .int(let last)? = ops.last, last > 0 { ops.removeLast() }
            return .dict(["a": .array(ops)])
        }
    }

    /// Above this many elements on both sides, an array's changed middle is replaced, not
    /// aligned: Myers' diff takes up to (n + m)² steps when two long arrays differ throughout.
    static let alignmentLimit = 4_000

    private static func arrayEdit(_ x: [PlistValue], _ y: [PlistValue], depth: Int) -> PlistValue {
        var prefix = 0
        while prefix < x.count, prefix < y.count, identical(x[prefix], y[prefix]) { prefix += 1 }
        var suffix = 0
        while suffix < min(x.count, y.count) - prefix, identical(x[x.count - 1 - suffix], y[y.count - 1 - suffix]) { suffix += 1 }
        let xm = x[prefix..<(x.count - suffix)]
        let ym = y[prefix..<(y.count - suffix)]
        var ops = ArrayOps()
        ops.copy(prefix)

        func substitute(_ old: PlistValue, _ new: PlistValue) { Self.substitute(old, new, into: &ops, depth: depth + 1) }

        if xm.count == ym.count {
            for (old, new) in zip(xm, ym) { substitute(old, new) }
        } else if xm.count + ym.count > Self.alignmentLimit {
            // Too large to align element by element in reasonable time: replace the middle.
            ops.skip(xm.count)
            for value in ym { ops.insert(value) }
        } else {
            // Myers' diff of the middle; a removal and an insertion at the same place pair up as
            // an edit of that element.
            let difference = ym.difference(from: xm, by: identical)
            var removed = Set<Int>()
            var inserted = Set<Int>()
            for change in difference {
                switch change {
                case .remove(let offset, _, _): removed.insert(offset)
                case .insert(let offset, _, _): inserted.insert(offset)
                }
            }
            var i = 0
            var j = 0
            while i < xm.count || j < ym.count {
                let r = i < xm.count && removed.contains(i)
                let s = j < ym.count && inserted.contains(j)
                if r && s {
                    substitute(xm[xm.startIndex + i], ym[ym.startIndex + j])
                    i += 1
                    j += 1
                } else if r {
                    ops.skip(1)
                    i += 1
                } else if s {
                    ops.insert(ym[ym.startIndex + j])
                    j += 1
                } else if i < xm.count, j < ym.count {
                    ops.copy(1)
                    i += 1
                    j += 1
                } else {
                    break  // unreachable for a well-formed difference; the result is verified anyway
                }
            }
        }
        return ops.finish()
    }

    /// Turns the array element `old` into `new`: an edit of it, or a skip and an insert when
    /// that is no larger, or a copy when they are identical.
    static func substitute(_ old: PlistValue, _ new: PlistValue, into ops: inout ArrayOps, depth: Int) {
        if let e = diff(old, new, depth: depth) {
            if cost(e) < cost(new) + 2 { ops.edit(e) } else {
                ops.skip(1)
                ops.insert(new)
            }
        } else {
            ops.copy(1)
        }
    }

    private static func stringEdit(_ x: String, _ y: String) -> PlistValue {
        let xs = Array(x.unicodeScalars)
        let ys = Array(y.unicodeScalars)
        let (p, s) = commonEnds(xs, ys)
        var middle = String.UnicodeScalarView()
        middle.append(contentsOf: ys[p..<(ys.count - s)])
        return .dict(["s": .array([.int(Int64(p)), .int(Int64(s)), .string(String(middle))])])
    }

    private static func dataEdit(_ x: Data, _ y: Data, depth: Int) -> PlistValue {
        let xs = [UInt8](x)
        let ys = [UInt8](y)
        if xs.starts(with: Self.bplistMagic), ys.starts(with: Self.bplistMagic),
            let a = try? BinaryPlist.decode(xs), let b = try? BinaryPlist.decode(ys),
            BinaryPlist.encode(b) == ys, let nested = diff(a, b, depth: depth + 1)
        {
            return .dict(["p": nested])
        }
        let (p, s) = commonEnds(xs, ys)
        return .dict(["b": .array([.int(Int64(p)), .int(Int64(s)), .data(Data(ys[p..<(ys.count - s)]))])])
    }

    private static let bplistMagic = Array("bplist00".utf8)

    /// The lengths of the common prefix and suffix of `x` and `y`, not overlapping in either.
    private static func commonEnds<T: Equatable>(_ x: [T], _ y: [T]) -> (prefix: Int, suffix: Int) {
        var p = 0
        while p < x.count, p < y.count, x[p] == y[p] { p += 1 }
        var s = 0
        while s < min(x.count, y.count) - p, x[x.count - 1 - s] == y[y.count - 1 - s] { s += 1 }
        return (p, s)
    }

    /// Whether two values are the same, strings and keys compared by their UTF-8 bytes (Swift's
    /// `==` on strings is canonical equivalence, which the encoding does not share).
    package static func identical(_ a: PlistValue, _ b: PlistValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.real(let x), .real(let y)): return x.bitPattern == y.bitPattern
        case (.date(let x), .date(let y)): return x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
        case (.array(let x), .array(let y)), (.set(let x), .set(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case (.dict(let x), .dict(let y)):
            guard x.count == y.count else { return false }
            for (key, value) in x {
                guard let other = y.index(forKey: key), y[other].key.utf8.elementsEqual(key.utf8),
                    identical(value, y[other].value)
                else { return false }
            }
            return true
        default: return a == b
        }
    }

    /// Roughly what `value` adds to a binary plist, to choose between forms of an edit.
    static func cost(_ value: PlistValue) -> Int {
        switch value {
        case .bool: return 2
        case .int(let i): return i >= 0 && i < 256 ? 3 : 6
        case .uint: return 18
        case .real, .date: return 10
        case .uid: return 3
        case .data(let d): return d.count + 3
        case .string(let s): return s.utf8.count + 3
        case .array(let a), .set(let a): return a.reduce(3) { $0 + cost($1) + 1 }
        case .dict(let d): return d.reduce(3) { $0 + $1.key.utf8.count + 3 + cost($1.value) + 2 }
        }
    }

    // MARK: Apply

    /// `source` with `edit` applied. Throws when the edit is malformed or does not fit the value
    /// (a wrong type, an index past the end); never traps, whatever the input.
    package static func apply(_ edit: PlistValue, to source: PlistValue) throws(Failure) -> PlistValue {
        try apply(edit, source, depth: 0)
    }

    private static func apply(_ edit: PlistValue, _ source: PlistValue, depth: Int) throws(Failure) -> PlistValue {
        guard depth < maxDepth else { throw Failure("edits nest deeper than \(maxDepth)") }
        guard case .dict(let e) = edit, !e.isEmpty else { throw Failure("an edit is a \(edit.typeName), not a dictionary of one form") }
        if let value = e["v"] {
            guard e.count == 1 else { throw Failure("a replacement has other keys") }
            return value
        }
        if e["d"] != nil || e["x"] != nil {
            guard case .dict(var d) = source else { throw Failure("a dictionary edit applied to a \(source.typeName)") }
            if let removed = e["x"] {
                guard case .array(let keys) = removed else { throw Failure("removed keys are not an array") }
                for key in keys {
                    guard let k = key.stringValue, d.removeValue(forKey: k) != nil else { throw Failure("a removed key is not in the dictionary") }
                }
            }
            if let edits = e["d"] {
                guard case .dict(let changes) = edits else { throw Failure("dictionary edits are not a dictionary") }
                for (key, change) in changes {
                    if let old = d[key] {
                        d[key] = try apply(change, old, depth: depth + 1)
                    } else {
                        guard case .dict(let c) = change, c.count == 1, let value = c["v"] else {
                            throw Failure("an edit of key \"\(key)\", which the dictionary lacks")
                        }
                        d[key] = value
                    }
                }
            }
            guard e.count == (e["d"] == nil ? 0 : 1) + (e["x"] == nil ? 0 : 1) else { throw Failure("a dictionary edit has other keys") }
            return .dict(d)
        }
        guard e.count == 1, let (form, body) = e.first else { throw Failure("an edit has several forms") }
        switch form {
        case "a":
            guard case .array(let source) = source else { throw Failure("an array edit applied to a \(source.typeName)") }
            guard case .array(let ops) = body else { throw Failure("array ops are not an array") }
            var out: [PlistValue] = []
            var i = 0
            for op in ops {
                switch op {
                case .int(let n) where n > 0:
                    guard n <= Int64(source.count - i) else { throw Failure("an array edit copies past the end") }
                    out.append(contentsOf: source[i..<(i + Int(n))])
                    i += Int(n)
                case .int(let n) where n < 0:
                    guard n >= -Int64(source.count - i) else { throw Failure("an array edit skips past the end") }
                    i -= Int(n)
                case .array(let values):
                    out.append(contentsOf: values)
                case .dict:
                    guard i < source.count else { throw Failure("an array edit edits past the end") }
                    out.append(try apply(op, source[i], depth: depth + 1))
                    i += 1
                default:
                    throw Failure("an array op is a \(op.typeName)")
                }
            }
            out.append(contentsOf: source[i...])
            return .array(out)
        case "s":
            guard case .string(let s) = source else { throw Failure("a string edit applied to a \(source.typeName)") }
            guard case .array(let parts) = body, parts.count == 3, let middle = parts[2].stringValue else { throw Failure("a malformed string edit") }
            let scalars = Array(s.unicodeScalars)
            let (p, q) = try ends(parts, count: scalars.count)
            var out = String.UnicodeScalarView()
            out.append(contentsOf: scalars[0..<p])
            out.append(contentsOf: middle.unicodeScalars)
            out.append(contentsOf: scalars[(scalars.count - q)...])
            return .string(String(out))
        case "b":
            guard case .data(let data) = source else { throw Failure("a data edit applied to a \(source.typeName)") }
            guard case .array(let parts) = body, parts.count == 3, let middle = parts[2].dataValue else { throw Failure("a malformed data edit") }
            let bytes = [UInt8](data)
            let (p, q) = try ends(parts, count: bytes.count)
            return .data(Data(bytes[0..<p] + middle + bytes[(bytes.count - q)...]))
        case "p":
            guard case .data(let data) = source else { throw Failure("a nested plist edit applied to a \(source.typeName)") }
            let inner: PlistValue
            do { inner = try BinaryPlist.decode([UInt8](data)) } catch { throw Failure("the data is not a binary plist: \(error)") }
            return .data(Data(BinaryPlist.encode(try apply(body, inner, depth: depth + 1))))
        default:
            throw Failure("an edit of unknown form \"\(form)\"")
        }
    }

    /// The prefix and suffix counts of a splice, checked against the source's length.
    private static func ends(_ parts: [PlistValue], count: Int) throws(Failure) -> (Int, Int) {
        guard case .int(let p) = parts[0], case .int(let q) = parts[1], p >= 0, q >= 0, p <= Int64(count), q <= Int64(count) - p else {
            throw Failure("a splice keeps more than the source has")
        }
        return (Int(p), Int(q))
    }
}
