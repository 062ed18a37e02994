import FolioPlist
import Foundation

/// URL paths to resources, looked up by the request target's bytes (no String is made).
///
/// Open addressing over a power-of-two slot table at most half full; the keys sit in one byte
/// array and are fixed once the table is made (a client can only look up, never add). A new
/// version that changes a few routes makes a copy with those changed (``updating(_:)``): a
/// removed route stays as a key with no resource until enough of them make a rebuild worth it.
struct RouteTable: Sendable {
    private struct Entry: Sendable {
        var hash: Int
        var offset: Int
        var length: Int
    }

    private var entries: [Entry] = []
    /// By entry; nil for a removed route.
    private var values: [Resource?] = []
    private var keyBytes: [UInt8] = []
    /// Index into `entries` plus one; 0 is an empty slot.
    private var slots: [Int32]
    private var mask: Int
    /// Entries whose route was removed.
    private var removed = 0
    private let seed = UInt64.random(in: 1...UInt64.max)

    init(_ routes: [String: Resource] = [:]) {
        var size = 8
        while size < routes.count * 2 { size *= 2 }
        slots = [Int32](repeating: 0, count: size)
        mask = size - 1
        entries.reserveCapacity(routes.count)
        values.reserveCapacity(routes.count)
        for (path, resource) in routes { add(path, resource) }
    }

    /// The number of routes.
    var count: Int { entries.count - removed }

    /// Every path with a route.
    var paths: [String] {
        zip(entries, values).compactMap { entry, value in
            value == nil ? nil : String(decoding: keyBytes[entry.offset..<entry.offset + entry.length], as: UTF8.self)
        }
    }

    /// Every route, by path.
    var dictionary: [String: Resource] {
        var routes: [String: Resource] = [:]
        routes.reserveCapacity(count)
        for (entry, value) in zip(entries, values) {
            guard let value else { continue }
            routes[String(decoding: keyBytes[entry.offset..<entry.offset + entry.length], as: UTF8.self)] = value
        }
        return routes
    }

    /// The same routes without `paths` (files a prune removed), in a new table.
    func removing(_ paths: Set<String>) -> RouteTable {
        RouteTable(dictionary.filter { !paths.contains($0.key) })
    }

    /// A copy with `changes` made: a path with a resource routes to it (new or replaced), a path
    /// with nil is removed. Made anew, compacted, when it would pass half full or when removed
    /// routes would be a quarter of it.
    func updating(_ changes: [String: Resource?]) -> RouteTable {
        var table = self
        for (path, resource) in changes {
            if let index = table.index(path) {
                if table.values[index] == nil, resource != nil { table.removed -= 1 }
                if table.values[index] != nil, resource == nil { table.removed += 1 }
                table.values[index] = resource
            } else if let resource {
                guard (table.entries.count + 1) * 2 <= table.slots.count else { return Self.merged(self, changes) }
                table.add(path, resource)
            }
        }
        return table.removed * 4 > max(table.entries.count, 64) ? RouteTable(table.dictionary) : table
    }

    /// `table`'s routes with `changes` made, in a new table.
    private static func merged(_ table: RouteTable, _ changes: [String: Resource?]) -> RouteTable {
        var routes = table.dictionary
        for (path, resource) in changes { routes[path] = resource }
        return RouteTable(routes)
    }

    /// Adds a key that is not in the table (there is room for it).
    private mutating func add(_ path: String, _ resource: Resource) {
        var path = path
        path.withUTF8 { key in
            let raw = UnsafeRawBufferPointer(key)
            let h = hash(raw)
            var i = h & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = Int32(entries.count + 1)
            entries.append(Entry(hash: h, offset: keyBytes.count, length: raw.count))
            keyBytes.append(contentsOf: raw)
            values.append(resource)
        }
    }

    /// The entry of `path`, removed or not; nil when the table never had it.
    private func index(_ path: String) -> Int? {
        var path = path
        return path.withUTF8 { index(UnsafeRawBufferPointer($0)) }
    }

    private func index(_ path: UnsafeRawBufferPointer) -> Int? {
        let h = hash(path)
        var i = h & mask
        return keyBytes.withUnsafeBytes { keys in
            entries.withUnsafeBufferPointer { entries in
                slots.withUnsafeBufferPointer { slots in
                    while true {
                        let s = Int(slots[i])
                        if s == 0 { return nil }
                        let e = entries[s - 1]
                        if e.hash == h, e.length == path.count,
                            e.length == 0 || memcmp(keys.baseAddress! + e.offset, path.baseAddress!, e.length) == 0
                        {
                            return s - 1
                        }
                        i = (i + 1) & mask
                    }
                }
            }
        }
    }

    subscript(path: UnsafeRawBufferPointer) -> Resource? {
        guard let index = index(path) else { return nil }
        return values[index]
    }

    subscript(path: String) -> Resource? {
        var path = path
        return path.withUTF8 { self[UnsafeRawBufferPointer($0)] }
    }

    /// The shared word-at-a-time hash, seeded per table.
    @inline(__always)
    private func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        Int(truncatingIfNeeded: WordHash.hash(bytes, seed: seed))
    }
}
