import FolioSupport
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `folio-edge validate`: everything a start would check, without listening: the certificates
/// and keys, the token files, the published directory's manifest (under `--trust`), the ports.
package enum EdgePreflight {
    /// Every problem, each naming its option; empty when a start would get past them.
    package static func problems(_ config: EdgeConfiguration, socketsInherited: Bool) -> [String] {
        var found = certificateProblems(config.listener)
        switch config.mode {
        case .origin(let mode):
            let loader = SiteLoader(root: mode.root, memoryBudget: mode.memoryBudget, manifestHintOverride: mode.manifestHintOverride, trust: mode.trust)
            if mode.deployTokenFile == nil || !AwaitingDeploy.isEmpty(mode.root) {
                do { _ = try loader.load(previous: nil) } catch { found.append("--root \(mode.root): cannot serve it: \(error)") }
            }
            found += tokenProblems("--deploy-token-file", mode.deployTokenFile, what: "deploy")
        case .cacheTier(let tier):
            found += tokenProblems("--purge-token-file", tier.purgeTokenFile, what: "purge")
        }
        if !socketsInherited { found += portProblems(config.listener) }
        return found
    }

    /// What a start would do that is not a problem but worth saying: an empty root waiting for
    /// a first deploy; how each `s3://` origin is read (which credentials, from where).
    package static func notes(_ config: EdgeConfiguration) -> [String] {
        if case .cacheTier(let tier) = config.mode {
            return tier.origins.compactMap { origin in
                guard case .s3(let bucket) = origin else { return nil }
                return "--origin \(bucket.signingNote)"
            }
        }
        guard case .origin(let mode) = config.mode, mode.deployTokenFile != nil, AwaitingDeploy.isEmpty(mode.root) else { return [] }
        let made = FileIO.exists(mode.root) ? "" : " (made at start)"
        return ["--root \(mode.root) holds no manifest.plist yet\(made): the edge will answer 503 until a first deploy (folio-build publish DIR URL)"]
    }

    static func tokenProblems(_ option: String, _ path: String?, what: String) -> [String] {
        guard let path else { return [] }
        do {
            _ = try BearerToken.read(path, what: what)
            return []
        } catch { return ["\(option) \(error)"] }
    }

    static func certificateProblems(_ listener: EdgeListener) -> [String] {
        listener.tls.compactMap { files in
            do {
                _ = try CertificatePair.load(certificate: files.certificate, key: files.key)
                return nil
            } catch { return "--tls-cert \(files.certificate) with --tls-key \(files.key): \(error)" }
        }
    }

    /// Each port the edge would listen on, bound for a moment (never listening) to see it is free.
    static func portProblems(_ listener: EdgeListener) -> [String] {
        var wanted: [(option: String, host: String, port: Int)] = [("--port", listener.host, listener.port)]
        if let httpPort = listener.httpPort { wanted.append(("--http-port", listener.host, httpPort)) }
        if let admin = listener.adminListen { wanted.append(("--admin-listen", admin.host, admin.port)) }
        return wanted.compactMap { want in
            guard want.port != 0 else { return nil }
            guard let error = bindError(want.host, want.port) else { return nil }
            return "\(want.option) \(want.port): cannot listen on \(want.host):\(want.port): \(error)"
        }
    }

    /// Why `host:port` cannot be bound now; nil when it can.
    static func bindError(_ host: String, _ port: Int) -> String? {
        let address: SocketAddress
        do { address = try SocketAddress.makeAddressResolvingHost(host, port: port) } catch { return "\(error)" }
        #if canImport(Glibc)
            let fd = socket(Int32(address.protocol.rawValue), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(Int32(address.protocol.rawValue), SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        var one: CInt = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size))
        let result = address.withSockAddr { bind(fd, $0, socklen_t($1)) }
        return result == 0 ? nil : String(cString: strerror(errno)) + (errno == EADDRINUSE ? " (another program listens there)" : "")
    }
}
