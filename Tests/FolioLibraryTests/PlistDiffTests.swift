import FolioPlist
import FolioTestSupport
import Foundation
import Testing

/// The structural diff behind `folio diff`: array alignment (LCS, keyed, moves) and changes
/// that, applied to the old value, give the new one.
@Suite("PlistDiff and ArrayAlignment")
struct PlistDiffTests {
    static func strings(_ s: [String]) -> PlistValue { .array(s.map(PlistValue.string)) }
    static func item(_ id: Int, _ title: String) -> PlistValue { .dict(["id": .int(Int64(id)), "title": .string(title)]) }

    /// The changes, checked to turn `a` into `b`.
    func diff(_ a: PlistValue, _ b: PlistValue) throws -> [PlistChange] {
        let changes = PlistDiff(a, b).changes
        #expect(try PlistChangeApplier.apply(changes, to: a) == b, "\(changes)")
        return changes
    }

    @Test("removing one locale is one removal, not a change of every later item")
    func removeOne() throws {
        let changes = try diff(.dict(["locales": Self.strings(["en", "cy", "de", "fr"])]), .dict(["locales": Self.strings(["en", "de", "fr"])]))
        #expect(changes == [PlistChange(.remove, [.key("locales"), .index(1)], old: .string("cy"), index: 1)])
        #expect(changes.first?.pathText == "locales[1]")
    }

    @Test("an insertion is one insertion; a changed item is one change in place")
    func insertAndChange() throws {
        let ins = try diff(Self.strings(["a", "b", "c"]), Self.strings(["a", "x", "b", "c"]))
        #expect(ins == [PlistChange(.add, [.index(1)], new: .string("x"), index: 1)])
        let change = try diff(Self.strings(["a", "b", "c"]), Self.strings(["a", "B", "c"]))
        #expect(change == [PlistChange(.change, [.index(1)], old: .string("b"), new: .string("B"))])
    }

    @Test("an unkeyed item that moves is one move")
    func unkeyedMove() throws {
        let changes = try diff(Self.strings(["a", "b", "c", "d"]), Self.strings(["b", "c", "d", "a"]))
        #expect(changes == [PlistChange(.move, [.index(3)], from: 0, to: 3)])
    }

    @Test("dictionaries with an id are matched by it: moves, and changes under [id=N]")
    func keyed() throws {
        let old: PlistValue = .array([Self.item(1, "one"), Self.item(2, "two"), Self.item(3, "three"), Self.item(42, "answer")])
        let new: PlistValue = .array([Self.item(42, "Answer"), Self.item(1, "one"), Self.item(3, "three"), Self.item(4, "four")])
        #expect(ArrayAlignment.commonKey(old.arrayValue!, new.arrayValue!) == "id")
        let changes = try diff(old, new)
        #expect(changes.map(\.op) == [.remove, .add, .move, .change], "\(changes)")
        #expect(changes.map(\.pathText) == ["[id=2]", "[id=4]", "[id=42]", "[id=42].title"])
        #expect(changes[2].from == 3 && changes[2].to == 0)
        #expect(changes[3].old == .string("answer") && changes[3].new == .string("Answer"))
    }

    @Test("the key is the first field all items carry with unique values")
    func keyChoice() {
        let dup: [PlistValue] = [.dict(["id": .int(1), "name": .string("a")]), .dict(["id": .int(1), "name": .string("b")])]
        #expect(ArrayAlignment.commonKey(dup, dup) == "name")
        let mixed: [PlistValue] = [.dict(["id": .int(1)]), .string("x")]
        #expect(ArrayAlignment.commonKey(mixed, mixed) == nil)
    }

    @Test("a longest increasing run keeps the most items in place")
    func increasingRun() {
        #expect(ArrayAlignment.longestIncreasingRun([3, 0, 1, 2]) == [1, 2, 3])
        #expect(ArrayAlignment.longestIncreasingRun([]) == [])
    }

    @Test("past the cell limit arrays are aligned greedily, still exactly, in linear time")
    func largeArrays() throws {
        let a = (0..<5000).map { PlistValue.int(Int64($0)) }
        var b = a
        b.remove(at: 10)
        b.insert(.int(-1), at: 4000)
        b.swapAt(100, 200)
        let clock = ContinuousClock()
        let start = clock.now
        let d = PlistDiff(.array(a), .array(b))
        #expect(clock.now - start < .seconds(2))
        #expect(d.approximateArrays == 1)
        #expect(try PlistChangeApplier.apply(d.changes, to: .array(a)) == .array(b))
        #expect(d.changes.count <= 8, "\(d.changes.count) changes")
    }

    @Test("random edits of random trees: the changes applied give the new tree", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomTrees(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let a = RandomTree.make(&rng, depth: 3)
            var b = a
            for _ in 0..<rng.int(1...4) { b = RandomTree.edit(b, &rng) }
            _ = try diff(a, b)
        }
    }
}

/// Random property lists and random edits of them, for ``PlistDiffTests``.
enum RandomTree {
    static func make(_ rng: inout SplitMix64, depth: Int) -> PlistValue {
        switch depth <= 0 ? rng.int(0...2) : rng.int(0...5) {
        case 0: return .string(rng.pick(["a", "b", "c", "d", "e"]))
        case 1: return .int(Int64(rng.int(0...5)))
        case 2: return .bool(rng.chance(0.5))
        case 3: return .array((0..<rng.int(0...6)).map { _ in make(&rng, depth: depth - 1) })
        case 4: return .array((0..<rng.int(1...5)).map { i in .dict(["id": .int(Int64(i)), "v": make(&rng, depth: depth - 2)]) })
        default: return .dict(Dictionary(uniqueKeysWithValues: (0..<rng.int(0...4)).map { ("k\($0)", make(&rng, depth: depth - 1)) }))
        }
    }

    static func edit(_ v: PlistValue, _ rng: inout SplitMix64) -> PlistValue {
        switch v {
        case .array(var a) where !a.isEmpty && rng.chance(0.6):
            let i = rng.int(0...(a.count - 1))
            switch rng.int(0...3) {
            case 0: a.remove(at: i)
            case 1: a.insert(a[i].isKeyedItem ? .dict(["id": .int(Int64(100 + rng.int(0...99))), "v": .string("n")]) : make(&rng, depth: 1), at: i)
            case 2: a.append(a.remove(at: i))
            default: a[i] = edit(a[i], &rng)
            }
            return .array(a.uniqueIDs)
        case .dict(var d) where !d.isEmpty && rng.chance(0.6):
            let key = rng.pick(d.keys.sorted())
            switch rng.int(0...2) {
            case 0: d[key] = nil
            case 1: d["n\(rng.int(0...9))"] = make(&rng, depth: 1)
            default: d[key] = edit(d[key]!, &rng)
            }
            return .dict(d)
        default:
            return make(&rng, depth: 2)
        }
    }
}

extension PlistValue {
    fileprivate var isKeyedItem: Bool { self["id"] != nil }
}

extension Array where Element == PlistValue {
    /// Drops items whose id repeats an earlier one's (an edit may insert a taken id).
    fileprivate var uniqueIDs: [PlistValue] {
        var seen = Set<PlistValue>()
        return filter { item in item["id"].map { seen.insert($0).inserted } ?? true }
    }
}
