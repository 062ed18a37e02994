extension BinaryPlistView {
    /// Appends to `out` the written form of object `ref`: equal for two objects exactly when
    /// ``same(_:as:in:limit:)`` finds them the same. Scalars give their encoded bytes,
    /// collections their kind, count and elements (dictionaries their keys, then their values),
    /// each prefixed so that no form is the start of another. False, with `out` partly written,
    /// when the object is not one `same` can find the same: past `limit` objects or the readers'
    /// depth, or an object that is neither a scalar nor a collection.
    package func written(_ ref: Int, into out: inout [UInt8], limit: Int = 4096) throws(PlistError) -> Bool {
        var budget = limit
        return try written(ref, into: &out, depth: 0, budget: &budget)
    }

    private func written(_ ref: Int, into out: inout [UInt8], depth: Int, budget: inout Int) throws(PlistError) -> Bool {
        budget -= 1
        guard depth < BinaryPlist.maxDepth, budget >= 0 else { return false }
        if let bytes = try scalarBytes(ref) {
            out.append(0)
            Self.append(bytes.count, to: &out)
            out.append(contentsOf: bytes)
            return true
        }
        guard let collection = try layout(ref) else { return false }
        out.append(1)
        out.append(collection.marker)
        Self.append(collection.count, to: &out)
        let refs = collection.marker == 0xD ? 2 * collection.count : collection.count
        for i in 0..<refs {
            let element = try reader.ref(collection.start + i * reader.refSize)
            guard try written(element, into: &out, depth: depth + 1, budget: &budget) else { return false }
        }
        return true
    }

    private static func append(_ n: Int, to out: inout [UInt8]) {
        withUnsafeBytes(of: UInt64(n).littleEndian) { out.append(contentsOf: $0) }
    }
}
