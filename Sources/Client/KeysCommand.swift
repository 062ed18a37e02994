import ArgumentParser
import FolioKitCore
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// `folio keys`: the keys and key lists of signed releases.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Make signing keys and root-signed key lists for signed releases.",
        subcommands: [GenerateKeyCommand.self, AuthorizeCommand.self, ShowKeyCommand.self])
}

/// `folio keys generate PATH`
struct GenerateKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Write a new Ed25519 key pair: PATH.key (secret, mode 0600) and PATH.pub.")

    @Argument(help: "Where to write the pair, without extension (e.g. keys/root).") var path: String

    func run() throws {
        let key = SecretKey.generate()
        let secret = path + ".key"
        let pub = path + ".pub"
        for file in [secret, pub] where FileIO.exists(file) {
            throw CLIError("\(file) already exists; a key is never overwritten: choose another path or remove it first")
        }
        do {
            try FileIO.createExclusive(Array(key.fileText.utf8), at: secret, mode: 0o600)
            try FileIO.createExclusive(Array(key.publicKey.fileText.utf8), at: pub, mode: 0o644)
        } catch {
            throw CLIError("\(error)")
        }
        print("key \(key.keyID): secret key \(secret) (keep it private), public key \(pub)")
    }
}

/// `folio keys authorize --root ROOT.key SIGNER.pub… --output FILE`
struct AuthorizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authorize",
        abstract: "Sign a key list with the root key: the signing keys that may sign manifests, until when, and how many must.")

    @Option(help: "The root's secret key (kept offline).") var root: String
    @Argument(help: "The public keys (.pub) of the signing keys to authorize.") var signers: [String]
    @Option(help: "Signatures by distinct listed keys each manifest needs.") var threshold = 1
    @Option(help: "How long the list is accepted, like 90d.") var validFor = "365d"
    @Option(parsing: .upToNextOption, help: "Public keys no longer authorized; their signatures are refused as revoked.")
    var revoke: [String] = []
    @Option(help: "The list's version; each list must be newer than the last (default: the time in seconds).")
    var listVersion: Int?
    @Option(help: "Where to write the key list (give it to folio-build --key-list).") var output: String

    func validate() throws {
        guard !signers.isEmpty else { throw ValidationError("name at least one signing key's .pub file") }
        guard threshold >= 1, threshold <= signers.count else {
            throw ValidationError("--threshold must be from 1 to the number of signing keys (\(signers.count))")
        }
        if DurationText.seconds(validFor) == nil { throw ValidationError(DurationText.problem("--valid-for", validFor)) }
        if let listVersion, listVersion < 1 { throw ValidationError("--list-version must be at least 1") }
    }

    func run() throws {
        if let problem = ValidityCheck.problem(option: "--valid-for", validFor, what: "the key list") {
            FileHandle.standardError.write(Data("folio: warning: \(problem)\n".utf8))
        }
        do {
            let rootKey: SecretKey
            do { rootKey = try SecretKey(contentsOf: root) } catch { throw CLIError("--root: \(error)") }
            let keys = try signers.map { path throws(KeyFileError) in try PublicKey(contentsOf: path) }
            let revoked = try revoke.map { path throws(KeyFileError) in try PublicKey(contentsOf: path) }
            if let both = revoked.first(where: { keys.contains($0) }) {
                throw CLIError("key \(both.keyID) is both authorized and revoked")
            }
            guard Set(keys).count == keys.count else { throw CLIError("a signing key is named twice") }
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let list = KeyList(
                version: listVersion ?? Int(now.timeIntervalSince1970), createdAt: now,
                expiresAt: now.addingTimeInterval(Double(DurationText.seconds(validFor) ?? 0)), threshold: threshold,
                root: rootKey.publicKey, keys: keys, revoked: revoked.map(\.keyID))
            try FileIO.writeAtomically(SignedKeyList(signing: list, with: rootKey).bytes, to: output)
            print(
                "key list version \(list.version): \(keys.map(\.keyID).joined(separator: ", ")) (threshold \(threshold)), signed by root \(rootKey.keyID), valid until \(PlistDates.formatISO8601(list.expiresAt)); wrote \(output)")
        } catch let error as KeyFileError {
            throw CLIError("\(error)")
        } catch let error as FileError {
            throw CLIError("\(error)")
        }
    }
}

