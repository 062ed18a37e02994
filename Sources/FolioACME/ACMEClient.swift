import Foundation
import NIOHTTP1

/// The protocol client for one directory and one account key: the directory's URLs, fresh
/// nonces (RFC 8555 §7.2), and signed POSTs with `badNonce` retried (§6.5).
actor ACMEClient {
    let transport: ACMETransport
    let directoryURL: String
    let directory: ACMEDirectory
    let key: ACMEAccountKey
    /// The account URL once registered or loaded: requests are then signed with `kid`.
    var accountURL: String?
    /// The newest `Replay-Nonce` the server sent, used by the next request.
    private var nonce: String?
    /// How many `badNonce` rejections in a row one request survives.
    static let badNonceRetries = 8

    private init(transport: ACMETransport, directoryURL: String, directory: ACMEDirectory, key: ACMEAccountKey) {
        self.transport = transport
        self.directoryURL = directoryURL
        self.directory = directory
        self.key = key
    }

    /// Fetches the directory at `url`; an error when it does not answer with a directory object.
    static func connect(transport: ACMETransport, directoryURL url: String, key: ACMEAccountKey) async throws -> ACMEClient {
        let response = try await transport.send(.GET, url, step: "directory")
        try Self.check(response, step: "directory", url: url)
        guard let directory = try? JSONDecoder().decode(ACMEDirectory.self, from: Data(response.body)) else {
            throw ACMEError(step: "directory", "\(url) did not answer with an ACME directory (\(Self.excerpt(response.body)))")
        }
        for endpoint in [directory.newNonce, directory.newAccount, directory.newOrder] where URL(string: endpoint)?.host == nil {
            throw ACMEError(step: "directory", "\(url) names \(endpoint.debugDescription), not an absolute URL")
        }
        return ACMEClient(transport: transport, directoryURL: url, directory: directory, key: key)
    }

    /// A nonce: the one the last response brought, or a fresh one from newNonce.
    private func takeNonce() async throws -> String {
        if let nonce {
            self.nonce = nil
            return nonce
        }
        let response = try await transport.send(.HEAD, directory.newNonce, step: "newNonce")
        try Self.check(response, step: "newNonce", url: directory.newNonce)
        guard let fresh = response.header("Replay-Nonce"), !fresh.isEmpty else {
            throw ACMEError(step: "newNonce", "\(directory.newNonce) sent no Replay-Nonce")
        }
        return fresh
    }

    /// POSTs `payload` (nil: POST-as-GET) signed with the account key to `url` and returns a
    /// successful response; a problem document becomes an ACMEError for `step`. Signed with
    /// `jwk` until the account has a URL, with `kid` after.
    func post(_ url: String, payload: [UInt8]?, step: String, accept: String? = nil) async throws -> ACMEResponse {
        var attempt = 0
        while true {
            let nonce = try await takeNonce()
            let keyID: JWS.KeyID = accountURL.map { .kid($0) } ?? .jwk
            let body = try JWS.sign(payload: payload, url: url, nonce: nonce, key: key, keyID: keyID)
            let response = try await transport.send(.POST, url, body: body, accept: accept, step: step)
            if let next = response.header("Replay-Nonce"), !next.isEmpty { self.nonce = next }
            if attempt < Self.badNonceRetries, response.status >= 400, Self.problem(response)?.type == ACMEProblem.badNonce {
                attempt += 1
                continue
            }
            try Self.check(response, step: step, url: url)
            return response
        }
    }

    /// POSTs an Encodable payload.
    func post(_ url: String, json: some Encodable, step: String) async throws -> ACMEResponse {
        try await post(url, payload: Array(try JSONEncoder().encode(json)), step: step)
    }

    /// POST-as-GET (RFC 8555 §6.3) of an ACME object, decoded.
    func fetch<Object: Decodable>(_ type: Object.Type, _ url: String, step: String) async throws -> (Object, ACMEResponse) {
        let response = try await post(url, payload: nil, step: step)
        return (try Self.decode(type, response, step: step, url: url), response)
    }

    /// Throws for an error status: the problem document's type and detail when there is one.
    static func check(_ response: ACMEResponse, step: String, url: String) throws(ACMEError) {
        guard response.status >= 300 else { return }
        if let problem = problem(response) { throw ACMEError(step: step, problem: problem, httpStatus: response.status) }
        throw ACMEError(step: step, "HTTP \(response.status) from \(url) (\(excerpt(response.body)))")
    }

    /// The problem document in a response, if its body is one (whatever its Content-Type:
    /// some servers label it plain JSON).
    static func problem(_ response: ACMEResponse) -> ACMEProblem? {
        guard let problem = try? JSONDecoder().decode(ACMEProblem.self, from: Data(response.body)) else { return nil }
        return problem.type != nil || problem.detail != nil ? problem : nil
    }

    /// A response body decoded as `type`; an error naming the step otherwise.
    static func decode<Object: Decodable>(_ type: Object.Type, _ response: ACMEResponse, step: String, url: String) throws(ACMEError) -> Object {
        do {
            return try JSONDecoder().decode(type, from: Data(response.body))
        } catch {
            throw ACMEError(step: step, "\(url) answered with no valid \(type) object (\(excerpt(response.body)))")
        }
    }

    /// The start of a body for an error message: printable ASCII, at most 80 characters.
    static func excerpt(_ body: [UInt8]) -> String {
        guard !body.isEmpty else { return "empty body" }
        let text = String(decoding: body.prefix(80).map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        return "body: " + text + (body.count > 80 ? "…" : "")
    }
}
