extension Manifest {
    /// How many files under `objects/` the `manifests` name together: each object once per
    /// extension, and each variant an entry gives it (a deploy's summary counts them).
    ///
    /// The entries are sorted by the first 8 characters of their digest, and only those that
    /// share them are told apart exactly: hashing every entry's strings into a set took an
    /// edge 8 ms at 10,000 entries, on the deploy's critical path.
    package static func objectFiles(_ manifests: some Sequence<Manifest>) -> Int {
        let lists = manifests.flatMap { [$0.entries] + $0.releases.map(\.entries) }
        var keys: [(prefix: UInt64, list: Int, index: Int)] = []
        keys.reserveCapacity(lists.reduce(0) { $0 + $1.count })
        for (l, list) in lists.enumerated() {
            for i in list.indices { keys.append((digestPrefix(list[i].sha256), l, i)) }
        }
        keys.sort { $0.prefix < $1.prefix }
        var count = 0
        var start = 0
        while start < keys.count {
            var end = start + 1
            while end < keys.count, keys[end].prefix == keys[start].prefix { end += 1 }
            if end - start == 1 {
                let entry = lists[keys[start].list][keys[start].index]
                count += 1 + (entry.gzipSize == nil ? 0 : 1) + (entry.brSize == nil ? 0 : 1)
            } else {
                var files = Set<ObjectFile>()
                for key in keys[start..<end] { files.formUnion(ObjectFile.all(of: lists[key.list][key.index])) }
                count += files.count
            }
            start = end
        }
        return count
    }

    /// The first 8 bytes of a digest's hex form, as one number.
    private static func digestPrefix(_ sha256: String) -> UInt64 {
        var sha256 = sha256
        return sha256.withUTF8 { utf8 in utf8.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }
    }
}

/// An object file: its object's digest and extension, and which variant (identity 0, gzip 1,
/// brotli 2).
private struct ObjectFile: Hashable {
    let sha256: String
    let ext: String
    let variant: UInt8

    /// The files an entry names.
    static func all(of entry: Manifest.Entry) -> [ObjectFile] {
        let ext = entry.objectExtension
        return [(0, true), (1, entry.gzipSize != nil), (2, entry.brSize != nil)].filter(\.1).map {
            ObjectFile(sha256: entry.sha256, ext: ext, variant: $0.0)
        }
    }
}
