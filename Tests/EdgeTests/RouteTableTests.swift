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
