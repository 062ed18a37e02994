import Foundation
import Testing

@testable import FolioEdge

/// The deploy lock's record of a final plan: the commit takes it as it is only when nothing but
/// the files it awaited came since, all of them.
@Suite("Deploy lock: a final plan")
struct DeployLockTests {
    static let begin = DeployBegin(protocol: DeployBegin.protocolVersion, version: 2, holder: "test", force: false, channels: [:], files: [])

    /// A lock holding a session whose last plan awaited `awaiting`.
    static func planned(awaiting: Set<String>) throws -> (DeployLock, String) {
        let lock = DeployLock(staleAfter: 60)
        let id = try lock.take(begin).taken.id
        lock.markPlanned(id, parsed: [:], awaiting: awaiting)
        return (lock, id)
    }

    @Test("every awaited file staged: the commit takes the plan")
    func awaitedFilesArrive() throws {
        let (lock, id) = try Self.planned(awaiting: ["objects/a.plist.br", "objects/b.plist.br"])
        for file in ["objects/a.plist.br", "objects/b.plist.br"] {
            _ = try lock.use(id, staging: file)
            lock.staged(id, file)
        }
        #expect(try lock.use(id, committing: true).planComplete)
    }

    @Test("an awaited file not staged yet (its upload failed): the commit rebuilds")
    func awaitedFileMissing() throws {
        let (lock, id) = try Self.planned(awaiting: ["objects/a.plist.br", "objects/b.plist.br"])
        _ = try lock.use(id, staging: "objects/a.plist.br")
        lock.staged(id, "objects/a.plist.br")
        _ = try lock.use(id, staging: "objects/b.plist.br")  // refused on arrival: never staged
        #expect(try !lock.use(id, committing: true).planComplete)
    }

    @Test("a file the plan did not name, or another plan request: the commit rebuilds")
    func otherRequests() throws {
        let (lock, id) = try Self.planned(awaiting: ["objects/a.plist.br"])
        _ = try lock.use(id, staging: "manifest.plist")
        lock.staged(id, "manifest.plist")
        #expect(try !lock.use(id, committing: true).planComplete)
        let (again, second) = try Self.planned(awaiting: [])
        _ = try again.use(second)
        #expect(try !again.use(second, committing: true).planComplete)
    }

    @Test("a plan that awaited nothing: the commit takes it")
    func nothingAwaited() throws {
        let (lock, id) = try Self.planned(awaiting: [])
        #expect(try lock.use(id, committing: true).planComplete)
    }
}
