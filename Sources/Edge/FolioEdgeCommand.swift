import ArgumentParser
import FolioEdge
import FolioPublished
import FolioSupport
import Foundation
import NIOCore

@main
struct FolioEdgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio-edge",
        abstract: "Serve a published Folio directory over HTTP/1.1.")

    @Option(help: "The published directory to serve.") var root = "public"
    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port (0 picks a free one and prints it).") var port = 8080
    @Option(help: "Event loop threads (default: one per core).") var threads = System.coreCount
    @Option(help: "Bytes of objects to hold in memory; the rest is read from disk.") var memoryBudget = 256 << 20
    @Option(help: "Most connections open at once.") var maxConnections = 10_000
    @Option(help: "Seconds a client may take to send a complete request.") var requestTimeout = 15
    @Option(help: "Largest request header section in bytes.") var maxHeaderBytes = 16384
    @Option(help: "max-age for manifest and /content/ responses (default: the manifest's hint).") var manifestMaxAge: Int?
    @Option(help: "stale-while-revalidate for the manifest (default: the manifest's hint).") var staleWhileRevalidate: Int?
    @Option(help: "stale-if-error for the manifest (default: the manifest's hint).") var staleIfError: Int?
    @Option(help: "How often to check manifest.plist for a new version, in milliseconds.") var watchIntervalMs = 250
    @Flag(inversion: .prefixedNo, help: "Log every request (swift-log, to stderr).") var accessLog = true

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard requestTimeout >= 1 else { throw ValidationError("--request-timeout must be at least 1 second") }
        guard FileIO.exists(PublishedLayout.path(root, PublishedLayout.manifest)) else {
            throw ValidationError("\(root)/manifest.plist not found; run folio-build (make publish) first or pass --root")
        }
    }

    func run() async throws {
        var limits = ConnectionLimits()
        limits.requestTimeout = .seconds(Int64(requestTimeout))
        limits.maxHeaderBytes = maxHeaderBytes
        let config = EdgeConfiguration(
            root: root, host: host, port: port, threads: threads, memoryBudget: memoryBudget,
            maxConnections: maxConnections, limits: limits,
            manifestHintOverride: CacheHintOverride(maxAge: manifestMaxAge, staleWhileRevalidate: staleWhileRevalidate, staleIfError: staleIfError),
            watchInterval: .milliseconds(watchIntervalMs), accessLog: accessLog)
        do {
            try await Edge.run(config)
        } catch let error as EdgeStartupError {
            FileHandle.standardError.write(Data("folio-edge: error: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
