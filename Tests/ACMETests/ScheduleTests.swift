@testable import FolioACME
import FolioSupport
import Foundation
import Testing

/// Renewal dates, backoff delays, `Retry-After`, and the configuration's checks.
@Suite("ACME: schedule and configuration")
struct ScheduleTests {
    @Test("renewal comes at the configured fraction of the lifetime")
    func renewalDate() {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let end = start.addingTimeInterval(90 * 86400)
        #expect(ACMERenewal.date(notBefore: start, notAfter: end, fraction: 2.0 / 3.0) == start.addingTimeInterval(60 * 86400))
        #expect(ACMERenewal.date(notBefore: start, notAfter: end, fraction: 0.5) == start.addingTimeInterval(45 * 86400))
        let issued = ACMEIssued(
            chainPEM: [], keyPEM: [], chainPath: "", keyPath: "", notBefore: start, notAfter: start.addingTimeInterval(3 * 3600),
            domains: ["a.test", "b.test"], serialNumber: "01")
        #expect(issued.renewalDate(fraction: 2.0 / 3.0) == start.addingTimeInterval(2 * 3600))
        #expect(issued.covers(["b.test"]) && issued.covers(["a.test", "b.test"]) && !issued.covers(["a.test", "c.test"]))
        #expect(ACMEConfiguration(domains: ["a.test"], stateDirectory: "/x").renewalFraction == 2.0 / 3.0)
    }

    @Test("backoff doubles from the minimum, is capped at the maximum, and jitter stays within both")
    func backoffBounds() {
        let backoff = ACMEBackoff(minimum: 10, maximum: 300)
        #expect((1...7).map { backoff.delay(attempt: $0, jitter: 0) } == [10, 20, 40, 80, 160, 300, 300])
        #expect(backoff.delay(attempt: 1, jitter: 0.99) == 10)
        #expect(backoff.delay(attempt: 4, jitter: 0.5) == 60)
        #expect(backoff.delay(attempt: 1_000_000, jitter: 0) == 300)
        var random = SystemRandomNumberGenerator()
        for attempt in [0, 1, 2, 3, 5, 8, 13, 64, 1000, Int.max] {
            for _ in 0..<50 {
                let delay = backoff.delay(attempt: attempt, jitter: Double.random(in: 0..<1, using: &random))
                #expect((10...300).contains(delay), "attempt \(attempt): \(delay)")
            }
        }
        #expect(ACMEBackoff(minimum: 50, maximum: 5).maximum == 50)
    }

    @Test("Retry-After: delay seconds or an HTTP date, nothing else")
    func retryAfter() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(RetryAfter.seconds("5", now: now) == 5)
        #expect(RetryAfter.seconds(" 120 ", now: now) == 120)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2015 07:28:30 GMT", now: now) == 30)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2015 07:27:00 GMT", now: now) == 0)
        #expect(RetryAfter.seconds("-3", now: now) == nil)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
        #expect(RetryAfter.seconds(nil, now: now) == nil)
    }

    @Test("the configuration lowercases names and refuses what HTTP-01 cannot prove")
    func configuration() throws {
        let ok = try ACMEConfiguration(domains: ["Edge.Folio.Test.", "www.folio.test"], stateDirectory: "/s").validated()
        #expect(ok.domains == ["edge.folio.test", "www.folio.test"])
        #expect(ok.directoryURL == "https://acme-v02.api.letsencrypt.org/directory")
        let mailto = try ACMEConfiguration(domains: ["a.test"], contactEmail: "mailto:ops@folio.test", stateDirectory: "/s").validated()
        #expect(mailto.contactEmail == "ops@folio.test")
        func refusal(_ domains: [String]) -> String {
            do {
                _ = try ACMEConfiguration(domains: domains, stateDirectory: "/s").validated()
                return "accepted"
            } catch { return error.description }
        }
        #expect(refusal(["*.folio.test"]) == "ACME configuration: domain *.folio.test: wildcards need DNS-01, which this client does not do")
        #expect(refusal(["192.0.2.1"]) == "ACME configuration: domain 192.0.2.1: an IP address, not a DNS name")
        #expect(refusal(["localhost"]) == "ACME configuration: domain localhost: not a DNS name")
        #expect(refusal(["a..test"]) == "ACME configuration: domain a..test: not a DNS name")
        #expect(refusal(["-a.test"]) == "ACME configuration: domain -a.test: not a DNS name")
        #expect(refusal([]) == "ACME configuration: no domain to certify")
        #expect(refusal(["a.test", "A.test"]) == "ACME configuration: a domain is listed twice")
        var config = ACMEConfiguration(directoryURL: "not a url", domains: ["a.test"], stateDirectory: "/s")
        #expect(throws: ACMEError.self) { try config.validated() }
        config.directoryURL = "https://ca.test/dir"
        config.renewalFraction = 1
        #expect(throws: ACMEError.self) { try config.validated() }
    }
}

