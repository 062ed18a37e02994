import NIOCore
import Testing

@testable import FolioEdge

/// The byte-keyed route table the edge looks request targets up in.
@Suite("Route table")
struct RouteTableTests {
    static func resource(_ tag: String) -> Resource {
        let rep = Representation(
            coding: .identity, body: ByteBuffer(string: tag), filePath: nil, length: tag.utf8.count, etag: "\"\(tag)\"",
            contentType: "text/plain", cacheControl: "no-store", lastModified: "Thu, 01 Jan 1970 00:00:00 GMT")
        return Resource(identity: rep, gzip: nil, lastModified: 0)
    }

    @Test func everyKeyAndNothingElse() {
        var routes: [String: Resource] = [:]
        for i in 0..<1500 { routes["/objects/\(String(i * 7919, radix: 16)).plist"] = Self.resource("r\(i)") }
        routes["/manifest.plist"] = Self.resource("manifest")
        routes[""] = Self.resource("empty")
        routes["/a"] = Self.resource("a")
        let table = RouteTable(routes)
        #expect(table.count == routes.count)
        for (path, resource) in routes {
            #expect(table[path] === resource, "\(path)")
            var bytes = Array(path.utf8)
            bytes.withUnsafeMutableBytes { raw in
                #expect(table[UnsafeRawBufferPointer(raw)] === resource)
            }
        }
        for miss in ["/manifest.plis", "/manifest.plistx", "/A", "/a/", "/objects/.plist", "manifest.plist", "/objects/0.plis"] {
            #expect(table[miss] == nil, "\(miss)")
        }
    }

    @Test("removing paths keeps every other route, the same resource")
    func removing() {
        var routes: [String: Resource] = [:]
        for i in 0..<300 { routes["/deltas/\(i).plist"] = Self.resource("d\(i)") }
        let gone = Set((0..<300).filter { $0 % 3 == 0 }.map { "/deltas/\($0).plist" } + ["/not/there"])
        let table = RouteTable(routes).removing(gone)
        #expect(table.count == 200)
        for (path, resource) in routes {
            if gone.contains(path) { #expect(table[path] == nil, "\(path)") } else { #expect(table[path] === resource, "\(path)") }
        }
    }

    @Test("updating adds, replaces and removes routes; a removed path comes back; the table grows and compacts")
    func updating() {
        var expected: [String: Resource] = [:]
        for i in 0..<100 { expected["/objects/\(i).plist"] = Self.resource("o\(i)") }
        var table = RouteTable(expected)
        var rng: UInt64 = 7
        for round in 0..<60 {
            var changes: [String: Resource?] = [:]
            for _ in 0..<(round % 7 == 0 ? 40 : 3) {
                rng = rng &* 6364136223846793005 &+ 1442695040888963407
                let path = "/objects/\(Int(rng >> 33) % 300).plist"
                changes[path] = rng & 1 == 0 ? .some(nil) : Self.resource("r\(round)")
            }
            let (before, snapshot) = (table, expected)
            table = table.updating(changes)
            for (path, resource) in changes { expected[path] = resource }
            // The table it was made from is unchanged (a request on the old version sees it whole).
            #expect(before.count == snapshot.count && snapshot.allSatisfy { before[$0.key] === $0.value }, "round \(round)")
            #expect(table.count == expected.count, "round \(round)")
            #expect(Set(table.paths) == Set(expected.keys), "round \(round)")
            for (path, resource) in expected { #expect(table[path] === resource, "round \(round): \(path)") }
        }
        #expect(table["/objects/300.plist"] == nil)
    }

    @Test func emptyTable() {
        let table = RouteTable()
        #expect(table.count == 0)
        #expect(table["/"] == nil)
        #expect(table[""] == nil)
    }

    @Test func keysOfEveryLengthAroundAWord() {
        // The hash reads 8-byte words and then a tail: lengths 0...24 all round-trip, and keys
        // that differ only in their last byte stay apart.
        var routes: [String: Resource] = [:]
        for n in 0...24 {
            routes[String(repeating: "x", count: n)] = Self.resource("x\(n)")
            routes[String(repeating: "x", count: n) + "y"] = Self.resource("y\(n)")
        }
        let table = RouteTable(routes)
        for (path, resource) in routes { #expect(table[path] === resource, "\(path)") }
    }
}
