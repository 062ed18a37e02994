import FolioKitCore
import FolioKitNIO
import FolioPublished
import FolioSupport

/// What `folio diff` reads from an edge: manifests and objects, with messages that say what
/// to pass instead when something is not there.
enum EdgeFetch {
    /// A GET that answered something other than 200.
    struct NotFound: Error {
        var url: String
        var status: Int
    }

    /// `path` from the edge at `base`, through the sync's transport (and its prefix handling).
    static func bytes(_ base: String, _ path: String, http: FolioHTTPConfiguration) async throws -> [UInt8] {
        let url = base + "/" + path
        do {
            let response = try await NIOTransports.forEdge(base, configuration: http).get(TransportRequest(path: "/" + path, headers: [], maxBody: 64 << 20))
            guard response.status == 200 else { throw NotFound(url: url, status: Int(response.status)) }
            return response.body
        } catch let e as TransportError {
            throw CLIError("could not reach \(url): \(e)", exitCode: 2)
        } catch let e as NotFound {
            throw CLIError("\(e.url) answered HTTP \(e.status)", exitCode: 2)
        }
    }

    /// An entry's object, checked against the entry.
    static func object(_ base: String, _ e: Manifest.Entry, http: FolioHTTPConfiguration) async throws -> [UInt8] {
        let bytes = try await bytes(base, e.objectPath, http: http)
        guard e.matches(bytes) else {
            throw CLIError("\(base)/\(e.objectPath) does not match its manifest entry \(e.path)", exitCode: 2)
        }
        return bytes
    }

    /// Version `n`'s manifest from the edge's history; when it has none, what it has instead.
    static func version(_ n: Int, channel: String, places: DiffPlaces) async throws -> [UInt8] {
        let prefix = PublishedLayout.channelPrefix(channel)
        let transport = NIOTransports.forEdge(places.edgeURL, configuration: places.http)
        let response: TransportResponse
        do {
            response = try await transport.get(TransportRequest(path: "/" + prefix + PublishedLayout.versionedManifest(n), headers: [], maxBody: 64 << 20))
        } catch {
            throw CLIError(
                "version \(n) is not in the cache (\(places.cachePath)) and the edge \(places.edgeURL) could not be reached (\(error)); "
                    + "sync first, or pass a published directory or manifest file", exitCode: 2)
        }
        if response.status == 200 { return response.body }
        throw CLIError(await missingVersion(n, prefix: prefix, places: places), exitCode: 2)
    }

    /// "the edge has no version 7 (its current version is 5) …".
    static func missingVersion(_ n: Int, prefix: String, places: DiffPlaces) async -> String {
        let current = try? await bytes(places.edgeURL, prefix + PublishedLayout.manifest, http: places.http)
        let version = current.flatMap { try? Manifest(bytes: $0) }?.version
        var text = "version \(n) is neither in the cache (\(places.cachePath)) nor on the edge \(places.edgeURL)"
        if let version {
            text += version < n ? " (its current version is \(version))" : " (it no longer keeps it; its current version is \(version))"
            text += "; pass @N with N up to \(version), a published directory or a manifest file"
        } else {
            text += "; pass a published directory or a manifest file"
        }
        return text
    }
}
