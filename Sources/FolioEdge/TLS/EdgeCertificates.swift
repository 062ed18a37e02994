import FolioSupport
import Foundation
import NIOSSL
import SwiftASN1
import Synchronization
import X509

/// A certificate or key the edge cannot serve with, said in one line.
package struct TLSSetupError: Error, CustomStringConvertible, Sendable {
    package var description: String
    init(_ description: String) { self.description = description }
}

/// One certificate chain and its private key, read from PEM files and checked: the key matches
/// the certificate, the certificate is valid now, and the key file is not readable by others.
package struct CertificatePair: Sendable {
    let certificatePath: String
    let keyPath: String
    let chain: [NIOSSLCertificate]
    let key: NIOSSLPrivateKey
    /// The DNS names of its subject alternative names (`*.example.org` covers one label).
    let names: [String]
    let notValidAfter: Date

    package static func load(certificate: String, key: String, now: Date = Date()) throws(TLSSetupError) -> CertificatePair {
        try checkPermissions(key)
        let leafAndChain = try certificates(certificate)
        let privateKey = try privateKey(key)
        let leaf = leafAndChain.parsed[0]
        guard leaf.publicKey == privateKey.parsed.publicKey else {
            throw TLSSetupError("the key \(key) does not match the certificate \(certificate); give the key the certificate was issued for")
        }
        guard leaf.notValidAfter > now else {
            throw TLSSetupError("the certificate \(certificate) expired on \(format(leaf.notValidAfter)); renew it")
        }
        guard leaf.notValidBefore <= now else {
            throw TLSSetupError("the certificate \(certificate) is not valid before \(format(leaf.notValidBefore)); check the clock or the certificate")
        }
        let names = ((try? leaf.extensions.subjectAlternativeNames) ?? nil).map { sans in
            sans.compactMap { name -> String? in if case .dnsName(let d) = name { d.lowercased() } else { nil } }
        } ?? []
        return CertificatePair(
            certificatePath: certificate, keyPath: key, chain: leafAndChain.nio, key: privateKey.nio, names: names,
            notValidAfter: leaf.notValidAfter)
    }

    /// Whether this pair serves `host` (an SNI name): one of its names, or a wildcard for it.
    func serves(_ host: String) -> Bool {
        let host = host.lowercased()
        return names.contains { name in
            if name == host { return true }
            guard name.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
            return host[dot...] == name.dropFirst()
        }
    }

    private static func checkPermissions(_ path: String) throws(TLSSetupError) {
        var st = stat()
        guard stat(path, &st) == 0 else { throw TLSSetupError("cannot read the key file \(path): \(String(cString: strerror(errno)))") }
        let mode = st.st_mode & 0o777
        if mode & 0o007 != 0 {
            throw TLSSetupError(
                "the key file \(path) is readable by other users (mode \(String(mode, radix: 8))); run chmod 600 \(path) (or 640 with a group)")
        }
    }

    private static func text(_ path: String, what: String) throws(TLSSetupError) -> String {
        do { return String(decoding: try FileIO.read(path), as: UTF8.self) } catch {
            throw TLSSetupError("cannot read the \(what) \(path): \(error)")
        }
    }

    private static func certificates(_ path: String) throws(TLSSetupError) -> (parsed: [Certificate], nio: [NIOSSLCertificate]) {
        let pem = try text(path, what: "certificate file")
        let problem = TLSSetupError("\(path) is not a PEM certificate (-----BEGIN CERTIFICATE-----); give the certificate chain, leaf first")
        do {
            let documents = try PEMDocument.parseMultiple(pemString: pem).filter { $0.discriminator == "CERTIFICATE" }
            guard !documents.isEmpty else { throw problem }
            let parsed = try documents.map { try Certificate(derEncoded: $0.derBytes) }
            let nio = try documents.map { try NIOSSLCertificate(bytes: $0.derBytes, format: .der) }
            return (parsed, nio)
        } catch let error as TLSSetupError {
            throw error
        } catch {
            throw problem
        }
    }

    private static func privateKey(_ path: String) throws(TLSSetupError) -> (parsed: Certificate.PrivateKey, nio: NIOSSLPrivateKey) {
        let pem = try text(path, what: "key file")
        do {
            return (try Certificate.PrivateKey(pemEncoded: pem), try NIOSSLPrivateKey(bytes: Array(pem.utf8), format: .pem))
        } catch {
            throw TLSSetupError("\(path) is not a PEM private key (RSA, P-256, P-384 or Ed25519, unencrypted); give the certificate's key")
        }
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}

/// The certificates the edge serves, chosen per handshake by the name the client asks for
/// (SNI), and swapped in when their files change or on SIGHUP: a handshake takes the pair current
/// at that moment, so connections already open keep theirs and none is dropped.
package final class CertificateStore: Sendable {
    private let sources: Mutex<[(certificate: String, key: String)]>
    private let pairs: Mutex<[CertificatePair]>
    /// The pair from ACME (`--acme`), after the given ones; a temporary self-signed one until
    /// the first certificate is issued.
    private let acme = Mutex<CertificatePair?>(nil)
    /// The stamps of each pair's files at the last attempt to read them, so that a bad file is
    /// reported once, not on every check, and read again when it changes.
    private let seen: Mutex<[[FileStamp?]]>

    /// Loads every pair; any problem is an error (the edge does not start).
    package init(_ sources: [(certificate: String, key: String)], acme: CertificatePair? = nil) throws(TLSSetupError) {
        guard !sources.isEmpty || acme != nil else { throw TLSSetupError("no certificate given; pass --tls-cert FILE --tls-key FILE") }
        self.acme.withLock { $0 = acme }
        // Stamped before they are read: a change while they are read is read again.
        let stamps = sources.map(Self.stamps)
        var loaded: [CertificatePair] = []
        for source in sources { loaded.append(try CertificatePair.load(certificate: source.certificate, key: source.key)) }
        self.sources = Mutex(sources)
        seen = Mutex(stamps)
        pairs = Mutex(loaded)
    }

    /// The stamps of a pair's two files.
    private static func stamps(_ source: (certificate: String, key: String)) -> [FileStamp?] {
        [FileStamp.read(source.certificate), FileStamp.read(source.key)]
    }

    /// The pair for `serverName`: the first that names it, else the first given.
    func select(_ serverName: String?) -> CertificatePair {
        let acme = self.acme.withLock { $0 }
        return pairs.withLock { pairs in
            let all = acme.map { pairs + [$0] } ?? pairs
            guard let serverName else { return all[0] }
            return all.first { $0.serves(serverName) } ?? all[0]
        }
    }

    /// Serves `pair` as the ACME certificate from the next handshake on.
    package func installACME(_ pair: CertificatePair) { acme.withLock { $0 = pair } }

    /// Reads again the pairs whose files changed (all of them with `force`). A pair that fails
    /// its checks keeps serving the one it had. Returns one line per pair read, for the log.
    package func reload(force: Bool) -> [(ok: Bool, message: String)] {
        var next = pairs.withLock { $0 }
        var report: [(Bool, String)] = []
        for (i, source) in sources.withLock({ $0 }).enumerated() {
            let stamps = Self.stamps(source)
            let changed = seen.withLock { seen in
                defer { seen[i] = stamps }
                return seen[i] != stamps
            }
            guard force || changed else { continue }
            do {
                next[i] = try CertificatePair.load(certificate: source.certificate, key: source.key)
                report.append((true, "reloaded \(source.certificate) (valid until \(ISO8601DateFormatter().string(from: next[i].notValidAfter)))"))
            } catch {
                report.append((false, "kept the previous certificate for \(source.certificate): \(error)"))
            }
        }
        pairs.withLock { $0 = next }
        return report
    }

    /// Serves the pairs of other files from the next handshake on (a reload that names new
    /// files); when any fails to load, nothing changes and the error says which.
    package func replace(_ newSources: [(certificate: String, key: String)]) throws(TLSSetupError) {
        let current = sources.withLock { $0 }
        guard !newSources.elementsEqual(current, by: { $0.certificate == $1.certificate && $0.key == $1.key }) else { return }
        guard !newSources.isEmpty || acme.withLock({ $0 }) != nil else { throw TLSSetupError("no certificate given; pass --tls-cert FILE --tls-key FILE") }
        let stamps = newSources.map(Self.stamps)
        var loaded: [CertificatePair] = []
        for source in newSources { loaded.append(try CertificatePair.load(certificate: source.certificate, key: source.key)) }
        sources.withLock { $0 = newSources }
        seen.withLock { $0 = stamps }
        pairs.withLock { $0 = loaded }
    }
}
