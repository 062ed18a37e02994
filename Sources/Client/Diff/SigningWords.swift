import FolioPlist

/// Changes of signature in words, from two ``SignedManifest/summary`` values (nil: unsigned).
enum SigningWords {
    static func describe(_ old: PlistValue?, _ new: PlistValue?) -> [String] {
        switch (old, new) {
        case (nil, nil): return []
        case (nil, let n?): return ["now signed by \(signers(n)) (root \(root(n)))"]
        case (let o?, nil): return ["no longer signed (was signed by \(signers(o)))"]
        case (let o?, let n?): return o == n ? [] : both(o, n)
        }
    }

    static func both(_ o: PlistValue, _ n: PlistValue) -> [String] {
        var out: [String] = []
        if signers(o) != signers(n) { out.append("signed by another key: \(signers(o)) → \(signers(n))") }
        let (ok, nk) = (keys(o), keys(n))
        if ok != nk {
            let added = nk.filter { !ok.contains($0) }
            let removed = ok.filter { !nk.contains($0) }
            var parts: [String] = []
            if !added.isEmpty { parts.append("added " + added.joined(separator: ", ")) }
            if !removed.isEmpty { parts.append("removed " + removed.joined(separator: ", ")) }
            out.append("key list changed: " + (parts.isEmpty ? "reordered" : parts.joined(separator: "; ")))
        }
        for (field, label) in [("version", "key list version"), ("root", "key list root"), ("threshold", "signatures required"), ("expiresAt", "key list expires")] {
            let (x, y) = (o["keyList"]?[field], n["keyList"]?[field])
            if x != y { out.append("\(label): \(ValueText.short(x)) → \(ValueText.short(y))") }
        }
        return out.isEmpty ? ["signature changed"] : out
    }

    static func signers(_ v: PlistValue) -> String {
        let ids = v["signedBy"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return ids.isEmpty ? "no key" : (ids.count == 1 ? "key " : "keys ") + ids.joined(separator: ", ")
    }

    static func keys(_ v: PlistValue) -> [String] { v["keyList"]?["keys"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    static func root(_ v: PlistValue) -> String { v["keyList"]?["root"]?.stringValue ?? "unknown" }
}
