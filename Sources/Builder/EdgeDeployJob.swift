import FolioObjectStore
import FolioSupport
import Foundation

/// `folio-build publish DIR https://HOST:PORT`: one deploy to an edge's admin listener, with
/// everything it needs decided (Sendable, so it can run in a task).
struct EdgeDeployJob: Sendable {
    let options: EdgeDeployOptions
    let destination: String
    let token: String
    let caFile: String?
    let quiet: Bool

    /// The token: the first line of `file`, else `FOLIO_DEPLOY_TOKEN`; a usage error without either.
    static func token(file: String?, environment: [String: String]) throws(ObjectStoreError) -> String {
        if let file {
            guard let bytes = try? FileIO.read(file) else {
                throw ObjectStoreError(.usage, "cannot read the deploy token file \(file) (--token-file)")
            }
            let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first ?? ""
            let token = line.trimmingCharacters(in: .whitespaces)
            guard !token.isEmpty else { throw ObjectStoreError(.usage, "the deploy token file \(file) is empty: put the edge's deploy token on its first line") }
            return token
        }
        guard let token = environment["FOLIO_DEPLOY_TOKEN"], !token.isEmpty else {
            throw ObjectStoreError(.usage, "a deploy to an edge needs its deploy token: pass --token-file FILE or set FOLIO_DEPLOY_TOKEN")
        }
        return token
    }

    /// Deploys, prints the summary line or the error; the exit code.
    func run() async -> Int32 {
        let started = Date()
        let client: EdgeDeployClient
        do {
            guard let url = URL(string: destination) else { throw ObjectStoreError(.usage, "'\(destination)' is not a URL") }
            client = try EdgeDeployClient(base: url, token: token, caFile: caFile)
        } catch { return PublishJob.report(error) }
        let quiet = self.quiet
        let dryRun = options.dryRun
        let deployer = EdgeDeployer(client: client, options: options) { line in if !quiet || dryRun { print(line) } }
        do {
            let summary = try await deployer.run()
            print(summaryLine(summary, seconds: Date().timeIntervalSince(started)))
            // The process ends next, and its connection with it: the client's orderly shutdown
            // (0.4 to 4 ms of hops between its event loop's threads) runs meanwhile, unawaited.
            Task.detached { await client.shutdown() }
            return 0
        } catch {
            await client.shutdown()
            return PublishJob.report(error)
        }
    }

    /// `deployed version 3 to https://…: 5 files uploaded (40 KB, 40312 bytes), 9 rebuilt by the
    /// edge, 300 already there, in 0.12 s`.
    func summaryLine(_ s: PublishSummary, seconds: Double) -> String {
        let kb = (s.uploadedBytes + 1023) / 1024
        if options.dryRun {
            return "dry run: deploying version \(s.version) to \(destination) would upload \(s.uploaded) files (\(kb) KB), the edge would rebuild \(s.rebuilt), "
                + "\(s.skipped) already there; nothing was changed"
        }
        return "deployed version \(s.version) to \(destination): \(s.uploaded) files uploaded (\(kb) KB, \(s.uploadedBytes) bytes), \(s.rebuilt) rebuilt by the edge, "
            + "\(s.skipped) already there, in " + String(format: "%.2f s", seconds)
    }
}
