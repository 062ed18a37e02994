import Foundation

/// The directory object (RFC 8555 §7.1.1): the URLs of the server's resources.
struct ACMEDirectory: Decodable, Sendable {
    var newNonce: String
    var newAccount: String
    var newOrder: String
    var meta: Meta?

    struct Meta: Decodable, Sendable {
        var termsOfService: String?
        var externalAccountRequired: Bool?
    }
}

/// An identifier in an order or authorization (RFC 8555 §9.7.7): type `dns` and a name.
package struct ACMEIdentifier: Codable, Sendable, Equatable {
    package var type: String
    package var value: String

    package init(type: String = "dns", value: String) {
        self.type = type
        self.value = value
    }
}

/// The account object's fields the client sends (RFC 8555 §7.3).
struct ACMENewAccount: Encodable {
    var termsOfServiceAgreed = true
    var contact: [String]?
}

/// The newOrder request (RFC 8555 §7.4).
struct ACMENewOrder: Encodable {
    var identifiers: [ACMEIdentifier]
}

/// The finalize request: the CSR's DER, base64url (RFC 8555 §7.4).
struct ACMEFinalize: Encodable {
    var csr: String
}

/// An order (RFC 8555 §7.1.3).
struct ACMEOrder: Decodable, Sendable {
    var status: String
    var identifiers: [ACMEIdentifier]?
    var authorizations: [String]
    var finalize: String
    var certificate: String?
    var error: ACMEProblem?
}

/// An authorization (RFC 8555 §7.1.4).
struct ACMEAuthorization: Decodable, Sendable {
    var status: String
    var identifier: ACMEIdentifier
    var challenges: [ACMEChallenge]
    var wildcard: Bool?
}

/// A challenge (RFC 8555 §7.1.5, §8).
struct ACMEChallenge: Decodable, Sendable {
    var type: String
    var url: String
    var status: String
    var token: String?
    var error: ACMEProblem?
}
