import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import FolioEdge

/// The order a tier tries its origins in, and how their health changes (`OriginPool`), and
/// which failures send a request on (`HTTPCache.isNotSent`, `HTTPCache.objectHash`).
@Suite("the tier's origin pool")
struct OriginPoolTests {
    static let urls = ["http://a:8081", "http://b:8082/bucket/", "https://c"]

    @Test("names: host:port, a path prefix kept without its trailing slash, the scheme's port")
    func names() {
        let pool = OriginPool(Self.urls)
        #expect(pool.origins.map(\.name) == ["a:8081", "b:8082", "c:443"])
        #expect(pool.origins[1].base == "http://b:8082/bucket")
        #expect(pool.parameter(1) == "; origin=\"b:8082\"")
        #expect(pool.parameter(nil) == "")
    }

    @Test("primary: the first up first; one down goes last; up again only after two good checks")
    func primary() {
        let pool = OriginPool(Self.urls)
        #expect(pool.candidates() == [0, 1, 2])
        pool.failed(0)
        #expect(pool.candidates() == [1, 2, 0])
        pool.checked(0, good: true)
        #expect(pool.candidates() == [1, 2, 0])
        pool.checked(0, good: false)
        pool.checked(0, good: true)
        #expect(pool.candidates() == [1, 2, 0], "a bad check in between starts the count again")
        pool.checked(0, good: true)
        #expect(pool.candidates() == [0, 1, 2])
        #expect(pool.candidates(preferring: 2) == [2, 0, 1])
    }

    @Test("a reload's pool keeps what was known of the origins it keeps, by URL; a new origin starts up")
    func takeHealth() {
        let old = OriginPool(Self.urls)
        old.failed(1)
        #expect(old.candidates() == [0, 2, 1])
        let new = OriginPool(["http://b:8082/bucket", "http://d:80"], policy: .primary)
        new.takeHealth(from: old)
        #expect(new.candidates() == [1, 0], "b was down in the old pool")
        new.checked(0, good: true)
        new.checked(0, good: true)
        #expect(new.candidates() == [0, 1])
    }

    @Test("round robin: each origin up leads in turn; those down never lead")
    func roundRobin() {
        let pool = OriginPool(Self.urls, policy: .roundRobin)
        let leaders = (0..<6).map { _ in pool.candidates()[0] }
        #expect(leaders == [0, 1, 2, 0, 1, 2])
        pool.checked(1, good: false)
        let after = (0..<4).map { _ in pool.candidates() }
        #expect(after.allSatisfy { $0.last == 1 && $0.count == 3 }, "\(after)")
        #expect(Set(after.map { $0[0] }) == [0, 2])
    }

    @Test("all down: the one that answered most recently first")
    func allDown() {
        let pool = OriginPool(Self.urls)
        pool.answered(2)
        for i in 0..<3 { pool.failed(i) }
        #expect(pool.candidates().first == 2)
        pool.answered(1)
        #expect(pool.candidates().first == 1)
    }

    @Test("one origin: never marked down")
    func single() {
        let pool = OriginPool(["http://a:1"])
        pool.failed(0)
        #expect(pool.candidates() == [0] && !pool.isFailover)
    }

    @Test("a request that never left (refused, connect timeout) may go to the next origin whatever its method")
    func notSent() {
        #expect(HTTPCache.isNotSent(IOError(errnoCode: ECONNREFUSED, reason: "connect")))
        #expect(HTTPCache.isNotSent(ChannelError.connectTimeout(.seconds(1))))
        #expect(!HTTPCache.isNotSent(ChannelError.ioOnClosedChannel))
        #expect(!HTTPCache.isNotSent(IOError(errnoCode: ECONNRESET, reason: "read")))
    }

    @Test("object targets are named by their hash; anything else is not checked")
    func objectHash() {
        let hex = String(repeating: "0a", count: 32)
        #expect(HTTPCache.objectHash("/objects/\(hex).plist") == hex)
        #expect(HTTPCache.objectHash("/prefix/objects/\(hex).png?x=1") == hex)
        #expect(HTTPCache.objectHash("/objects/\(hex).plist.gz") == nil)
        #expect(HTTPCache.objectHash("/objects/\(hex.uppercased()).plist") == nil)
        #expect(HTTPCache.objectHash("/manifest.plist") == nil)
        #expect(HTTPCache.objectHash("/objects/abc.plist") == nil)
    }
}
