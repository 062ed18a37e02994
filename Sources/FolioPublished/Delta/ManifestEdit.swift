import FolioPlist
import Foundation

/// The edit of one `manifest.plist` into another (plain or signed), computed in place on the two
/// files (``BinaryPlistView``) instead of on their decoded values: the entries arrays are merged
/// by path, entries written byte for byte the same are copied, and only the others are decoded.
/// On a 20,000-entry manifest it takes a few milliseconds where decoding both and running
/// ``PlistPatch/diff(_:_:)`` took about 150.
///
/// The edit is right by construction, whatever the order of the entries: every element of the
/// source's array is copied (only when written the same as the target's), edited into the
/// target's, or skipped, and every element of the target's is copied, edited from the source's or
/// inserted, in order; everything else is the general diff of small decoded values. Applied to
/// the source's value it gives the target's value, which the deterministic writer that wrote the
/// target encodes to the target's bytes (the delta tests check this on generated manifests,
/// plain and signed, against the general path).
package enum ManifestEdit {
    /// A target entry that the source does not list as it is: new at its path, or changed.
    package struct Change: Sendable {
        package var target: Manifest.Entry
        /// The source's entry at the same path, if any.
        package var source: Manifest.Entry?

        package init(target: Manifest.Entry, source: Manifest.Entry?) {
            self.target = target
            self.source = source
        }
    }

    /// The edit and what it changes.
    package struct Outcome: Sendable {
        package var edit: PlistValue
        package var changes: [Change]
        /// The SHA-256s of changed target entries that some source entry has (a client that
        /// holds the source version holds those objects).
        package var held: Set<String>
        package var sourceHistory: String?
        package var targetHistory: String?

        package init(edit: PlistValue, changes: [Change], held: Set<String>, sourceHistory: String?, targetHistory: String?) {
            self.edit = edit
            self.changes = changes
            self.held = held
            self.sourceHistory = sourceHistory
            self.targetHistory = targetHistory
        }
    }

    /// The edit from the manifest file `source` to `target`; nil when they are equal, when
    /// either is not a manifest, or when anything in them is not as this writer writes it (the
    /// caller then uses the general path, ``DeltaBundle/edit(from:to:)``).
    ///
    /// With the two files' ``ManifestPrints``, entries whose prints are equal are copied without
    /// reading them; the edit is the same as without (prints that do not fit the files are not used).
    package static func make(from source: [UInt8], to target: [UInt8], prints: (source: ManifestPrints, target: ManifestPrints)? = nil) -> Outcome? {
        guard source != target else { return nil }
        var builder = Builder()
        builder.prints = prints
        let edit = try? BinaryPlistView.with(source) { (s: inout BinaryPlistView) throws(PlistError) -> PlistValue? in
            try BinaryPlistView.with(target) { (t: inout BinaryPlistView) throws(PlistError) -> PlistValue? in
                try builder.dictionary(&s, s.top, &t, t.top)
            }
        }
        guard let edit = edit ?? nil, builder.sawEntries, !builder.failed else { return nil }
        return Outcome(
            edit: edit, changes: builder.changes, held: builder.held, sourceHistory: builder.sourceHistory,
            targetHistory: builder.targetHistory)
    }

    private struct Builder {
        var changes: [Change] = []
        var held = Set<String>()
        var sourceHistory: String?
        var targetHistory: String?
        var sawEntries = false
        /// Set when something is not as expected; the outcome is dropped.
        var failed = false
        var prints: (source: ManifestPrints, target: ManifestPrints)?
        /// 0 in the files' top dictionaries, 1 in a signed manifest's inner manifest.
        var level = 0

        /// The edit of a dictionary: a manifest, or the envelope of a signed one.
        mutating func dictionary(_ s: inout BinaryPlistView, _ a: Int, _ t: inout BinaryPlistView, _ b: Int) throws(PlistError) -> PlistValue? {
            guard try s.kind(a) == .dictionary, try t.kind(b) == .dictionary else { failed = true; return nil }
            var sourceKeys: [String: Int] = [:]
            for pair in try s.pairs(a) {
                guard try s.asciiBytes(pair.key) != nil else { failed = true; return nil }
                sourceKeys[try s.string(pair.key)] = pair.value
            }
            var edits: [String: PlistValue] = [:]
            var seen = Set<String>()
            for pair in try t.pairs(b) {
                guard try t.asciiBytes(pair.key) != nil else { failed = true; return nil }
                let key = try t.string(pair.key)
                seen.insert(key)
                guard let old = sourceKeys[key] else {
                    edits[key] = .dict(["v": try t.decode(pair.value)])
                    continue
                }
                if let e = try value(key, &s, old, &t, pair.value) { edits[key] = e }
            }
            if sourceKeys["entries"] != nil, seen.contains("entries") {
                sourceHistory = try sourceKeys["history"].flatMap { r throws(PlistError) in try s.decode(r).stringValue }
                targetHistory = try t.value(b, forASCIIKey: "history").flatMap { r throws(PlistError) in try t.decode(r).stringValue }
            }
            let removed = sourceKeys.keys.filter { !seen.contains($0) }.sorted()
            guard !edits.isEmpty || !removed.isEmpty else { return nil }
            var d: [String: PlistValue] = [:]
            if !edits.isEmpty { d["d"] = .dict(edits) }
            if !removed.isEmpty { d["x"] = .array(removed.map { .string($0) }) }
            return .dict(d)
        }

        /// The edit of one value of a dictionary, by its key.
        mutating func value(_ key: String, _ s: inout BinaryPlistView, _ a: Int, _ t: inout BinaryPlistView, _ b: Int) throws(PlistError) -> PlistValue? {
            if key == "entries", try s.kind(a) == .array, try t.kind(b) == .array {
                sawEntries = true
                return try entries(&s, a, &t, b)
            }
            let (x, y) = (try s.decode(a), try t.decode(b))
            if key == "manifest", case .data(let inner) = x, case .data(let innerTarget) = y {
                return try signed(Array(inner), Array(innerTarget)) ?? PlistPatch.diff(x, y)
            }
            return PlistPatch.diff(x, y)
        }

        /// The edit of a signed manifest's inner manifest, as the general path writes it (`{p: edit}`).
        mutating func signed(_ x: [UInt8], _ y: [UInt8]) throws(PlistError) -> PlistValue? {
            guard x != y else { return nil }
            let magic = Array("bplist00".utf8)
            guard x.starts(with: magic), y.starts(with: magic) else { return nil }
            var inner: PlistValue?
            level += 1
            defer { level -= 1 }
            try BinaryPlistView.with(x) { (s: inout BinaryPlistView) throws(PlistError) in
                try BinaryPlistView.with(y) { (t: inout BinaryPlistView) throws(PlistError) in
                    inner = try dictionary(&s, s.top, &t, t.top)
                }
            }
            return inner.map { .dict(["p": $0]) }
        }

        /// The entries arrays merged by path.
        mutating func entries(_ s: inout BinaryPlistView, _ a: Int, _ t: inout BinaryPlistView, _ b: Int) throws(PlistError) -> PlistValue? {
            let (x, y) = (try s.elements(a), try t.elements(b))
            let known = prints.flatMap { p in
                p.source.fit(level: level, ref: a, count: x.count) && p.target.fit(level: level, ref: b, count: y.count) ? p : nil
            }
            var ops = PlistPatch.ArrayOps()
            var (i, j) = (0, 0)
            var changed = false
            while i < x.count || j < y.count {
                if let known, i < x.count, j < y.count, known.source.same(i, as: j, of: known.target) {
                    ops.copy(1)
                    (i, j) = (i + 1, j + 1)
                    continue
                }
                let step = try merge(&s, x, i, &t, y, j, into: &ops)
                (i, j, changed) = (i + step.i, j + step.j, changed || step.changed)
            }
            if changed { try markHeld(s, x, keys: known?.source.shaKeys) }
            return changed ? ops.finish() : nil
        }

        /// One step of the merge at source element `i` and target element `j`: how far each
        /// moves, and whether the step changes something.
        mutating func merge(
            _ s: inout BinaryPlistView, _ x: [Int], _ i: Int, _ t: inout BinaryPlistView, _ y: [Int], _ j: Int, into ops: inout PlistPatch.ArrayOps
        ) throws(PlistError) -> (i: Int, j: Int, changed: Bool) {
            let order = i == x.count ? 1 : j == y.count ? -1 : try Self.order(s, x[i], t, y[j])
            if order < 0 {
                ops.skip(1)
                return (1, 0, true)
            }
            if order > 0 {
                let new = try t.decode(y[j])
                ops.insert(new)
                note(new, old: nil)
                return (0, 1, true)
            }
            if try s.same(x[i], as: y[j], in: t) {
                ops.copy(1)
                return (1, 1, false)
            }
            let (old, new) = (try s.decode(x[i]), try t.decode(y[j]))
            PlistPatch.substitute(old, new, into: &ops, depth: 1)
            note(new, old: old)
            return (1, 1, true)
        }

        /// Records a changed target entry and the source's entry at its path.
        mutating func note(_ new: PlistValue, old: PlistValue?) {
            guard let entry = try? Manifest.Entry(plist: new, at: "entry") else { failed = true; return }
            let previous = old.flatMap { try? Manifest.Entry(plist: $0, at: "entry") }
            changes.append(Change(target: entry, source: previous))
        }

        /// Which changed entries' objects some source entry already has. With the source's
        /// ``ManifestPrints/shaKeys``, only the elements whose key matches are read.
        mutating func markHeld(_ s: BinaryPlistView, _ elements: [Int], keys: [UInt64]?) throws(PlistError) {
            let wanted = Set(changes.map(\.target.sha256)).map { (text: $0, bytes: Array($0.utf8)) }
            guard !wanted.isEmpty else { return }
            let wantedKeys = Set(wanted.map { $0.bytes.withUnsafeBytes(ManifestPrints.shaKey) })
            for (n, element) in elements.enumerated() where keys.map({ wantedKeys.contains($0[n]) }) ?? true {
                guard let ref = try s.value(element, forASCIIKey: "sha256"), let sha = try s.asciiBytes(ref) else { continue }
                for want in wanted where sha.elementsEqual(want.bytes) { held.insert(want.text) }
            }
        }

        /// How the paths of two entries compare: by bytes when both are ASCII (Swift's order
        /// there), as strings otherwise.
        static func order(_ s: BinaryPlistView, _ a: Int, _ t: BinaryPlistView, _ b: Int) throws(PlistError) -> Int {
            guard let pa = try s.value(a, forASCIIKey: "path"), let pb = try t.value(b, forASCIIKey: "path") else {
                throw PlistError(.badValue, "bplist: a manifest entry has no path", offset: 0)
            }
            if let x = try s.asciiBytes(pa), let y = try t.asciiBytes(pb) {
                let n = min(x.count, y.count)
                let c = n == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, n)
                return c != 0 ? (c < 0 ? -1 : 1) : (x.count == y.count ? 0 : (x.count < y.count ? -1 : 1))
            }
            let (x, y) = (try s.string(pa), try t.string(pb))
            return x == y ? 0 : (x < y ? -1 : 1)
        }
    }
}
