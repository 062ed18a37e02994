/// The differences between two property lists as a list of ``PlistChange``s: dictionaries by
/// key, arrays aligned by ``ArrayAlignment``. Applying the changes in order to the old value
/// gives the new one.
package struct PlistDiff: Sendable {
    /// The changes, in order (at most `limit`).
    package private(set) var changes: [PlistChange] = []
    /// Whether changes were left out past `limit`.
    package private(set) var truncated = false
    /// Arrays too long to align exactly (see ``ArrayAlignment/cellLimit``).
    package private(set) var approximateArrays = 0
    package let limit: Int

    /// The changes that turn `old` into `new`, at most `limit` of them.
    package init(_ old: PlistValue, _ new: PlistValue, limit: Int = .max) {
        self.limit = limit
        walk(old, new, [])
    }

    mutating func record(_ change: PlistChange) {
        guard changes.count < limit else {
            truncated = true
            return
        }
        changes.append(change)
    }

    mutating func walk(_ a: PlistValue, _ b: PlistValue, _ path: [PlistPathComponent]) {
        guard a != b, !truncated else { return }
        switch (a, b) {
        case (.dict(let x), .dict(let y)): walkDict(x, y, path)
        case (.array(let x), .array(let y)), (.set(let x), .set(let y)): walkArray(x, y, path)
        default: record(PlistChange(.change, path, old: a, new: b))
        }
    }

    mutating func walkDict(_ x: [String: PlistValue], _ y: [String: PlistValue], _ path: [PlistPathComponent]) {
        for key in Set(x.keys).union(y.keys).sorted() {
            switch (x[key], y[key]) {
            case (let old?, let new?): walk(old, new, path + [.key(key)])
            case (let old?, nil): record(PlistChange(.remove, path + [.key(key)], old: old))
            case (nil, let new?): record(PlistChange(.add, path + [.key(key)], new: new))
            default: break
            }
        }
    }

    mutating func walkArray(_ x: [PlistValue], _ y: [PlistValue], _ path: [PlistPathComponent]) {
        let al = ArrayAlignment.align(x, y)
        if al.approximate { approximateArrays += 1 }
        func item(_ v: PlistValue, _ index: Int) -> PlistPathComponent {
            al.key.map { .match(key: $0, value: v[$0]!) } ?? .index(index)
        }
        for i in al.removed { record(PlistChange(.remove, path + [item(x[i], i)], old: x[i], index: i)) }
        for j in al.added { record(PlistChange(.add, path + [item(y[j], j)], new: y[j], index: j)) }
        for m in al.moved { record(PlistChange(.move, path + [item(y[m.new], m.new)], from: m.old, to: m.new)) }
        for m in al.kept + (al.key == nil ? [] : al.moved) {
            walk(x[m.old], y[m.new], path + [item(y[m.new], m.new)])
        }
    }
}
