import Foundation
import FolioPublished
import FolioSupport
import FolioTestSupport
import Testing

@testable import FolioPlist

/// A few random changes to a value, of the kinds an edit of content makes: a string or number
/// changed, an element or key added or removed, a subtree replaced.
private func mutate(_ value: PlistValue, _ g: inout ValueGenerator, depth: Int = 0) -> PlistValue {
    switch value {
    case .array(var a):
        if !a.isEmpty, g.rng.chance(0.6) {
            let i = g.rng.int(0...(a.count - 1))
            a[i] = mutate(a[i], &g, depth: depth + 1)
        }
        if g.rng.chance(0.3) { a.insert(g.value(depth: depth + 1), at: g.rng.int(0...a.count)) }
        if !a.isEmpty, g.rng.chance(0.3) { a.remove(at: g.rng.int(0...(a.count - 1))) }
        return .array(a)
    case .dict(var d):
        if let key = d.keys.sorted().first, g.rng.chance(0.6) { d[key] = mutate(d[key]!, &g, depth: depth + 1) }
        if g.rng.chance(0.3) { d[g.string()] = g.value(depth: depth + 1) }
        if let key = d.keys.sorted().last, g.rng.chance(0.3) { d.removeValue(forKey: key) }
        return .dict(d)
    case .string(let s):
        return g.rng.chance(0.5) ? .string(s + g.string()) : .string(g.string() + String(s.dropFirst()))
    default:
        return g.rng.chance(0.5) ? g.scalar() : g.value(depth: depth)
    }
}

@Suite("deltas")
struct DeltaTests {
    @Test("800 seeded random pairs: the edit rebuilds the target exactly, and none is made between equal values")
    func randomPairs() throws {
        var g = ValueGenerator(seed: 0xDE17_A5ED, options: GeneratorOptions(sets: false, maxDepth: 4))
        for i in 0..<800 {
            let a = g.value()
            let b = i % 4 == 0 ? g.value() : mutate(a, &g)
            #expect(PlistPatch.diff(a, a) == nil)
            guard let edit = PlistPatch.diff(a, b) else {
                #expect(identical(a, b), "pair \(i): no edit for different values")
                continue
            }
            let rebuilt = try PlistPatch.apply(edit, to: a)
            #expect(identical(rebuilt, b), "pair \(i): \(a) with \(edit) gave \(rebuilt), not \(b)")
            // And as encoded bytes: the writer gives the target's bytes again.
            #expect(BinaryPlist.encode(rebuilt) == BinaryPlist.encode(b))
        }
    }

    @Test("a changed line in a long list is an edit of a few dozen bytes; the encoding's delta is not")
    func smallEdits() throws {
        let lines = (1...2000).map { PlistValue.string("line \($0) of a long poem, with some words in it") }
        var changed = lines
        changed[1234] = .string("line 1235 of a long poem, with other words in it")
        changed.insert(.string("a new line"), at: 100)
        let a = PlistValue.dict(["lines": .array(lines), "title": .string("T")])
        let b = PlistValue.dict(["lines": .array(changed), "title": .string("T")])
        let source = BinaryPlist.encode(a)
        let target = BinaryPlist.encode(b)
        let edit = try #require(DeltaBundle.edit(from: source, to: target))
        #expect(BinaryPlist.encode(edit).count < 160, "\(edit)")
        #expect(try DeltaBundle.apply(edit, to: source) == target)
    }

    @Test("long arrays that differ throughout, and long insertions, still give exact edits")
    func longArrays() throws {
        let x = PlistValue.array((0..<3000).map { .string("old \($0)") })
        let y = PlistValue.array((0..<2001).map { .string("new \($0)") })  // 5,001 elements: not aligned
        let edit = try #require(PlistPatch.diff(x, y))
        #expect(BinaryPlist.encode(try PlistPatch.apply(edit, to: x)) == BinaryPlist.encode(y))
        // 20,000 elements inserted at the front and the back of a kept middle.
        let middle = (0..<50).map { PlistValue.string("kept \($0)") }
        let grown = PlistValue.array((0..<10_000).map { .int(Int64($0)) } + middle + (0..<10_000).map { .int(Int64(-$0 - 1)) })
        let grow = try #require(PlistPatch.diff(.array(middle), grown))
        #expect(BinaryPlist.encode(try PlistPatch.apply(grow, to: .array(middle))) == BinaryPlist.encode(grown))
    }

    @Test("a binary plist inside data (a signed manifest's) is edited as a value")
    func nestedPlist() throws {
        let inner1 = PlistValue.dict(["version": .int(1), "entries": .array((0..<100).map { .string("entry \($0)") })])
        let inner2 = PlistValue.dict(["version": .int(2), "entries": .array((0..<100).map { .string($0 == 50 ? "changed" : "entry \($0)") })])
        let a = PlistValue.dict(["manifest": .data(Data(BinaryPlist.encode(inner1))), "signature": .data(Data(repeating: 1, count: 64))])
        let b = PlistValue.dict(["manifest": .data(Data(BinaryPlist.encode(inner2))), "signature": .data(Data(repeating: 2, count: 64))])
        let edit = try #require(PlistPatch.diff(a, b))
        #expect(edit["d"]?["manifest"]?["p"] != nil, "\(edit)")
        #expect(identical(try PlistPatch.apply(edit, to: a), b))
    }

