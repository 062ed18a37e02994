import AsyncHTTPClient
import FolioKitCore
import Foundation
import NIOCore
import NIOSSL
import Synchronization

/// The client's HTTP client: keep-alive pooling, and no automatic decompression, because sync
/// counts the bytes on the wire and inflates (with a size limit) and verifies them itself.
/// It lives for the whole process, like AsyncHTTPClient's shared client.
///
/// https edges are verified against the system's certificate authorities and, when the
/// environment variable `FOLIO_CA_FILE` names a PEM file, its certificates too (a staging edge
/// with a private CA; `folio` checks the file before anything else and names it in an error).
package enum FolioHTTP {

    /// The variable naming a PEM file of extra certificate authorities.
    package static let caFileVariable = "FOLIO_CA_FILE"

    package static let client: HTTPClient = makeClient(extraRoots: [])

    /// Clients with extra certificate authorities, one per set, for the process's lifetime.
    private static let clients = Mutex<[[String]: HTTPClient]>([:])

    /// The shared client, or (with `extraAuthorities`, PEM texts) one that trusts them too.
    package static func client(extraAuthorities: [String]) -> HTTPClient {
        guard !extraAuthorities.isEmpty else { return client }
        return clients.withLock { clients in
            if let client = clients[extraAuthorities] { return client }
            let roots = extraAuthorities.flatMap { (try? NIOSSLCertificate.fromPEMBytes(Array($0.utf8))) ?? [] }
            let client = makeClient(extraRoots: roots)
            clients[extraAuthorities] = client
            return client
        }
    }

    private static func makeClient(extraRoots: [NIOSSLCertificate]) -> HTTPClient {
        var config = HTTPClient.Configuration()
        config.decompression = .disabled
        config.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 8)
        // A refused connection is an answer (offline), not something to retry until the connect
        // timeout: sync does its own bounded retries with backoff.
        config.connectionPool.retryConnectionEstablishment = false
        config.timeout = .init(connect: .seconds(5), read: .seconds(30))
        let roots = extraRoots + ((caFile.flatMap { try? extraCertificateAuthorities($0) }) ?? [])
        if !roots.isEmpty {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(roots)]
            config.tlsConfiguration = tls
        }
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: config)
    }

    /// The file `FOLIO_CA_FILE` names, if set and not empty.
    package static var caFile: String? {
        guard let value = getenv(caFileVariable), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// The certificates of a PEM file of certificate authorities; an error that names the file
    /// when it cannot be read or holds none.
    package static func extraCertificateAuthorities(_ path: String) throws -> [NIOSSLCertificate] {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw FolioError(.io, "\(caFileVariable)=\(path): the file cannot be read")
        }
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
            throw FolioError(.invalidContent, "\(caFileVariable)=\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return certificates
    }
}