/// `folio keys show FILE`
struct ShowKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Describe a public key, a key list or a signed manifest.")

    @Argument(help: "A .pub file, a key list (keylist.plist) or a manifest.plist.") var file: String
    /// `--trust ROOT.pub` (or FOLIO_TRUST) checks the file against that root too.
    @OptionGroup var options: ClientOptions

    func run() throws {
        let bytes: [UInt8]
        do { bytes = try FileIO.read(file) } catch { throw CLIError("\(error)") }
        if let text = String(validating: bytes, as: UTF8.self), text.hasPrefix(KeyFile.publicHeader) {
            do { print("public key \(try PublicKey(fileText: text, path: file).keyID)") } catch { throw CLIError("\(error)") }
            return
        }
        if let text = String(validating: bytes, as: UTF8.self), text.hasPrefix(KeyFile.secretHeader) {
            // Nothing of a secret key is printed, not even its id: the public half says it all.
            let pub = KeyFile.sibling(file, "pub")
            throw CLIError("\(file) is a secret key (keep it private); describe its public half instead: folio keys show \(pub)")
        }
        let trusted = try options.trustedRoots()
        if let signed = try? SignedManifest.decode(bytes) {
            print("signed manifest, version \(signed.manifest.version), expires \(signed.manifest.expiresAt.map(PlistDates.formatISO8601) ?? "never")")
            print("signed by:   \(signed.signatures.map(\.keyID).joined(separator: ", "))")
            print("valid under its key list: \(signed.validSigners.joined(separator: ", "))")
            try describe(signed.keyList)
            if let trusted {
                do {
                    _ = try trusted.verify(bytes)
                    print("verified:    yes, under root \(trusted.rootIDs)")
                } catch { throw CLIError("not verified: \(error)", exitCode: TrustExit.code(error.kind)) }
            }
            return
        }
        if let list = try? SignedKeyList(bytes: bytes) {
            try describe(list)
            if let trusted, !trusted.roots.contains(list.keyList.root) {
                throw CLIError("not verified: signed by root \(list.keyList.root.keyID), not \(trusted.rootIDs)", exitCode: TrustExit.code(.untrustedKeyList))
            }
            return
        }
        throw CLIError("\(file) is not a Folio public key, key list or signed manifest")
    }

    private func describe(_ signed: SignedKeyList) throws {
        let list = signed.keyList
        print("key list version \(list.version), created \(PlistDates.formatISO8601(list.createdAt)), expires \(PlistDates.formatISO8601(list.expiresAt))")
        print("root:        \(list.root.keyID) (signature \(signed.isSignedByItsRoot ? "valid" : "INVALID"))")
        print("keys:        \(list.keys.map(\.keyID).joined(separator: ", ")) (threshold \(list.threshold))")
        if !list.revoked.isEmpty { print("revoked:     \(list.revoked.joined(separator: ", "))") }
        if !signed.isSignedByItsRoot { throw CLIError("the key list's root signature does not verify", exitCode: TrustExit.code(.untrustedKeyList)) }
    }
}

/// The exit codes of refused signed content (documented in docs/signing.md and docs/exit-codes.md).
enum TrustExit {
    static let codes: [FolioError.Code: Int32] = [
        .unsigned: 10, .badSignature: 11, .unknownSigner: 12, .revokedSigner: 13, .tooFewSignatures: 14, .expired: 15,
        .untrustedKeyList: 16, .downgrade: 17, .maintenance: 4, .updateRequired: 5, .edgeUnreachable: 3,
    ]

    static func code(_ kind: TrustError.Kind) -> Int32 {
        codes[FolioError.Code(kind)] ?? 1
    }
}

extension FolioError {
    /// The exit code `folio` ends with for this error: a refusal's own code, 3 for an edge lost mid-sync, else 1.
    var exitCode: Int32 { TrustExit.codes[code] ?? 1 }
}
