import Crypto
@testable import FolioACME
import FolioTestSupport
import Foundation
import Testing

/// Base64url, JWK thumbprints and the JWS bodies ACME requests carry.
@Suite("ACME: JOSE encoding")
struct JOSETests {
    @Test("base64url has no padding and the URL-safe alphabet, and round-trips")
    func base64url() {
        #expect(Base64URL.encode([]) == "")
        #expect(Base64URL.encode(Array("f".utf8)) == "Zg")
        #expect(Base64URL.encode(Array("fo".utf8)) == "Zm8")
        #expect(Base64URL.encode(Array("foo".utf8)) == "Zm9v")
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.encode([0x03, 0xEF, 0xFF]) == "A-__")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
        #expect(Base64URL.decode("Zm8") == Array("fo".utf8))
        #expect(Base64URL.decode("Zm8=") == nil)
        #expect(Base64URL.decode("Zm+v") == nil)
        #expect(Base64URL.decode("Z") == nil)
        var random = SplitMix64(seed: 7638)
        for length in 0..<64 {
            let bytes = random.bytes(length)
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test("the JWK thumbprint of RFC 7638 §3.1's RSA example")
    func rfc7638Example() {
        let n =
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        let members = ["kty": "RSA", "n": n, "e": "AQAB"]
        #expect(JWK.canonicalJSON(members) == "{\"e\":\"AQAB\",\"kty\":\"RSA\",\"n\":\"\(n)\"}")
        #expect(JWK.thumbprint(of: members) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    @Test("EC thumbprints and key authorizations agree with Python's hashlib")
    func ecThumbprintAgainstPython() throws {
        let keys = (0..<3).map { _ in ACMEAccountKey() }
        let script = """
            import base64, hashlib, json, sys
            for line in sys.stdin:
                x, y = line.split()
                canonical = json.dumps({"kty": "EC", "crv": "P-256", "x": x, "y": y}, sort_keys=True, separators=(",", ":"))
                print(base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).decode().rstrip("="))
            """
        let input = keys.map { "\($0.jwk.x) \($0.jwk.y)\n" }.joined()
        let out = try Harness.run("/usr/bin/env", ["python3", "-c", script], stdin: Array(input.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.split(separator: "\n").map(String.init) == keys.map(\.thumbprint))
        for key in keys {
            #expect(key.jwk.crv == "P-256" && key.jwk.kty == "EC")
            #expect(Base64URL.decode(key.jwk.x)?.count == 32 && Base64URL.decode(key.jwk.y)?.count == 32)
            #expect(key.keyAuthorization(token: "tok-EN_1") == "tok-EN_1." + key.thumbprint)
        }
    }

    @Test("an account key survives its PEM")
    func accountKeyPEM() throws {
        let key = ACMEAccountKey()
        #expect(key.pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try ACMEAccountKey(pem: key.pem)
        #expect(again.thumbprint == key.thumbprint)
        #expect(throws: (any Error).self) { try ACMEAccountKey(pem: "not a key") }
    }

    struct Header: Decodable {
        var alg: String
        var jwk: JWK?
        var kid: String?
        var nonce: String
        var url: String
    }

    /// The protected header, payload and signature of a JWS body, with the signature checked.
    static func open(_ body: [UInt8], key: ACMEAccountKey) throws -> (header: Header, payload: [UInt8], valid: Bool, fields: [String]) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: String])
        let protected = try #require(object["protected"]), payload = try #require(object["payload"])
        let signatureText = try #require(object["signature"])
        let signature = try #require(Base64URL.decode(signatureText))
        let headerBytes = try #require(Base64URL.decode(protected))
        let header = try JSONDecoder().decode(Header.self, from: Data(headerBytes))
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        let valid = key.privateKey.publicKey.isValidSignature(ecdsa, for: Array((protected + "." + payload).utf8))
        let payloadBytes = try #require(Base64URL.decode(payload))
        return (header, payloadBytes, valid, object.keys.sorted())
    }

    @Test("a JWS with jwk: flattened JSON, ES256 over protected.payload, nonce and URL in the header")
    func jwsWithJWK() throws {
        let key = ACMEAccountKey()
        let body = try JWS.sign(payload: Array("{\"a\":1}".utf8), url: "https://ca.test/new-acct", nonce: "n0nce", key: key, keyID: .jwk)
        let opened = try Self.open(body, key: key)
        #expect(opened.fields == ["payload", "protected", "signature"])
        #expect(opened.valid)
        #expect(opened.header.alg == "ES256")
        #expect(opened.header.jwk == key.jwk && opened.header.kid == nil)
        #expect(opened.header.nonce == "n0nce" && opened.header.url == "https://ca.test/new-acct")
        #expect(opened.payload == Array("{\"a\":1}".utf8))
        let other = ACMEAccountKey()
        #expect(try !Self.open(body, key: other).valid)
    }

    @Test("a POST-as-GET JWS with kid has an empty payload")
    func jwsWithKID() throws {
        let key = ACMEAccountKey()
        let body = try JWS.sign(payload: nil, url: "https://ca.test/order/1", nonce: "abc", key: key, keyID: .kid("https://ca.test/acct/7"))
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("\"payload\":\"\""))
        let opened = try Self.open(body, key: key)
        #expect(opened.valid)
        #expect(opened.header.kid == "https://ca.test/acct/7" && opened.header.jwk == nil)
        #expect(opened.payload.isEmpty)
    }
}