    @Test("strings are compared by their bytes: canonically equivalent spellings still get an edit")
    func canonicalEquivalence() throws {
        let a = PlistValue.array([.string("caf\u{E9}"), .string("x")])
        let b = PlistValue.array([.string("cafe\u{301}"), .string("x")])
        #expect(a == b)  // Swift's String ==
        let edit = try #require(PlistPatch.diff(a, b))
        let rebuilt = try PlistPatch.apply(edit, to: a)
        #expect(BinaryPlist.encode(rebuilt) == BinaryPlist.encode(b))
        #expect(BinaryPlist.encode(rebuilt) != BinaryPlist.encode(a))
    }

    @Test("malformed edits and edits of the wrong value are refused with a reason, never a trap")
    func malformedEdits() {
        let source = PlistValue.dict(["a": .array([.int(1), .int(2)]), "s": .string("héllo"), "d": .data(Data([1, 2, 3]))])
        let bad: [PlistValue] = [
            .int(3), .dict([:]), .dict(["v": .int(1), "x": .array([])]), .dict(["q": .int(1)]),
            .dict(["x": .array([.string("missing")])]), .dict(["x": .string("a")]),
            .dict(["d": .dict(["new": .dict(["s": .array([.int(0), .int(0), .string("")])])])]),
            .dict(["d": .dict(["a": .dict(["a": .array([.int(3)])])])]),
            .dict(["d": .dict(["a": .dict(["a": .array([.int(-3)])])])]),
            .dict(["d": .dict(["a": .dict(["a": .array([.int(2), .dict(["v": .int(0)])])])])]),
            .dict(["d": .dict(["a": .dict(["a": .array([.string("op")])])])]),
            .dict(["d": .dict(["a": .dict(["a": .array([.int(Int64.min)])])])]),
            .dict(["d": .dict(["a": .dict(["a": .array([.int(Int64.max)])])])]),
            .dict(["d": .dict(["s": .dict(["s": .array([.int(4), .int(2), .string("")])])])]),
            .dict(["d": .dict(["s": .dict(["s": .array([.int(-1), .int(0), .string("")])])])]),
            .dict(["d": .dict(["s": .dict(["s": .array([.int(0), .int(0)])])])]),
            .dict(["d": .dict(["s": .dict(["a": .array([])])])]),
            .dict(["d": .dict(["d": .dict(["b": .array([.int(2), .int(2), .data(Data())])])])]),
            .dict(["d": .dict(["d": .dict(["p": .dict(["v": .int(1)])])])]),
            .dict(["d": .dict(["a": .dict(["d": .dict([:])])])]),
        ]
        for (i, edit) in bad.enumerated() {
            #expect(throws: PlistPatch.Failure.self, "edit \(i): \(edit)") { try PlistPatch.apply(edit, to: source) }
        }
        // Nesting deeper than the readers allow.
        var deep = PlistValue.dict(["v": .int(0)])
        var value = PlistValue.int(0)
        for _ in 0..<(PlistPatch.maxDepth + 2) {
            deep = .dict(["a": .array([deep])])
            value = .array([value])
        }
        #expect(throws: PlistPatch.Failure.self) { try PlistPatch.apply(deep, to: value) }
    }

    @Test("2000 random edits applied to random values end in a value or a refusal")
    func randomEditsNeverTrap() {
        var g = ValueGenerator(seed: 0xBAD_ED17, options: GeneratorOptions(maxDepth: 4))
        var applied = 0
        for _ in 0..<2000 {
            let source = g.value()
            // Half real edits of another value, damaged; half arbitrary values.
            let edit = g.rng.chance(0.5) ? (PlistPatch.diff(g.value(), g.value()).map { mutate($0, &g) } ?? g.value()) : g.value()
            if (try? PlistPatch.apply(edit, to: source)) != nil { applied += 1 }
        }
        #expect(applied > 0)
    }

    @Test("head.plist round-trips, and a delta's file name gives back its pair")
    func headAndNames() throws {
        let sha1 = ContentHash.sha256Hex(Array("one".utf8))
        let sha2 = ContentHash.sha256Hex(Array("two".utf8))
        let head = DeltaHead(version: 12, sha256: sha2, size: 21_000, gzipSize: 12_000, deltaHistory: 10, deltasFrom: [11, 2, 5], waypoint: (2, sha1))
        let back = try DeltaHead(bytes: head.bytes)
        #expect(back == head)
        #expect(back.deltasFrom == [2, 5, 11])
        #expect(back.waypoint?.sha256 == sha1)
        #expect(head.bytes.count < 240)
        let name = String(PublishedLayout.delta(from: sha1, to: sha2).dropFirst("deltas/".count))
        #expect(PublishedLayout.deltaPair(ofFile: name)?.from == sha1)
        #expect(PublishedLayout.deltaPair(ofFile: name)?.to == sha2)
        #expect(PublishedLayout.deltaPair(ofFile: "x" + name.dropFirst()) == nil)
        #expect(PublishedLayout.deltaPair(ofFile: name + ".gz") == nil)
        #expect(throws: DeltaError.self) { try DeltaHead(bytes: Array("not a plist".utf8)) }
        #expect(throws: DeltaError.self) { try DeltaBundle(bytes: BinaryPlist.encode(.dict(["format": .int(2)]))) }
        #expect(ContentHash.bytes(hex: sha1).map { ContentHash.hex($0) } == sha1)
        #expect(ContentHash.bytes(hex: "abc") == nil)
        #expect(ContentHash.bytes(hex: "zz") == nil)
    }
}