/// Problem documents (RFC 7807) and the one-line errors made of them.
@Suite("ACME: problem documents")
struct ProblemTests {
    static func response(_ status: Int, _ body: String, type: String = "application/problem+json") -> ACMEResponse {
        ACMEResponse(status: status, headers: ["Content-Type": type], body: Array(body.utf8))
    }

    @Test("a problem document becomes one line naming the step, the ACME error type and the detail")
    func problemText() throws {
        let body = #"{"type":"urn:ietf:params:acme:error:rejectedIdentifier","detail":"Error creating new order :: Cannot issue\nfor \"bad.test\"","status":400}"#
        let error = try #require(throws: ACMEError.self) {
            try ACMEClient.check(Self.response(400, body), step: "newOrder", url: "https://ca.test/new-order")
        }
        #expect(error.description == #"ACME newOrder: rejectedIdentifier: Error creating new order :: Cannot issue for "bad.test" (HTTP 400)"#)
        #expect(error.problemType == "urn:ietf:params:acme:error:rejectedIdentifier")
        #expect(!error.description.contains("\n"))
    }

    @Test("subproblems name their identifiers; other namespaces keep the whole type")
    func subproblemsAndForeignTypes() throws {
        let body = #"""
            {"type":"urn:ietf:params:acme:error:malformed","detail":"Some identifiers were rejected","subproblems":[
              {"type":"urn:ietf:params:acme:error:rejectedIdentifier","detail":"Invalid underscore","identifier":{"type":"dns","value":"_x.test"}},
              {"type":"urn:ietf:params:acme:error:caa","identifier":{"type":"dns","value":"y.test"}}]}
            """#
        let error = try #require(throws: ACMEError.self) { try ACMEClient.check(Self.response(400, body), step: "newOrder", url: "u") }
        #expect(
            error.description
                == "ACME newOrder: malformed: Some identifiers were rejected; _x.test rejectedIdentifier: Invalid underscore; y.test caa (HTTP 400)")
        let foreign = try #require(throws: ACMEError.self) {
            try ACMEClient.check(Self.response(403, #"{"type":"https://ca.test/errors/quota","detail":"slow down"}"#), step: "finalize", url: "u")
        }
        #expect(foreign.description == "ACME finalize: https://ca.test/errors/quota: slow down (HTTP 403)")
    }

    @Test("an error status without a problem document names the URL and the start of the body")
    func notAProblem() throws {
        let error = try #require(throws: ACMEError.self) {
            try ACMEClient.check(Self.response(500, "<html>\u{1}oops</html>", type: "text/html"), step: "directory", url: "https://ca.test/dir")
        }
        #expect(error.description == "ACME directory: HTTP 500 from https://ca.test/dir (body: <html>?oops</html>)")
        #expect(error.problem == nil)
        let long = ACMEError(step: "x", String(repeating: "y", count: 1000))
        #expect(long.description.count < 420)
        #expect(throws: Never.self) { try ACMEClient.check(Self.response(201, "{}"), step: "x", url: "u") }
    }
}
