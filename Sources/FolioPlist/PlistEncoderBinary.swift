import Foundation

extension BinaryPlist {
    /// Writes what a ``PlistEncoder`` recorded straight to bplist00, visiting objects in the
    /// order ``encode(_:)`` visits the equivalent ``PlistValue`` (dictionary keys sorted the same
    /// way, later duplicate keys replacing earlier values), so the bytes are identical.
    static func encode(_ storage: PlistEncodingStorage) -> [UInt8] {
        // Room for everything up front: no regrowth of the output or the string table.
        var bytes = 64
        for s in storage.strings { bytes &+= s.utf8.count &* 2 &+ 9 }
        var writer = Writer(expectedObjects: storage.nodes.count, expectedBytes: bytes)
        var scratch: [DictEntry] = []
        var table = ArenaStringTable(capacity: storage.strings.count)
        storage.nodes.withUnsafeBufferPointer { nodes in
            storage.strings.withUnsafeBufferPointer { strings in
                _ = writer.flatten(nodes, 0, strings, storage.datas, &table, &scratch)
            }
        }
        return writer.serialise()
    }

    /// The writer's string interning for an encoder's arena: strings are named by their index in
    /// the arena, so the table holds integers only (no string copies, no growth: the arena's
    /// string count bounds it). Same result as ``StringTable``: one object per distinct UTF-8.
    struct ArenaStringTable {
        struct Slot {
            var hash: UInt64 = 0
            var object: Int32 = -1
            var string: Int32 = 0
        }
        var slots: [Slot]
        let mask: Int
        static let seed = UInt64.random(in: 1...UInt64.max)

        init(capacity: Int) {
            var size = 16
            while size < capacity * 2 { size *= 2 }
            slots = [Slot](repeating: Slot(), count: size)
            mask = size - 1
        }
    }

    /// One dictionary entry being ordered: its key's ASCII prefix (see ``asciiPrefix(_:)``),
    /// the key's index in the storage's strings, and the value's node.
    struct DictEntry {
        var hi: UInt64
        var lo: UInt64
        var key: Int32
        var node: Int32
    }
}

extension BinaryPlist.Writer {
    init(expectedObjects: Int, expectedBytes: Int) {
        self.init()
        out.reserveCapacity(expectedBytes + expectedObjects * 12)
        offsets.reserveCapacity(expectedObjects)
        refs.reserveCapacity(expectedObjects * 2)
    }

    /// ``flatten(_:)`` for the arena's node `n`.
    mutating func flatten(
        _ nodes: UnsafeBufferPointer<PlistEncodingStorage.Node>, _ n: Int, _ strings: UnsafeBufferPointer<String>,
        _ datas: [Data], _ table: inout BinaryPlist.ArenaStringTable, _ scratch: inout [BinaryPlist.DictEntry]
    ) -> Int {
        let node = nodes[n]
        switch node.kind {
        case .array:
            let index = offsets.count
            offsets.append(0)
            let start = refs.count
            let count = Int(node.count)
            collections.append(BinaryPlist.PendingCollection(index: index, marker: 0xA, refStart: start, count: count))
            refs.append(contentsOf: repeatElement(0, count: count))
            var c = Int(node.first)
            var i = start
            while c >= 0 {
                refs[i] = flatten(nodes, c, strings, datas, &table, &scratch)
                c = Int(nodes[c].next)
                i += 1
            }
            return index
        case .dict, .empty:
            let base = scratch.count
            var c = Int(node.first)
            while c >= 0 {
                let child = nodes[c]
                let p = BinaryPlist.asciiPrefix(strings[Int(child.key)])
                scratch.append(BinaryPlist.DictEntry(hi: p.hi, lo: p.lo, key: child.key, node: Int32(c)))
                c = Int(child.next)
            }
            let count = BinaryPlist.sortEntries(&scratch, from: base, strings)
            let index = offsets.count
            offsets.append(0)
            let start = refs.count
            collections.append(BinaryPlist.PendingCollection(index: index, marker: 0xD, refStart: start, count: count))
            refs.append(contentsOf: repeatElement(0, count: count * 2))
            for i in 0..<count {
                refs[start + i] = internString(Int(scratch[base + i].key), strings, &table)
            }
            for i in 0..<count {
                refs[start + count + i] = flatten(nodes, Int(scratch[base + i].node), strings, datas, &table, &scratch)
            }
            scratch.removeSubrange(base...)
            return index
        case .string: return internString(Int(node.bits), strings, &table)
        case .bool: return internScalar(.bool(node.bits != 0), .bool(node.bits != 0))
        case .int:
            let v = Int64(bitPattern: node.bits)
            return internScalar(.int(v), .int(v))
        case .uint: return internScalar(.uint(node.bits), .uint(node.bits))
        case .real: return internScalar(.real(node.bits), .real(Double(bitPattern: node.bits)))
        case .date:
            let d = Date(timeIntervalSinceReferenceDate: Double(bitPattern: node.bits))
            return internScalar(.date(d.timeIntervalSinceReferenceDate.bitPattern), .date(d))
        case .data:
            let d = datas[Int(node.bits)]
            return internScalar(.data(d), .data(d))
        }
    }
}

