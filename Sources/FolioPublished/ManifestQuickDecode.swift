import FolioPlist

extension Manifest {
    /// The manifest in binary plist `bytes` read without building the entries as a
    /// ``PlistValue`` tree first: the top dictionary is decoded as ``init(bytes:)`` decodes it,
    /// with an empty entries array, and each entry's values are read from the file in place
    /// and checked by the same code (``Entry/init(at:_:)``). Nil for anything else (a signed
    /// manifest, another format, an unknown or repeated key, any error): the caller reads it
    /// with ``init(bytes:)``, which gives the same manifest or the error. Tests compare both.
    package static func quicklyDecoded(_ bytes: [UInt8]) -> Manifest? {
        guard bytes.starts(with: Array("bplist00".utf8)) else { return nil }
        let found = try? BinaryPlistView.with(bytes) { (v: inout BinaryPlistView) throws(PlistError) -> Manifest? in
            guard try v.kind(v.top) == .dictionary else { return nil }
            var root: [String: PlistValue] = [:]
            var entriesRef: Int?
            for pair in try v.pairs(v.top) {
                guard try v.kind(pair.key) == .string else { return nil }
                let key = try v.string(pair.key)
                guard root[key] == nil else { return nil }
                if key == "entries" {
                    entriesRef = pair.value
                    root[key] = .array([])
                } else {
                    root[key] = try v.decode(pair.value)
                }
            }
            guard let entriesRef, try v.kind(entriesRef) == .array, var m = try? Manifest(plist: .dict(root)) else { return nil }
            let elements = try v.elements(entriesRef)
            var entries: [Entry] = []
            entries.reserveCapacity(elements.count)
            var fields = [PlistValue?](repeating: nil, count: entryKeys.count)
            for element in elements {
                guard try v.kind(element) == .dictionary else { return nil }
                for i in fields.indices { fields[i] = nil }
                for pair in try v.pairs(element) {
                    guard let key = try v.asciiBytes(pair.key), let i = Self.entryKeyIndex(key), fields[i] == nil else { return nil }
                    fields[i] = try v.decode(pair.value)
                }
                guard let entry = try? Entry(at: "", { key in Self.entryKeyIndex(key).flatMap { fields[$0] } }) else { return nil }
                entries.append(entry)
            }
            entries.sort { $0.path < $1.path }
            for i in entries.indices.dropFirst() where entries[i].path == entries[i - 1].path { return nil }
            m.entries = entries
            return m
        }
        return found ?? nil
    }

    /// The position in ``entryKeys`` of an entry key given as its ASCII bytes.
    private static func entryKeyIndex(_ key: UnsafeRawBufferPointer) -> Int? {
        for (i, name) in entryKeyBytes.enumerated() where name.count == key.count && name.elementsEqual(key) { return i }
        return nil
    }

    private static func entryKeyIndex(_ key: String) -> Int? { entryKeys.firstIndex(of: key) }

    private static let entryKeyBytes = entryKeys.map { Array($0.utf8) }
}
