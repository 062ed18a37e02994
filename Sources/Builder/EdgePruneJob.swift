import FolioObjectStore
import FolioPublished
import Foundation

/// `folio-build prune https://HOST:PORT`: one prune of an edge's root through its admin
/// listener (`POST /.folio/deploy/prune`), with the deploy token.
struct EdgePruneJob: Sendable {
    /// What the edge is sent (its `PruneRequest`).
    struct Request: Codable {
        var keep: Int
        var dryRun: Bool
        var holder: String
    }

    let destination: String
    let token: String
    let caFile: String?
    let keep: Int
    let dryRun: Bool

    /// Prunes, prints the report or the error; the exit code.
    func run() async -> Int32 {
        let client: EdgeDeployClient
        do {
            guard let url = URL(string: destination) else { throw ObjectStoreError(.usage, "'\(destination)' is not a URL") }
            client = try EdgeDeployClient(base: url, token: token, caFile: caFile)
        } catch { return PublishJob.report(error) }
        let code: Int32
        do { code = PruneOutput.print(try await prune(client), destination: destination) } catch { code = PublishJob.report(Self.explain(error)) }
        await client.shutdown()
        return code
    }

    private func prune(_ client: EdgeDeployClient) async throws -> PruneReport {
        let body = try JSONEncoder().encode(Request(keep: keep, dryRun: dryRun, holder: EdgeDeployOptions.defaultHolder))
        let answer = try await client.prune(Array(body))
        do { return try JSONDecoder().decode(PruneReport.self, from: Data(answer)) } catch {
            throw ObjectStoreError(.store, "\(destination) answered something that is not a folio-edge prune report: is it an edge's admin listener?")
        }
    }

    /// The client's deploy wording made a prune's; an edge without prunes told to upgrade.
    static func explain(_ error: Error) -> Error {
        guard let e = error as? ObjectStoreError else { return error }
        if e.message.contains("unknown deploy request") {
            return ObjectStoreError(.store, "this edge does not prune (it answered: unknown request): upgrade folio-edge, or prune its directory where it runs")
        }
        return ObjectStoreError(e.kind, e.message.replacingOccurrences(of: "refused to begin the deploy", with: "refused the prune"))
    }
}
