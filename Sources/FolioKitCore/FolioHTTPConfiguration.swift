import FolioHTTPFields
import FolioPublished
import FolioSupport
import Foundation

/// How a store talks to its edge: fields every request carries (an auth token for private
/// content), the timeout of one request, extra certificate authorities, and the app's context.
public struct FolioHTTPConfiguration: Sendable {
    /// Header fields added to every request (`Authorization: Bearer …`).
    public var headers: [String: String]
    /// How long one request may take, connection included.
    public var timeout: Duration
    /// PEM texts of certificate authorities trusted besides the system's (a staging edge).
    public var certificateAuthorities: [String]
    /// What the app says about itself on every request, in the `Folio-Client` field.
    public var context: FolioClientContext?

    public init(
        headers: [String: String] = [:], timeout: Duration = .seconds(15), certificateAuthorities: [String] = [],
        context: FolioClientContext? = nil
    ) {
        self.headers = headers
        self.timeout = timeout
        self.certificateAuthorities = certificateAuthorities
        self.context = context
    }

    /// The fields every request carries, in order: User-Agent, `Folio-Client`, then `headers`
    /// sorted by name.
    package var requestFields: [(String, String)] {
        var fields = [("User-Agent", "folio/\(folioVersion)")]
        if let context, !context.fieldValue.isEmpty { fields.append((FolioClientContext.fieldName, context.fieldValue)) }
        fields += headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return fields
    }

    /// Refuses a field name that is not a token, a value with control characters (which could
    /// split the request), a field the sync sets itself, and a timeout that is not positive.
    package func validate() throws(FolioError) {
        let reserved: Set<String> = [
            "host", "accept-encoding", "if-none-match", "connection", "content-length", "transfer-encoding", "user-agent",
            "folio-client",
        ]
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(HeaderText.isTokenChar) else {
                throw FolioError(.invalidContent, "the header name '\(name)' is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~)")
            }
            guard !reserved.contains(name.lowercased()) else {
                throw FolioError(.invalidContent, "the header '\(name)' is set by the sync itself (the app's context goes in `context`); remove it")
            }
            guard value.utf8.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
                throw FolioError(.invalidContent, "the value of the header '\(name)' has a control character (CR, LF, …)")
            }
        }
        guard timeout > .zero else { throw FolioError(.invalidContent, "the request timeout must be positive, not \(timeout)") }
        for (i, pem) in certificateAuthorities.enumerated() {
            guard !PEM.certificates(pem).isEmpty else {
                throw FolioError(.invalidContent, "certificate authority \(i + 1) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
        }
    }
}

/// The app's context, sent on every request as one structured field (RFC 8941 dictionary):
///
///     Folio-Client: app="3.2.1", platform="ios", os="17.4", locale="fr-FR"
///
/// so that the edge's access log, or a server behind it, can count and decide by it. Keys
/// without a value are left out.
public struct FolioClientContext: Sendable, Hashable {
    /// The field's name.
    public static let fieldName = "Folio-Client"

    public var appVersion: String?
    public var platform: String?
    public var osVersion: String?
    public var locale: String?
    /// The user's country (ISO 3166-1, like `FR`): targeted releases only, never sent.
    public var country: String?

    public init(appVersion: String? = nil, platform: String? = nil, osVersion: String? = nil, locale: String? = nil, country: String? = nil) {
        self.appVersion = appVersion
        self.platform = platform
        self.osVersion = osVersion
        self.locale = locale
        self.country = country
    }

    /// What targeted releases are matched against.
    package var releaseContext: ReleaseContext {
        ReleaseContext(appVersion: appVersion, platform: platform, osVersion: osVersion, locale: locale, country: country)
    }

    /// The field value; printable ASCII only, `"` and `\` escaped.
    public var fieldValue: String {
        [("app", appVersion), ("platform", platform), ("os", osVersion), ("locale", locale)]
            .compactMap { key, value in value.map { "\(key)=\(Self.quoted($0))" } }
            .joined(separator: ", ")
    }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars where u.value >= 0x20 && u.value < 0x7F {
            if u == "\"" || u == "\\" { out += "\\" }
            out.unicodeScalars.append(u)
        }
        return out + "\""
    }
}
