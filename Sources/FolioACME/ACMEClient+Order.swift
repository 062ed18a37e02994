import FolioSupport
import Foundation

/// The issuance exchange (RFC 8555 §7.3–7.4): account, order, authorizations, finalize, and
/// the certificate chain.
extension ACMEClient {
    /// Registers the account key, or finds the account it already has (the server answers 200
    /// with the same URL); returns the account URL, which signs later requests.
    func register(contact: String?) async throws -> String {
        accountURL = nil
        let request = ACMENewAccount(contact: contact.map { ["mailto:" + $0] })
        let response = try await post(directory.newAccount, json: request, step: "newAccount")
        guard let location = response.header("Location"), URL(string: location)?.host != nil else {
            throw ACMEError(step: "newAccount", "\(directory.newAccount) sent no account URL (Location)")
        }
        accountURL = location
        return location
    }

    /// Signs later requests with an account URL registered before.
    func useAccount(_ url: String) { accountURL = url }

    /// Orders a certificate for `domains`, proves control of each with a challenge answered
    /// through `responder`, finalizes with `csr` (DER) and returns the PEM chain.
    func issue(domains: [String], csr: [UInt8], responder: ACMEChallengeResponder, plan: ACMEChallengePlan) async throws -> [UInt8] {
        let request = ACMENewOrder(identifiers: domains.map { ACMEIdentifier(value: $0) })
        let created = try await post(directory.newOrder, json: request, step: "newOrder")
        guard let orderURL = created.header("Location"), URL(string: orderURL)?.host != nil else {
            throw ACMEError(step: "newOrder", "\(directory.newOrder) sent no order URL (Location)")
        }
        var order = try Self.decode(ACMEOrder.self, created, step: "newOrder", url: directory.newOrder)
        if order.status == "pending" {
            try await authorize(order.authorizations, responder: responder, plan: plan)
            order = try await poll(ACMEOrder.self, orderURL, step: "order", plan: plan) { $0.status == "pending" }
        }
        if order.status == "ready" {
            let finalized = try await post(order.finalize, json: ACMEFinalize(csr: Base64URL.encode(csr)), step: "finalize")
            order = try Self.decode(ACMEOrder.self, finalized, step: "finalize", url: order.finalize)
            order = try await poll(ACMEOrder.self, orderURL, step: "order", plan: plan) { $0.status == "processing" || $0.status == "ready" }
        }
        guard order.status == "valid", let certificateURL = order.certificate else {
            throw Self.failure(step: "order", "order \(orderURL) is \(order.status)", order.error)
        }
        let chain = try await post(certificateURL, payload: nil, step: "certificate", accept: "application/pem-certificate-chain")
        return chain.body
    }

    /// Answers one challenge for each pending authorization (all registered with the responder
    /// before the server hears they are ready), then waits for each to become valid. The
    /// answers are withdrawn afterwards, whatever happened.
    private func authorize(_ urls: [String], responder: ACMEChallengeResponder, plan: ACMEChallengePlan) async throws {
        var answered: [(url: String, answer: ACMEChallengeAnswer)] = []
        defer { for item in answered { responder.withdraw(item.answer) } }
        for url in urls {
            let (authorization, _) = try await fetch(ACMEAuthorization.self, url, step: "authorization")
            if authorization.status == "valid" { continue }
            guard authorization.status == "pending" else {
                throw Self.failure(step: "authorization", "\(authorization.identifier.value) is \(authorization.status)", nil)
            }
            let challenge = try plan.choose(authorization)
            let answer = try plan.answer(challenge, for: authorization.identifier.value, key: key)
            responder.publish(answer)
            answered.append((url, answer))
            if challenge.status == "pending" { _ = try await post(challenge.url, payload: Array("{}".utf8), step: "challenge") }
        }
        for (url, answer) in answered {
            let authorization = try await poll(ACMEAuthorization.self, url, step: "authorization", plan: plan) { $0.status == "pending" }
            guard authorization.status == "valid" else {
                let error = authorization.challenges.first { $0.type == answer.type.rawValue }?.error
                let what = "\(answer.type.rawValue) for \(authorization.identifier.value) is \(authorization.status)"
                throw Self.failure(step: "challenge", what, error)
            }
        }
    }

    /// The longest wait a `Retry-After` gets while polling, in seconds.
    static let longestRetryAfter: Double = 60

    /// Fetches `url` until `pending` is false for it, waiting as `Retry-After` says (within
    /// bounds) or with a growing interval; an error when it stays pending past the plan's limit.
    private func poll<Object: Decodable>(
        _ type: Object.Type, _ url: String, step: String, plan: ACMEChallengePlan, pending: (Object) -> Bool
    ) async throws -> Object {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(plan.pollTimeout * 1000))
        var interval = plan.pollInterval
        while true {
            let (object, response) = try await fetch(type, url, step: step)
            if !pending(object) { return object }
            let asked = RetryAfter.seconds(response.header("Retry-After"), now: Date()) ?? 0
            let wait = min(max(asked, interval), Self.longestRetryAfter)
            guard clock.now + .milliseconds(Int64(wait * 1000)) < deadline else {
                throw ACMEError(step: step, "\(url) still pending after \(Int(plan.pollTimeout)) s")
            }
            try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
            interval = min(interval * 1.5, 10)
        }
    }

    /// An error for a failed object: its problem document when it has one, else `text`.
    private static func failure(step: String, _ text: String, _ problem: ACMEProblem?) -> ACMEError {
        guard let problem else { return ACMEError(step: step, text) }
        var error = ACMEError(step: step, problem: problem, httpStatus: nil)
        error.message = text + ": " + error.message
        return error
    }
}
