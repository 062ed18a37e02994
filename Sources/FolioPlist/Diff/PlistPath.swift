/// One step of a path into a property list: a dictionary key, an array index, or the array
/// item whose `key` field holds `value` (`entries[id=42]`).
package enum PlistPathComponent: Sendable, Hashable {
    case key(String)
    case index(Int)
    case match(key: String, value: PlistValue)

    /// The step as people read it: `.title`, `[3]`, `[id=42]`.
    package var text: String {
        switch self {
        case .key(let k): return k.isEmpty || k.contains(where: { ".[]= ".contains($0) }) ? "[\(String(reflecting: k))]" : "." + k
        case .index(let i): return "[\(i)]"
        case .match(let key, let value): return "[\(key)=\(PlistPathComponent.scalarText(value))]"
        }
    }

    static func scalarText(_ v: PlistValue) -> String {
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        default: return "\(v)"
        }
    }

    /// A whole path as people read it: `entries[id=42].title` (`(root)` for the empty path).
    package static func text(_ path: [PlistPathComponent]) -> String {
        var s = path.map(\.text).joined()
        if s.hasPrefix(".") { s.removeFirst() }
        return s.isEmpty ? "(root)" : s
    }
}