extension BinaryPlist.Writer {
    /// The object index of the arena's string `index`, as ``internString(_:)`` finds it.
    @inline(__always)
    mutating func internString(
        _ index: Int, _ strings: UnsafeBufferPointer<String>, _ table: inout BinaryPlist.ArenaStringTable
    ) -> Int {
        if let found = strings[index].utf8.withContiguousStorageIfAvailable({ internString($0, index, strings, &table) }) {
            return found
        }
        var copy = strings[index]
        copy.makeContiguousUTF8()
        return copy.utf8.withContiguousStorageIfAvailable { internString($0, index, strings, &table) }!
    }

    /// Interns the bytes `utf8` of the arena's string `index`.
    @inline(__always)
    mutating func internString(
        _ utf8: UnsafeBufferPointer<UInt8>, _ index: Int, _ strings: UnsafeBufferPointer<String>,
        _ table: inout BinaryPlist.ArenaStringTable
    ) -> Int {
        let h = WordHash.hash(UnsafeRawBufferPointer(utf8), seed: BinaryPlist.ArenaStringTable.seed)
        var slot = Int(truncatingIfNeeded: h) & table.mask
        while true {
            let s = table.slots[slot]
            if s.object < 0 { break }
            if s.hash == h, Self.sameBytes(strings[Int(s.string)], utf8) { return Int(s.object) }
            slot = (slot + 1) & table.mask
        }
        let next = offsets.count
        table.slots[slot] = BinaryPlist.ArenaStringTable.Slot(hash: h, object: Int32(next), string: Int32(index))
        offsets.append(out.count)
        Self.writeString(utf8, into: &out)
        return next
    }

    @inline(__always)
    static func sameBytes(_ s: String, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        s.utf8.withContiguousStorageIfAvailable { a in
            a.count == utf8.count && (a.count == 0 || memcmp(a.baseAddress!, utf8.baseAddress!, a.count) == 0)
        } ?? s.utf8.elementsEqual(utf8)
    }
}

extension BinaryPlist {
    /// Sorts `entries[base...]` by key as ``sortedIndices(_:)`` orders a dictionary's keys, then
    /// merges equal keys (`==`, as a `Dictionary` would) into one entry with the first key's
    /// spelling and the last value. Returns the number of entries left from `base`.
    static func sortEntries(_ entries: inout [DictEntry], from base: Int, _ strings: UnsafeBufferPointer<String>) -> Int {
        let n = entries.count - base
        guard n > 1 else { return n }
        entries[base...].sort { a, b in
            if a.hi != .max, b.hi != .max, a.hi != b.hi || a.lo != b.lo {
                return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo
            }
            let ka = strings[Int(a.key)]
            let kb = strings[Int(b.key)]
            if ka < kb { return true }
            if kb < ka { return false }
            return a.node < b.node
        }
        // Equal keys are now adjacent. Keys whose prefixes differ cannot be equal.
        var out = base
        for i in (base + 1)..<entries.count {
            let a = entries[out]
            let b = entries[i]
            let maybeEqual = a.hi == .max || b.hi == .max || (a.hi == b.hi && a.lo == b.lo)
            if maybeEqual, strings[Int(a.key)] == strings[Int(b.key)] {
                entries[out].node = b.node
            } else {
                out += 1
                entries[out] = b
            }
        }
        entries.removeSubrange((out + 1)...)
        return out + 1 - base
    }
}
