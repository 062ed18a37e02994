/// Runs `body` on each of `items`, at most `limit` at a time; the first failure cancels the
/// rest and is thrown. The uploads and deletes of publishing, deploying and pruning.
package func forEachConcurrently<T: Sendable>(_ items: [T], limit: Int, _ body: @escaping @Sendable (T) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(max(limit, 1), items.count) {
            let item = items[next]
            group.addTask { try await body(item) }
            next += 1
        }
        while try await group.next() != nil {
            guard next < items.count else { continue }
            let item = items[next]
            group.addTask { try await body(item) }
            next += 1
        }
    }
}
