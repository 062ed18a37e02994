import Crypto
@testable import FolioACME
import FolioSupport
import FolioTestSupport
import Foundation
import SwiftASN1
import Testing
import X509

/// The challenge answers: HTTP-01 key authorizations and TLS-ALPN-01 certificates (RFC 8737).
@Suite("ACME: challenge answers")
struct ChallengeTests {
    @Test("the acmeIdentifier extension value is a DER OCTET STRING of SHA-256 of the key authorization")
    func acmeIdentifierBytes() {
        let keyAuthorization = "evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA.NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        let value = TLSALPNChallenge.extensionValue(keyAuthorization: keyAuthorization)
        #expect(value.count == 34)
        #expect(Array(value.prefix(2)) == [0x04, 0x20])
        #expect(Array(value.dropFirst(2)) == Array(SHA256.hash(data: Array(keyAuthorization.utf8))))
        #expect(TLSALPNChallenge.acmeIdentifierOID.description == "1.3.6.1.5.5.7.1.31")
    }

    @Test("a TLS-ALPN-01 certificate: self-signed, one dNSName, the critical acmeIdentifier extension")
    func tlsALPNCertificate() throws {
        let keyAuthorization = "token123.thumbprint456"
        let answer = try TLSALPNChallenge.certificate(domain: "edge.folio.test", keyAuthorization: keyAuthorization)
        let certificate = try Certificate(derEncoded: answer.certificateDER)
        #expect(try Certificate(pemEncoded: answer.certificatePEM) == certificate)
        let identifier = try #require(certificate.extensions.first { $0.oid == TLSALPNChallenge.acmeIdentifierOID })
        #expect(identifier.critical)
        #expect(Array(identifier.value) == TLSALPNChallenge.extensionValue(keyAuthorization: keyAuthorization))
        #expect(try certificate.extensions.subjectAlternativeNames.map(Array.init) == [.dnsName("edge.folio.test")])
        #expect(certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        let key = try P256.Signing.PrivateKey(pemRepresentation: answer.privateKeyPEM)
        #expect(certificate.publicKey == Certificate.PublicKey(key.publicKey))
        #expect(certificate.notValidBefore < Date() && certificate.notValidAfter > Date())

        // openssl reads it the same way: the extension by its OID, critical, with the digest.
        let dir = Harness.tempDir("acme-alpn")
        defer { Harness.cleanup(dir) }
        try FileIO.writeAtomically(Array(answer.certificatePEM.utf8), to: dir + "/alpn.pem")
        let text = try Harness.run("/usr/bin/openssl", ["x509", "-in", dir + "/alpn.pem", "-noout", "-text"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("1.3.6.1.5.5.7.1.31: critical"))
        #expect(text.stdout.contains("DNS:edge.folio.test"))
        let asn1 = try Harness.run("/usr/bin/openssl", ["asn1parse", "-in", dir + "/alpn.pem"])
        let digest = SHA256.hash(data: Array(keyAuthorization.utf8)).map { String(format: "%02X", $0) }.joined()
        let lines = asn1.stdout.split(separator: "\n")
        let oid = try #require(lines.firstIndex { $0.hasSuffix(":1.3.6.1.5.5.7.1.31") })
        #expect(lines[oid + 1].hasSuffix("BOOLEAN           :255"))
        #expect(lines[oid + 2].hasSuffix("[HEX DUMP]:0420" + digest))
    }

    @Test("the responder answers published tokens by token or path, and forgets withdrawn ones")
    func responder() throws {
        let responder = ACMEChallengeResponder()
        #expect(responder.isEmpty)
        let http = ACMEChallengeAnswer.http01(token: "abc_DEF-123", keyAuthorization: "abc_DEF-123.thumb")
        responder.publish(http)
        #expect(responder.http01Answer(token: "abc_DEF-123") == "abc_DEF-123.thumb")
        #expect(responder.http01Answer(path: "/.well-known/acme-challenge/abc_DEF-123") == "abc_DEF-123.thumb")
        #expect(responder.http01Answer(path: "/.well-known/acme-challenge/abc_DEF-123?x=1") == "abc_DEF-123.thumb")
        #expect(responder.http01Answer(path: "/.well-known/acme-challenge/other") == nil)
        #expect(responder.http01Answer(path: "/abc_DEF-123") == nil)
        let certificate = try TLSALPNChallenge.certificate(domain: "www.folio.test", keyAuthorization: "t.k")
        let alpn = ACMEChallengeAnswer.tlsALPN01(domain: "www.folio.test", certificate: certificate)
        responder.publish(alpn)
        #expect(responder.tlsALPNCertificate(for: "WWW.Folio.Test.") == certificate)
        #expect(responder.tlsALPNCertificate(for: "edge.folio.test") == nil)
        responder.withdraw(http)
        responder.withdraw(alpn)
        #expect(responder.http01Answer(token: "abc_DEF-123") == nil)
        #expect(responder.tlsALPNCertificate(for: "www.folio.test") == nil)
        #expect(responder.isEmpty)
    }

    @Test("challenges are chosen by preference, HTTP-01 first by default")
    func choosing() throws {
        func challenge(_ type: String, _ status: String = "pending") -> ACMEChallenge {
            ACMEChallenge(type: type, url: "https://ca.test/chall/\(type)", status: status, token: "tok", error: nil)
        }
        let authorization = ACMEAuthorization(
            status: "pending", identifier: ACMEIdentifier(value: "edge.folio.test"),
            challenges: [challenge("dns-01"), challenge("tls-alpn-01"), challenge("http-01")], wildcard: nil)
        let defaults = ACMEConfiguration(domains: ["edge.folio.test"], stateDirectory: "/unused")
        let plan = ACMEChallengePlan(types: defaults.challengeTypes, pollInterval: 1, pollTimeout: 1)
        #expect(try plan.choose(authorization).type == "http-01")
        let alpnFirst = ACMEChallengePlan(types: [.tlsALPN01, .http01], pollInterval: 1, pollTimeout: 1)
        #expect(try alpnFirst.choose(authorization).type == "tls-alpn-01")
        let dnsOnly = ACMEAuthorization(
            status: "pending", identifier: ACMEIdentifier(value: "edge.folio.test"), challenges: [challenge("dns-01")], wildcard: nil)
        let error = try #require(throws: ACMEError.self) { try plan.choose(dnsOnly) }
        #expect(error.description == "ACME authorization: edge.folio.test offers no challenge this client answers (offered: dns-01; answered: http-01, tls-alpn-01)")
        let key = ACMEAccountKey()
        guard case .http01(let token, let answer) = try plan.answer(challenge("http-01"), for: "edge.folio.test", key: key) else {
            Issue.record("not an HTTP-01 answer")
            return
        }
        #expect(token == "tok" && answer == "tok." + key.thumbprint)
        var bad = challenge("http-01")
        bad.token = "../etc"
        #expect(throws: ACMEError.self) { try plan.answer(bad, for: "edge.folio.test", key: key) }
    }
}
