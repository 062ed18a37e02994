import Crypto
import FolioSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The state directory: `account.key` (PEM, 0600) and `account.json` (account and directory
/// URLs), `certificate.pem` (the chain) and `certificate.key` (PEM, 0600). Every file is
/// written whole under a temporary name, fsynced and renamed into place.
///
/// The certificate and its key change together: both are first written as `.new` files, the
/// chain last (that is the commit point), then renamed over the old pair. A crash before the
/// commit leaves the old pair and a stray key that the next load removes; a crash after it
/// leaves `.new` files that the next load renames into place.
struct ACMEStateStore {
    let path: String

    var accountKeyPath: String { path + "/account.key" }
    var accountPath: String { path + "/account.json" }
    var certificatePath: String { path + "/certificate.pem" }
    var certificateKeyPath: String { path + "/certificate.key" }

    struct Account: Codable {
        var account: String
        var directory: String
    }

    /// Creates the directory (mode 0700) if missing.
    func prepare() throws(ACMEError) {
        let parent = FileIO.parent(of: path)
        if !parent.isEmpty { try state { () throws(FileError) in try FileIO.makeDirectory(parent) } }
        if mkdir(path, 0o700) != 0, errno != EEXIST { throw ACMEError(step: "state", FileError("create directory", path).description) }
    }

    /// Holds an exclusive lock on the directory itself (a descriptor to close), so that two
    /// processes, or two tasks, never renew into it at once; no lock file is left behind.
    func lock() throws(ACMEError) -> Int32 {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ACMEError(step: "state", FileError("open directory", path).description) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let error = FileError("lock", path)
            close(fd)
            let busy = error.errno == EWOULDBLOCK
            throw ACMEError(step: "state", busy ? "\(path) is locked: a certificate is being obtained into it already" : error.description)
        }
        return fd
    }

    /// The account key, nil when there is none yet; an error when the file is not a P-256 key
    /// (the account would be lost if it were replaced).
    func loadAccountKey() throws(ACMEError) -> ACMEAccountKey? {
        guard FileIO.exists(accountKeyPath) else { return nil }
        let bytes = try state { () throws(FileError) in try FileIO.read(accountKeyPath) }
        guard let key = try? ACMEAccountKey(pem: String(decoding: bytes, as: UTF8.self)) else {
            throw ACMEError(step: "state", "\(accountKeyPath) is not a P-256 private key (PEM); move it away to register a new account")
        }
        return key
    }

    /// The account URL registered at `directoryURL`, if the state records one.
    func loadAccountURL(directoryURL: String) -> String? {
        guard let bytes = try? FileIO.read(accountPath), let account = try? JSONDecoder().decode(Account.self, from: Data(bytes)) else {
            return nil
        }
        return account.directory == directoryURL ? account.account : nil
    }

    /// Records the account (and its key, when `newKey`).
    func saveAccount(key: ACMEAccountKey, newKey: Bool, url: String, directoryURL: String) throws(ACMEError) {
        if newKey { try write(Array(key.pem.utf8), to: accountKeyPath, mode: 0o600) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(Account(account: url, directory: directoryURL)) else {
            throw ACMEError(step: "state", "cannot encode the account record")
        }
        try write(Array(json) + [0x0A], to: accountPath, mode: 0o644)
        try syncDirectory()
    }

    /// The certificate in the directory, if its chain parses, is valid now and matches its key.
    /// An interrupted replacement is settled first, unless another obtain holds the lock (it
    /// settles its own).
    func loadCertificate(now: Date) -> ACMEIssued? {
        if let fd = try? lock() {
            try? recover()
            close(fd)
        }
        guard let chain = try? FileIO.read(certificatePath), let keyPEM = try? FileIO.read(certificateKeyPath),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: String(decoding: keyPEM, as: UTF8.self)),
            let leaf = try? ACMEChainCheck.check(chainPEM: chain, key: key, domains: nil, now: now)
        else { return nil }
        return issued(chain: chain, keyPEM: keyPEM, leaf: leaf)
    }

    /// Checks `chain` against `key` and `domains`, then puts both in place (see the type's
    /// comment); the current pair stays unless the new one is good and written whole.
    func saveCertificate(chain: [UInt8], key: P256.Signing.PrivateKey, domains: [String], now: Date) throws(ACMEError) -> ACMEIssued {
        let leaf = try ACMEChainCheck.check(chainPEM: chain, key: key, domains: domains, now: now)
        let keyPEM = Array(key.pemRepresentation.utf8)
        try recover()
        try write(keyPEM, to: certificateKeyPath + ".new", mode: 0o600)
        try write(chain, to: certificatePath + ".new", mode: 0o644)
        try syncDirectory()
        try recover()
        return issued(chain: chain, keyPEM: keyPEM, leaf: leaf)
    }

    /// Finishes a committed replacement (a `certificate.pem.new` exists), or removes the key
    /// of one that never committed.
    func recover() throws(ACMEError) {
        let newChain = certificatePath + ".new"
        let newKey = certificateKeyPath + ".new"
        if FileIO.exists(newChain) {
            if FileIO.exists(newKey) { try rename(newKey, to: certificateKeyPath) }
            try rename(newChain, to: certificatePath)
            try syncDirectory()
        } else if FileIO.exists(newKey) {
            unlink(newKey)
        }
    }

    private func issued(chain: [UInt8], keyPEM: [UInt8], leaf: ACMEChainCheck.Leaf) -> ACMEIssued {
        ACMEIssued(
            chainPEM: chain, keyPEM: keyPEM, chainPath: certificatePath, keyPath: certificateKeyPath, notBefore: leaf.notBefore,
            notAfter: leaf.notAfter, domains: leaf.domains, serialNumber: leaf.serialNumber)
    }

    /// Writes `bytes` whole with `mode` from the start (a key is never readable by others):
    /// under a temporary name, fsynced, then renamed over `target`. FileIO's atomic writes
    /// create 0644 files, and its exclusive one fails on a temporary file a crash left behind.
    private func write(_ bytes: [UInt8], to target: String, mode: mode_t) throws(ACMEError) {
        let temporary = path + "/.tmp-" + FileIO.lastComponent(of: target)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw ACMEError(step: "state", FileError("create", temporary).description) }
        var failure: FileError?
        if fchmod(fd, mode) != 0 { failure = FileError("chmod", temporary) }
        var written = 0
        while failure == nil, written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0, errno != EINTR { failure = FileError("write", temporary) }
            written += max(n, 0)
        }
        if failure == nil, fsync(fd) != 0 { failure = FileError("fsync", temporary) }
        close(fd)
        if failure == nil, Glibc.rename(temporary, target) != 0 { failure = FileError("rename into place", target) }
        if let failure {
            unlink(temporary)
            throw ACMEError(step: "state", failure.description)
        }
    }

    private func rename(_ from: String, to: String) throws(ACMEError) {
        guard Glibc.rename(from, to) == 0 else { throw ACMEError(step: "state", FileError("rename into place", to).description) }
    }

    private func syncDirectory() throws(ACMEError) {
        try state { () throws(FileError) in try FileIO.syncDirectory(path) }
    }

    /// A file-system failure as a state error.
    private func state<T>(_ body: () throws(FileError) -> T) throws(ACMEError) -> T {
        do { return try body() } catch { throw ACMEError(step: "state", error.description) }
    }
}
