import FolioPublished
import Foundation

/// The root keys an app trusts to authorize who signs its content: with one, a store refuses
/// unsigned, altered, expired or rolled-back manifests, whatever the edge or network serves.
///
/// Ship the root's public key (`folio keys generate` writes it as `NAME.pub`) with the app, as
/// you ship its one edge URL.
public struct FolioTrust: Sendable {
    package let trust: Trust

    /// Trusts the root public keys in these `.pub` texts.
    public init(publicKeys texts: [String]) throws(FolioError) {
        var roots: [PublicKey] = []
        for (i, text) in texts.enumerated() {
            do { roots.append(try PublicKey(fileText: text, path: "public key \(i + 1)")) } catch {
                throw FolioError(.invalidContent, "\(error)", underlying: error)
            }
        }
        guard !roots.isEmpty else { throw FolioError(.invalidContent, "trust needs at least one root public key") }
        trust = Trust(roots: roots)
    }

    /// Trusts the root public keys in these `.pub` files.
    public init(contentsOf paths: [String]) throws(FolioError) {
        do { trust = try Trust(files: paths) } catch { throw FolioError(.invalidContent, "\(error)", underlying: error) }
        guard !paths.isEmpty else { throw FolioError(.invalidContent, "trust needs at least one root public key") }
    }

    /// The key IDs of the trusted roots.
    public var rootKeyIDs: [String] { trust.roots.map(\.keyID) }
}

extension FolioError {
    /// The error for a manifest `trust` refused.
    package init(_ refusal: TrustError, url: String, hasContent: Bool) {
        let code = Code(refusal.kind)
        self.init(code, "refused \(url): \(refusal.description); the cache keeps its current version", url: url, underlying: refusal, hasContent: hasContent)
    }
}

extension FolioError.Code {
    /// The code of a refusal: named as the refusal is, but for a rollback, which is a downgrade.
    package init(_ kind: TrustError.Kind) {
        switch kind {
        case .unsigned: self = .unsigned
        case .badSignature: self = .badSignature
        case .unknownSigner: self = .unknownSigner
        case .revokedSigner: self = .revokedSigner
        case .tooFewSignatures: self = .tooFewSignatures
        case .expired: self = .expired
        case .untrustedKeyList: self = .untrustedKeyList
        case .rollback: self = .downgrade
        }
    }
}
